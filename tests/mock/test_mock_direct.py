"""``MockApp.direct``: the answer the mock's HTTP/1.1 connection computes without ASGI
messages must be the answer the ASGI path gives, on every protocol's create route,
including generateContent's route with path parameters and the refusals of its path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate.mock import ScriptBuilder, create_app

from .conftest import AUTH, asgi_call, path_of

CALLS = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
BODIES: dict[str, dict[str, Any]] = {
    "openai_responses": {"model": "m", "stream": True, "input": "hi"},
    "anthropic_messages": {
        "model": "m", "max_tokens": 64, "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    },
    "gemini_interactions": {"model": "m", "stream": True, "input": "hi"},
    "gemini_generate_content": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    "openai_chat_completions": {
        "model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
    },
}  # fmt: skip


def _app(protocol: str) -> Any:
    return create_app(ScriptBuilder(seed=5).turn(protocol, calls=list(CALLS)).build())


def _scope(path: str, headers: dict[str, str]) -> dict[str, Any]:
    route, _, query = path.partition("?")
    pairs = [(k.encode(), v.encode()) for k, v in headers.items()]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": route, "raw_path": route.encode(),
        "query_string": query.encode(), "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *pairs, (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1234), "server": ("127.0.0.1", 80), "state": {},
    }  # fmt: skip


def _direct(app: Any, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    response = app.direct(_scope(path, headers), body)
    assert response is not None, f"{path} took the ASGI path"
    return response.status_code, bytes(response.body)


@pytest.mark.parametrize("protocol", sorted(BODIES))
def test_every_create_route_is_answered_directly_as_the_asgi_path_answers(protocol: str) -> None:
    path = path_of(protocol, stream=True)
    body = json.dumps(BODIES[protocol]).encode()
    status, sent = _direct(_app(protocol), path, body, AUTH[protocol])
    asgi_status, _, bodies = asgi_call(_app(protocol), path, body, AUTH[protocol])
    assert (status, sent) == (asgi_status, b"".join(bodies))
    assert status == 200
    assert b"get_weather" in sent


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/gemini/v2/models/m:streamGenerateContent?alt=sse", 404),  # unknown version
        ("/gemini/v1/models/m:embedContent", 404),  # unknown method
        ("/gemini/v1/models/m:streamGenerateContent", 400),  # the SSE framing only
        ("/gemini/v1/models/m:streamGenerateContent?alt=sse&alt=json", 400),  # the last counts
        ("/gemini/v1/models/m:streamGenerateContent?key=k&alt=sse", 200),
    ],
)
def test_generate_content_path_checks_run_on_the_direct_path(path: str, status: int) -> None:
    protocol = "gemini_generate_content"
    body = json.dumps(BODIES[protocol]).encode()
    app = _app(protocol)
    got, sent = _direct(app, path, body, AUTH[protocol])
    asgi_status, _, bodies = asgi_call(_app(protocol), path, body, AUTH[protocol])
    assert (got, sent) == (status, b"".join(bodies))
    assert asgi_status == status
    (entry,) = app.state.callgate.journal.entries()
    assert entry.outcome == ("matched" if status == 200 else "rejected")


def test_a_path_no_route_serves_is_left_to_the_router() -> None:
    app = _app("gemini_generate_content")
    body = json.dumps(BODIES["gemini_generate_content"]).encode()
    scope = _scope("/gemini/v1/files/m:upload", AUTH["gemini_generate_content"])
    assert app.direct(scope, body) is None
