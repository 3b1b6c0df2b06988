"""The README's SDK recipe on a container response (issue 10, B4): the anthropic SDK's
``to_dict()`` keeps ``container.expires_at`` as a datetime, which callgate refuses with an
error that names the fix; ``to_dict(mode="json")`` gives the same turn as the wire bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import JSONError
from callgate.anthropic_messages import Parser, parse_response, parse_stream

from .test_sdk_equivalence import sdk_stream
from .wire import CONTAINER_BODY as BODY
from .wire import FIXTURE_DIR

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

FIRST = (FIXTURE_DIR / "programmatic_first.sse").read_bytes()
HINT = 'to_dict(mode="json")'


def sdk_message(body: dict[str, Any]) -> Any:
    """``client.messages.create()`` (strict validation) answering with ``body``."""

    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "application/json"}, json=body)

    client = anthropic.Anthropic(
        api_key="test-key",
        base_url="http://callgate.test",
        max_retries=0,
        _strict_response_validation=True,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    return client.messages.create(
        model="claude-test-model", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    )


def test_sdk_message_to_dict_keeps_a_datetime_and_the_error_names_the_fix() -> None:
    message = sdk_message(BODY)
    assert type(message.container.expires_at).__name__ == "datetime"
    with pytest.raises(JSONError, match="datetime") as info:
        parse_response(message.to_dict())
    assert HINT in str(info.value)
    assert info.value.provider == "anthropic"


def test_sdk_message_to_dict_json_mode_gives_the_body_turn() -> None:
    turn = parse_response(sdk_message(BODY).to_dict(mode="json"))
    assert turn == parse_response(json.dumps(BODY))
    assert turn.container_id == "container_9"
    assert [(c.call_id, c.programmatic) for c in turn.calls] == [("toolu_9", True)]


def test_sdk_stream_events_to_dict_fail_with_the_fix_named() -> None:
    events, _ = sdk_stream(FIRST, strict=True, mode="python")
    parser = Parser()
    *head, delta, _stop = events
    assert "container" in delta["delta"]
    for event in head:
        parser.feed_event(event)
    with pytest.raises(JSONError, match="datetime") as info:
        parser.feed_event(delta)
    assert HINT in str(info.value)
    assert info.value.wire_type == "message_delta"


def test_sdk_stream_events_to_dict_json_mode_give_the_wire_turn() -> None:
    events, final = sdk_stream(FIRST, strict=True)
    parser = Parser()
    for event in events:
        parser.feed_event(event)
    turn = parser.finish()
    assert turn == parse_stream(FIRST)
    assert turn.container_id == final["container"]["id"] == "container_011CgPqT"
    assert final["container"] == turn.message["container"]
