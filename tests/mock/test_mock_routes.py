"""Unknown paths and methods: a journaled JSON 404/405 in the provider's shape."""

from __future__ import annotations

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder

from .conftest import AUTH


@pytest.fixture(scope="module")
def server() -> MockServer:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    with MockServer(script) as srv:
        yield srv


@pytest.mark.parametrize(
    ("method", "path", "status", "protocol"),
    [
        ("POST", "/openai/v1/completions", 404, "openai_responses"),
        ("GET", "/openai/v1/chat/completions", 405, "openai_chat_completions"),
        ("GET", "/openai/v1/responses", 405, "openai_responses"),
        ("POST", "/azure-openai/openai/v1/chat", 404, "openai_responses"),
        ("POST", "/anthropic/v1/complete", 404, "anthropic_messages"),
        ("PUT", "/anthropic/v1/messages", 405, "anthropic_messages"),
        ("GET", "/gemini/v1/models/x:generateContent", 405, "gemini_generate_content"),
        ("POST", "/gemini/v2/interactions", 404, "gemini_interactions"),
        ("GET", "/nowhere", 404, None),
        ("POST", "/_callgate/journal", 405, None),
    ],
)
def test_unknown_route_gets_a_journaled_json_error_naming_the_routes(
    server: MockServer, method: str, path: str, status: int, protocol: str | None
) -> None:
    headers = {**AUTH.get(protocol or "", {}), "x-callgate-test-id": f"{method} {path}"}
    response = httpx.request(method, f"{server.url}{path}", headers=headers, timeout=10)
    assert response.status_code == status
    body = response.json()
    if protocol == "anthropic_messages":
        assert body["type"] == "error"
        assert body["error"]["type"] == ("not_found_error" if status == 404 else "api_error")
    elif protocol is not None and protocol.startswith("gemini_"):
        assert body["error"]["code"] == status
    elif protocol is None:
        assert body["error"]["code"] == status
        assert "POST /openai/v1/responses" in body["error"]["routes"]
    message = body["error"]["message"]
    if path != "/gemini/v2/interactions":
        assert "POST /anthropic/v1/messages" in message
        assert "GET /_callgate/journal" in message
    if status == 405:
        assert "allow" in response.headers
    (entry,) = server.journal.entries(test_id=f"{method} {path}")
    assert (entry.method, entry.path, entry.status) == (method, path, status)
    assert entry.outcome == "rejected"
    assert entry.protocol == protocol
