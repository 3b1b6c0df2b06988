"""The provider records: one per served protocol, and what moving the knowledge there fixed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import _protocols
from callgate.mock import PROTOCOLS, VALIDATION_CHECKS, ScriptBuilder, call, create_app
from callgate.mock._providers import protocol_of, provider
from callgate.sse import SSEDecoder

from .conftest import AUTH, PATHS, asgi_call


def test_every_served_protocol_is_a_registered_room_with_its_own_provider() -> None:
    assert set(PROTOCOLS) <= set(_protocols.PROTOCOLS)
    assert [p for p in _protocols.PROTOCOLS if p in PROTOCOLS] == list(PROTOCOLS)
    for protocol in PROTOCOLS:
        record = provider(protocol)
        assert record.protocol == protocol
        endpoint = record.endpoints[0]
        path = endpoint.fast[0] if endpoint.fast else record.prefixes[0] + "m:generateContent"
        assert protocol_of(path) == protocol
    assert tuple(c for p in PROTOCOLS for c in provider(p).checks) == VALIDATION_CHECKS


def test_a_protocol_the_mock_does_not_serve_has_no_provider() -> None:
    with pytest.raises(KeyError):
        provider("no_such_protocol")


def _unstored_gemini(fault: dict[str, Any]) -> list[Any]:
    script = (
        ScriptBuilder(seed=5)
        .turn("gemini_interactions", calls=[call("get_weather", city="Paris")], fault=fault)
        .build()
    )
    body = {"model": "m", "stream": True, "store": False}
    status, _, sent = asgi_call(
        create_app(script), PATHS["gemini_interactions"], body, AUTH["gemini_interactions"]
    )
    assert status == 200
    return [json.loads(e.data) for e in SSEDecoder().feed(b"".join(sent))]


def test_an_unstored_gemini_stream_takes_an_error_event_without_event_ids() -> None:
    # The fault layer read the first event's event_id, which an unstored stream has not.
    events = _unstored_gemini({"type": "error_event", "after": 2, "message": "boom"})
    assert events[-1] == {
        "event_type": "error",
        "error": {"code": "api_error", "message": "boom"},
    }
    assert all("event_id" not in event for event in events)


def test_an_unstored_gemini_stream_can_be_truncated() -> None:
    events = _unstored_gemini({"type": "truncate"})
    assert events[-1]["interaction"]["status"] == "incomplete"
    assert all("event_id" not in event for event in events)


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/anthropic/v1/other", {"type": "request_too_large"}),
        ("/gemini/v1/interactions/abc/cancel", {"code": "invalid_request"}),
    ],
)
def test_a_declared_oversized_body_off_the_create_route_gets_the_providers_413(
    path: str, shape: dict[str, str]
) -> None:
    # Only the create routes used the provider's 413 type; the early refusal did not.
    script = ScriptBuilder().turn("anthropic_messages", text="hi").build()
    app = create_app(script, max_body_bytes=16)
    headers = {"content-length": "1000"}
    status, _, sent = asgi_call(app, path, b"x" * 1000, headers)
    assert status == 413
    error = json.loads(b"".join(sent))["error"]
    assert shape.items() <= error.items()


def test_a_thinking_block_cut_before_its_signature_is_not_a_signed_block() -> None:
    # The mock's own lenient accumulator indexed the half-sent thinking text with an empty
    # signature, so replaying it passed; the room's parser (what a client holds) has none.
    script = (
        ScriptBuilder(seed=2)
        .turn(
            "anthropic_messages",
            reasoning={"summary": "Weather first.", "signature": "c2lnbmVk"},
            calls=[call("get_weather", city="Paris")],
            chunking={"fixed": 4},
            disconnect_after=4,
        )
        .turn("anthropic_messages", text="ok")
        .build()
    )
    app = create_app(script)
    first = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    status, _, _ = asgi_call(app, PATHS["anthropic_messages"], first, AUTH["anthropic_messages"])
    assert status == 200
    half = {"type": "thinking", "thinking": "Weather ", "signature": ""}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [half]},
        {"role": "user", "content": "go on"},
    ]
    status, _, sent = asgi_call(
        app, PATHS["anthropic_messages"], {"model": "m", "messages": messages},
        AUTH["anthropic_messages"],
    )  # fmt: skip
    assert status == 400
    assert "Invalid `signature`" in json.loads(b"".join(sent))["error"]["message"]
