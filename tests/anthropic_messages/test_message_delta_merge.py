"""message_delta cannot rewrite the message: message fields come from `delta` only (type
checked), usage from `usage` only, and every other key is telemetry that the gate never
reads (issue 10, A1)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from callgate import SchemaError, SequenceError
from callgate.anthropic_messages import Parser, parse_response, parse_stream

from .wire import (
    FIXTURE_DIR,
    MESSAGE_STOP,
    message_delta,
    message_start,
    sse,
    text_block,
    tool_turn_events,
)

SIBLINGS = (FIXTURE_DIR / "max_tokens_siblings.sse").read_bytes()
DELTA_LINE = (
    b'data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},'
)


def with_top_level_stop_reason(data: bytes, value: str = '"tool_use"') -> bytes:
    assert DELTA_LINE in data
    return data.replace(DELTA_LINE, DELTA_LINE + b'"stop_reason":' + value.encode() + b",")


def test_top_level_stop_reason_beside_max_tokens_delta_releases_nothing() -> None:
    data = with_top_level_stop_reason(SIBLINGS)
    turn = parse_stream(data)
    assert turn.stop_reason == "max_tokens"
    assert turn.message["stop_reason"] == "max_tokens"
    assert turn.calls == ()
    assert [r.reason for r in turn.recovery_calls] == ["max_tokens", "invalid_json"]
    assert turn.telemetry == {"stop_reason": "tool_use"}
    # Same turn as without the sibling key, except for the telemetry it is kept in.
    plain = parse_stream(SIBLINGS)
    assert dataclasses.replace(turn, telemetry={}, digest="") == dataclasses.replace(
        plain, digest=""
    )


def test_top_level_stop_reason_through_feed_event_releases_nothing() -> None:
    events = tool_turn_events(("c1", "f", ["{}"]), reason="max_tokens")
    events[-2] = dict(events[-2], stop_reason="tool_use", stop_sequence=["not", "str"])
    parser = Parser()
    for event in events:
        parser.feed_event(event)
    turn = parser.finish()
    assert (turn.stop_reason, turn.calls) == ("max_tokens", ())
    assert turn.known_stop_reason
    assert turn.telemetry == {"stop_reason": "tool_use", "stop_sequence": ["not", "str"]}


@pytest.mark.parametrize(
    "key", ["id", "model", "role", "content", "stop_details", "container", "x"]
)
def test_top_level_keys_never_reach_the_message(key: str) -> None:
    plain = parse_stream(
        sse(message_start(), *text_block(0, "hi"), message_delta("end_turn"), MESSAGE_STOP)
    )
    event = message_delta("end_turn")
    event[key] = {"planted": True}
    turn = parse_stream(sse(message_start(), *text_block(0, "hi"), event, MESSAGE_STOP))
    assert turn.message == plain.message
    assert turn.content == plain.content
    assert turn.telemetry == {key: {"planted": True}}


def test_unknown_delta_keys_are_telemetry_not_message_fields() -> None:
    event = message_delta("end_turn", future_field=1, stop_details=None)
    turn = parse_stream(sse(message_start(), *text_block(0, "hi"), event, MESSAGE_STOP))
    assert "future_field" not in turn.message
    assert turn.telemetry == {"delta": {"future_field": 1}}


def test_telemetry_is_covered_by_the_digest() -> None:
    data = with_top_level_stop_reason(SIBLINGS)
    assert parse_stream(data).digest != parse_stream(SIBLINGS).digest


@pytest.mark.parametrize("value", ['["tool_use"]', '{"a":1}', "7", "true"])
def test_non_string_stop_reason_in_delta_is_a_schema_error(value: str) -> None:
    bad = SIBLINGS.replace(b'"stop_reason":"max_tokens"', b'"stop_reason":' + value.encode())
    with pytest.raises(SchemaError, match="stop_reason is not a string"):
        parse_stream(bad)


@pytest.mark.parametrize("value", [["tool_use"], {"a": 1}, 7])
def test_non_string_stop_reason_in_a_body_is_a_schema_error(value: Any) -> None:
    body = parse_stream(SIBLINGS).to_message()
    body["stop_reason"] = value
    with pytest.raises(SchemaError, match="stop_reason is not a string"):
        parse_response(body)


def test_known_stop_reason_never_raises_on_a_non_string() -> None:
    turn = dataclasses.replace(parse_stream(SIBLINGS), stop_reason=["tool_use"])  # type: ignore[arg-type]
    assert turn.known_stop_reason is False


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("stop_sequence", 5, "stop_sequence is not a string"),
        ("stop_details", "refusal", "stop_details is not a object"),
        ("container", "c-1", "container is not a object"),
        (
            "container",
            {"expires_at": "2026-12-01T10:30:00Z"},
            "container lacks required field 'id'",
        ),
        ("container", {"id": "c-1", "expires_at": 5}, "field 'expires_at' has type int"),
    ],
)
def test_delta_message_fields_are_type_checked(field: str, value: Any, message: str) -> None:
    event = message_delta("end_turn", **{field: value})
    with pytest.raises(SchemaError, match=message):
        parse_stream(sse(message_start(), event, MESSAGE_STOP))


def test_delta_fields_that_pass_are_set_and_a_null_keeps_an_earlier_value() -> None:
    container = {"id": "c-1", "expires_at": "2026-12-01T10:30:00Z"}
    events = [
        message_start(),
        message_delta("end_turn", out=5, container=container),
        message_delta("end_turn", out=6, container=None),
        MESSAGE_STOP,
    ]
    turn = parse_stream(sse(*events))
    assert turn.message["container"] == container
    assert turn.container_id == "c-1"
    assert turn.telemetry == {}


@pytest.mark.parametrize("key", ["input_tokens", "cache_read_input_tokens", "output_tokens"])
def test_usage_counters_are_telemetry_kept_raw(key: str) -> None:
    event = message_delta("end_turn")
    event["usage"][key] = "12"
    turn = parse_stream(sse(message_start(), event, MESSAGE_STOP))
    assert (turn.usage[key], turn.warnings) == ("12", ())


@pytest.mark.parametrize("usage", [None, "n/a"])
def test_a_message_delta_without_usage_parses(usage: object) -> None:
    event = message_delta("end_turn")
    if usage is None:
        del event["usage"]
    else:
        event["usage"] = usage
    turn = parse_stream(sse(message_start(), event, MESSAGE_STOP))
    assert turn.usage == message_start()["message"]["usage"]
    assert turn.warnings == (() if usage is None else ("message_delta usage is not an object",))


def test_delta_still_cannot_carry_identity_fields() -> None:
    event = message_delta("end_turn", model="other")
    with pytest.raises(SchemaError, match="identity or content"):
        parse_stream(sse(message_start(), event, MESSAGE_STOP))


def test_stop_reason_change_is_still_a_sequence_error_from_delta_only() -> None:
    second = message_delta(None, out=11)
    second["stop_reason"] = "tool_use"  # top level: telemetry, not a change
    turn = parse_stream(sse(message_start(), message_delta("end_turn"), second, MESSAGE_STOP))
    assert turn.stop_reason == "end_turn"
    with pytest.raises(SequenceError):
        parse_stream(
            sse(message_start(), message_delta("end_turn"), message_delta("tool_use"), MESSAGE_STOP)
        )


def test_fixture_line_used_by_the_repro_is_the_real_one() -> None:
    # Guards the byte-level repro above against a fixture rewrite.
    line = [ln for ln in SIBLINGS.split(b"\n") if ln.startswith(DELTA_LINE)]
    assert len(line) == 1
    assert json.loads(line[0][6:])["delta"]["stop_reason"] == "max_tokens"
