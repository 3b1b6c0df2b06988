"""Public API behaviour: parser lifecycle, error context, parse_response, the Turn."""

from __future__ import annotations

import dataclasses

import pytest

from callgate import (
    CallgateError,
    JSONError,
    Limits,
    ProviderError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.openai_responses import Parser, State, Turn, parse_response, parse_stream

from .wire import Stream, fc_item, response, sse


def call_stream() -> Stream:
    return (
        Stream("resp_api")
        .created()
        .call(0, fc_item("fc_0", "call_0", "get_weather", '{"city":"Paris"}'))
        .completed()
    )


def test_parse_stream_accepts_bytes_and_chunk_iterables() -> None:
    data = sse(call_stream().events)
    whole = parse_stream(data)
    assert parse_stream(iter([data[:7], data[7:300], data[300:]])) == whole
    assert parse_stream(bytearray(data)) == whole
    with pytest.raises(UsageError):
        parse_stream(data.decode())  # type: ignore[arg-type]


def test_bad_constructor_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        Parser(baseline="2025-01")
    with pytest.raises(UsageError):
        Parser(limits={"max_json_depth": 3})  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        Parser().feed_event([1, 2])  # type: ignore[arg-type]
    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_bytes("data: {}")  # type: ignore[arg-type]
    parser.feed_bytes(sse(call_stream().events))  # misuse did not poison the parser
    assert parser.finish().calls[0].call_id == "call_0"


def test_failed_parser_stays_failed_with_the_same_error() -> None:
    parser = Parser()
    events = call_stream().events
    events[3]["sequence_number"] = 0
    for event in events[:3]:
        parser.feed_event(event)
    with pytest.raises(SequenceError) as first:
        parser.feed_event(events[3])
    assert parser.state is State.FAILED
    with pytest.raises(SequenceError) as again:
        parser.feed_bytes(b"data: {}\n\n")
    assert again.value is first.value
    with pytest.raises(SequenceError) as at_finish:
        parser.finish()
    assert at_finish.value is first.value


def test_finish_is_idempotent_and_feeding_after_it_is_a_usage_error() -> None:
    parser = Parser()
    parser.feed_bytes(sse(call_stream().events))
    turn = parser.finish()
    assert parser.finish() is turn
    with pytest.raises(UsageError):
        parser.feed_bytes(b"")


def test_errors_carry_provider_event_index_and_wire_type() -> None:
    events = call_stream().events
    events[3]["delta"] = 7
    with pytest.raises(SchemaError) as info:
        parse_stream(sse(events))
    err = info.value
    assert (err.provider, err.event_index, err.wire_type) == (
        "openai",
        3,
        "response.function_call_arguments.delta",
    )


def test_invalid_json_event_is_a_json_error() -> None:
    with pytest.raises(JSONError):
        parse_stream(b'event: response.created\ndata: {"type": "response.created",}\n\n')


def test_non_object_event_is_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        parse_stream(b"data: [1]\n\n")


def test_event_count_limit_applies_to_decoded_events() -> None:
    parser = Parser(limits=Limits(max_events_per_stream=3))
    events = call_stream().events
    for event in events[:3]:
        parser.feed_event(event)
    with pytest.raises(CallgateError) as info:
        parser.feed_event(events[3])
    assert info.value.event_index == 3


def test_turn_is_frozen_and_keeps_raw_objects() -> None:
    turn = parse_stream(sse(call_stream().events))
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.status = "failed"  # type: ignore[misc]
    call = turn.calls[0]
    assert (call.call_id, call.name, call.item_id, call.output_index) == (
        "call_0",
        "get_weather",
        "fc_0",
        0,
    )
    assert turn.response is not None
    assert turn.response["output"] == list(turn.items)
    assert turn.usage == turn.response["usage"]
    assert turn.error is None
    assert turn.baseline == "2026-11"
    assert len(turn.digest) == 64


def test_feed_event_copies_its_input() -> None:
    events = call_stream().events
    parser = Parser()
    for event in events:
        parser.feed_event(event)
    events[-1]["response"]["output"][0]["arguments"] = '{"city":"Rome"}'
    assert parser.finish().calls[0].arguments == {"city": "Paris"}


# -- parse_response ----------------------------------------------------------------------


def body(status: str = "completed", **extra: object) -> dict:
    out = [fc_item("fc_0", "call_0", "get_weather", '{"city":"Paris"}')]
    return response("resp_body", status, out) | extra


def test_parse_response_releases_calls_of_a_completed_body() -> None:
    turn = parse_response(body())
    assert isinstance(turn, Turn)
    assert [(c.call_id, c.arguments) for c in turn.calls] == [("call_0", {"city": "Paris"})]


def test_parse_response_copies_its_input() -> None:
    raw = body()
    turn = parse_response(raw)
    raw["output"][0]["name"] = "other"
    assert turn.items[0]["name"] == "get_weather"


@pytest.mark.parametrize("status", ["failed", "incomplete", "cancelled"])
def test_parse_response_refuses_unsuccessful_bodies(status: str) -> None:
    with pytest.raises(ProviderError) as info:
        parse_response(body(status, incomplete_details={"reason": "max_output_tokens"}))
    assert info.value.turn is not None
    assert info.value.turn.calls == ()
    assert len(info.value.turn.items) == 1


def test_parse_response_refuses_non_terminal_bodies() -> None:
    with pytest.raises(SequenceError):
        parse_response(body("in_progress"))


def test_parse_response_applies_the_item_gate() -> None:
    raw = body()
    raw["output"][0]["caller"] = {"type": "program", "caller_id": "p1"}
    with pytest.raises(UnsupportedProviderState):
        parse_response(raw)
    raw = body()
    raw["output"][0]["arguments"] = "[]"
    with pytest.raises(JSONError):
        parse_response(raw)
    with pytest.raises(UsageError):
        parse_response(3)  # type: ignore[arg-type]
    with pytest.raises(SchemaError):  # JSON text is a body too (the shared contract)
        parse_response("{}")
