"""The official anthropic SDK decodes every golden stream (messages.stream() over an httpx2
MockTransport); its raw events' dicts fed to ``feed_event`` give the same turn as our own
byte parser, and the SDK's final content agrees with ours where the SDK keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from callgate.anthropic_messages import Parser, parse_stream
from callgate.contracts import Fixture

from .wire import wire_fixtures

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

RAW_TYPES = {
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
}
FIXTURES = wire_fixtures()


def sdk_stream(
    data: bytes, *, strict: bool, mode: str = "json"
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run ``data`` through ``client.messages.stream()``; return the raw events' dicts and
    the SDK's final message as a dict (``to_dict(mode=mode)``, the README's recipe by
    default). ``strict`` turns on the SDK's response validation."""

    def handler(request: Any) -> Any:
        assert request.url.path == "/v1/messages"
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "request-id": "req-test"},
            content=data,
        )

    client = anthropic.Anthropic(
        api_key="test-key",
        base_url="http://callgate.test",
        max_retries=0,
        _strict_response_validation=strict,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    events: list[dict[str, Any]] = []
    with client.messages.stream(
        model="claude-test-model",
        max_tokens=100,
        messages=[{"role": "user", "content": "hi"}],
    ) as stream:
        for event in stream:
            if event.type in RAW_TYPES:
                events.append(event.to_dict(mode=mode))
        final = stream.get_final_message().to_dict(mode=mode)
    return events, final


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_sdk_event_dicts_give_the_same_turn(fixture: Fixture) -> None:
    ours = parse_stream(fixture.data, baseline=fixture.contract_revision)
    # The strict client also proves the fixture is valid for the SDK's own schema; it
    # rejects stop reasons it does not know, so those run lenient.
    events, final = sdk_stream(fixture.data, strict=ours.known_stop_reason)
    parser = Parser(baseline=fixture.contract_revision)
    for event in events:
        parser.feed_event(event)
    turn = parser.finish()
    assert turn.digest == ours.digest
    assert turn == ours
    # Cross-check our accumulation against the SDK's snapshot. The SDK drops the raw
    # input text and keeps jiter's partial parse, so recovery calls differ by design.
    recovered = {r.index for r in ours.recovery_calls if r.reason != "max_tokens"}
    for index, block in enumerate(ours.content):
        if index not in recovered:
            assert final["content"][index] == block
    assert final["stop_reason"] == ours.stop_reason
    assert final["usage"] == ours.usage


def test_strict_sdk_rejects_an_unknown_stop_reason_that_callgate_keeps_raw() -> None:
    (fixture,) = [f for f in FIXTURES if f.name == "unknown_stop_reason"]
    with pytest.raises(anthropic.APIResponseValidationError):
        sdk_stream(fixture.data, strict=True)
    assert parse_stream(fixture.data).stop_reason == "some_future_reason"
