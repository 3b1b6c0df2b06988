"""Red-team cases: each test names the attack or drift it proves is closed."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import (
    CallgateError,
    FramingError,
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.anthropic_messages import Parser, State, Turn, parse_stream

from .wire import (
    MESSAGE_STOP,
    PING,
    block_start,
    block_stop,
    delta,
    frame,
    json_delta,
    message_delta,
    message_start,
    sse,
    text_block,
    text_delta,
    tool_block,
    tool_turn_events,
)


def fails(exc: type[CallgateError], *events: Any, data: bytes | None = None) -> CallgateError:
    with pytest.raises(exc) as info:
        parse_stream(data if data is not None else sse(*events))
    err = info.value
    assert err.provider == "anthropic"
    if isinstance(err.turn, Turn):
        assert err.turn.calls == ()
        assert not err.turn.complete
    return err


def test_pings_anywhere_before_the_end_are_ignored() -> None:
    events = tool_turn_events(("c1", "f", ['{"a":1}']))
    with_pings = [PING]
    for event in events[:-1]:
        with_pings += [event, PING]
    with_pings.append(events[-1])
    assert parse_stream(sse(*with_pings)).digest == parse_stream(sse(*events)).digest


def test_ping_named_frame_carrying_a_delta_is_rejected_not_dropped() -> None:
    # The SDK skips any `event: ping` whatever its data, silently losing a delta.
    events = tool_turn_events(("c1", "f", ['{"a":', "1}"]))
    data = b"".join(frame(e, name="ping") if i == 2 else frame(e) for i, e in enumerate(events))
    err = fails(FramingError, data=data)
    assert err.event_index == 2


def test_zero_argument_tool_completes_from_start_input() -> None:
    turn = parse_stream(sse(*tool_turn_events(("z", "now", []))))
    assert [(c.call_id, c.arguments) for c in turn.calls] == [("z", {})]


def test_whitespace_only_input_is_not_a_zero_argument_call() -> None:
    turn = parse_stream(sse(*tool_turn_events(("w", "now", ["  "]))))
    assert turn.calls == ()
    assert turn.recovery_calls[0].reason == "invalid_json"


def test_eager_invalid_json_goes_to_recovery_and_never_executes() -> None:
    turn = parse_stream(
        sse(*tool_turn_events(("bad", "f", ['{"a": "x']), ("ok", "f", ['{"b":2}'])))
    )
    assert [c.call_id for c in turn.calls] == ["ok"]
    (rec,) = turn.recovery_calls
    assert (rec.call_id, rec.reason, rec.partial_input) == ("bad", "invalid_json", '{"a": "x')


def test_trailing_garbage_after_the_object_is_invalid_json() -> None:
    # jiter's partial mode accepts `{"a": 1}}`; strict parsing must not.
    turn = parse_stream(sse(*tool_turn_events(("t", "f", ['{"a": 1}}']))))
    assert turn.calls == ()
    assert turn.recovery_calls[0].reason == "invalid_json"


def test_max_tokens_sends_every_sibling_to_recovery() -> None:
    turn = parse_stream(
        sse(*tool_turn_events(("a", "f", ['{"x":1}']), ("b", "f", ['{"x":']), reason="max_tokens"))
    )
    assert turn.calls == ()
    assert [(r.call_id, r.reason) for r in turn.recovery_calls] == [
        ("a", "max_tokens"),
        ("b", "invalid_json"),
    ]


@pytest.mark.parametrize("value", ["[1, 2]", '"text"', "3", "null", "true"])
def test_non_object_input_goes_to_recovery(value: str) -> None:
    turn = parse_stream(sse(*tool_turn_events(("n", "f", [value]))))
    assert turn.calls == ()
    assert turn.recovery_calls[0].reason == "non_object"


def test_duplicate_key_input_goes_to_recovery() -> None:
    # Which duplicate wins differs between parsers; the call must not run at all.
    turn = parse_stream(sse(*tool_turn_events(("d", "rm", ['{"path":"/tmp/x",', '"path":"/"}']))))
    assert turn.calls == ()
    assert turn.recovery_calls[0].reason == "invalid_json"
    assert "duplicate" in turn.recovery_calls[0].detail


def test_nan_and_over_deep_input_go_to_recovery() -> None:
    deep = "[" * 100 + "]" * 100
    turn = parse_stream(
        sse(*tool_turn_events(("n", "f", ['{"a": NaN}']), ("d", "f", ['{"a":' + deep + "}"])))
    )
    assert [(r.call_id, r.reason) for r in turn.recovery_calls] == [
        ("n", "invalid_json"),
        ("d", "limit_exceeded"),
    ]


def test_event_name_different_from_data_type_fails() -> None:
    # The SDK routes by the JSON type and ignores the name; a proxy could smuggle events.
    events = tool_turn_events(("c1", "f", ['{"a":1}']))
    data = b"".join(
        frame(e, name="message_delta") if e["type"] == "content_block_stop" else frame(e)
        for e in events
    )
    fails(FramingError, data=data)


def test_event_without_name_fails() -> None:
    events = tool_turn_events(("c1", "f", ['{"a":1}']))
    data = b"".join(frame(e, name=None) if i == 1 else frame(e) for i, e in enumerate(events))
    fails(FramingError, data=data)


def test_block_overlap_start_while_another_is_open_fails() -> None:
    events = [message_start(), block_start(0, {"type": "text", "text": ""})]
    events.append(block_start(1, {"type": "text", "text": ""}))
    err = fails(SequenceError, *events)
    assert err.event_index == 2
    assert err.wire_type == "content_block_start"


def test_delta_to_a_closed_block_fails() -> None:
    events = [message_start(), *text_block(0, "hi"), text_delta(0, " more")]
    fails(SequenceError, *events)


def test_delta_to_another_index_than_the_open_block_fails() -> None:
    events = [message_start(), *text_block(0, "a")[:1], block_stop(0)]
    events += [block_start(1, {"type": "text", "text": ""}), text_delta(0, "x")]
    fails(SequenceError, *events)


def test_delta_type_that_does_not_fit_the_block_fails() -> None:
    # The SDK silently drops input_json_delta on a text block.
    events = [message_start(), block_start(0, {"type": "text", "text": ""}), json_delta(0, "{}")]
    fails(SequenceError, *events)
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    fails(SequenceError, message_start(), block_start(0, thinking), text_delta(0, "x"))


def test_index_gap_fails() -> None:
    fails(SequenceError, message_start(), block_start(1, {"type": "text", "text": ""}))


def test_duplicate_index_fails() -> None:
    events = [message_start(), *text_block(0, "a"), *text_block(0, "b")]
    fails(SequenceError, *events)


def test_bool_index_is_not_index_one() -> None:
    events = [message_start(), *text_block(0, "a")]
    events.append(block_start(True, {"type": "text", "text": ""}))  # type: ignore[arg-type]
    fails(SequenceError, *events)


def test_duplicate_tool_use_id_in_one_turn_fails() -> None:
    fails(SequenceError, *tool_turn_events(("same", "f", ["{}"]), ("same", "g", ["{}"])))


def test_tool_input_both_in_start_and_deltas_fails() -> None:
    events = [message_start(), *tool_block(0, "c", "f", ['{"b":2}'], start_input={"a": 1})]
    fails(SchemaError, *events, message_delta("tool_use"), MESSAGE_STOP)


def test_server_and_client_tool_mix_releases_only_client_calls() -> None:
    events = [message_start()]
    events += [
        block_start(0, {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}),
        json_delta(0, '{"query":"x"}'),
        block_stop(0),
        block_start(1, {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}),
        block_stop(1),
        *tool_block(2, "c1", "client_fn", ['{"k":"v"}']),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    turn = parse_stream(sse(*events))
    assert [c.call_id for c in turn.calls] == ["c1"]
    assert turn.recovery_calls == ()
    assert turn.content[0]["input"] == {"query": "x"}
    assert [b["type"] for b in turn.content] == [
        "server_tool_use",
        "web_search_tool_result",
        "tool_use",
    ]


def test_fallback_block_is_unsupported_not_ignored_as_telemetry() -> None:
    fallback = {
        "type": "fallback",
        "from": {"model": "a"},
        "to": {"model": "b"},
        "trigger": {"type": "refusal"},
    }
    events = [message_start(), *tool_block(0, "c1", "f", ["{}"]), block_start(1, fallback)]
    err = fails(UnsupportedProviderState, *events, block_stop(1), message_delta("tool_use"))
    assert "fallback" in str(err)
    assert isinstance(err.turn, Turn)
    assert err.turn.calls == ()


@pytest.mark.parametrize("kind", ["mcp_tool_use", "compaction", "brand_new_block"])
def test_unknown_or_beta_block_types_fail_closed(kind: str) -> None:
    fails(UnsupportedProviderState, message_start(), block_start(0, {"type": kind}))


@pytest.mark.parametrize("kind", ["compaction_delta", "brand_new_delta"])
def test_unknown_delta_types_fail_closed(kind: str) -> None:
    events = [message_start(), block_start(0, {"type": "text", "text": ""})]
    fails(UnsupportedProviderState, *events, delta(0, {"type": kind, "x": "y"}))


def test_unknown_event_type_fails_closed() -> None:
    fails(UnsupportedProviderState, message_start(), {"type": "message_annotation"})


def test_usage_regression_is_a_warning_not_a_refusal() -> None:
    # Usage is telemetry: a count that goes down is recorded, never refused.
    events = [message_start(), *text_block(0, "a"), message_delta("end_turn", out=20)]
    turn = parse_stream(sse(*events, message_delta("end_turn", out=19), MESSAGE_STOP))
    assert turn.warnings == ("usage.output_tokens went down from 20 to 19",)
    assert turn.usage["output_tokens"] == 19


def test_missing_message_delta_fails() -> None:
    err = fails(SequenceError, message_start(), *text_block(0, "a"), MESSAGE_STOP)
    assert "message_stop" in str(err)


def test_message_delta_without_stop_reason_cannot_end_the_turn() -> None:
    fails(SequenceError, message_start(), message_delta(None), MESSAGE_STOP)


def test_stop_reason_cannot_change_between_message_deltas() -> None:
    fails(SequenceError, message_start(), message_delta("end_turn"), message_delta("tool_use"))


def test_message_delta_cannot_rewrite_message_identity() -> None:
    events = [message_start(), message_delta("end_turn", id="other-message")]
    fails(SchemaError, *events, MESSAGE_STOP)


def test_missing_message_stop_is_truncated_and_releases_nothing(tool_turn_bytes: bytes) -> None:
    cut = tool_turn_bytes[: tool_turn_bytes.rindex(b"event: message_stop")]
    err = fails(TruncatedStreamError, data=cut)
    assert isinstance(err.turn, Turn)
    assert err.turn.calls == ()
    assert err.turn.stop_reason == "tool_use"
    assert [b["id"] for b in err.turn.content] == ["c1"]


def test_stream_cut_mid_event_is_truncated(tool_turn_bytes: bytes) -> None:
    fails(TruncatedStreamError, data=tool_turn_bytes[:-1])


def test_events_after_message_stop_fail(tool_turn_bytes: bytes) -> None:
    fails(SequenceError, data=tool_turn_bytes + sse(PING))
    fails(SequenceError, data=tool_turn_bytes + sse(message_delta("tool_use")))


def test_second_message_start_fails() -> None:
    fails(SequenceError, message_start(), message_start())


def test_content_before_message_start_fails() -> None:
    fails(SequenceError, *text_block(0, "a"))


def test_error_mid_stream_is_a_provider_error_with_its_type_and_message() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data = sse(message_start(), *tool_block(0, "c1", "f", ['{"a":1}']), error)
    err = fails(ProviderError, data=data)
    assert isinstance(err, ProviderError)
    assert (err.error_type, err.provider_message) == ("overloaded_error", "Overloaded")
    assert isinstance(err.turn, Turn)
    assert err.turn.calls == ()


def test_error_frame_with_non_json_data_is_still_a_provider_error() -> None:
    data = sse(message_start()) + b"event: error\ndata: upstream exploded\n\n"
    err = fails(ProviderError, data=data)
    assert isinstance(err, ProviderError)
    assert err.provider_message == "upstream exploded"


def test_refusal_releases_nothing_and_keeps_raw_stop_reason() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": None}
    events = [
        message_start(),
        *text_block(0, "No."),
        message_delta("refusal", stop_details=details),
    ]
    turn = parse_stream(sse(*events, MESSAGE_STOP))
    assert (turn.stop_reason, turn.calls, turn.recovery_calls) == ("refusal", (), ())
    assert turn.message["stop_details"] == details


def test_pause_turn_is_send_back_unchanged() -> None:
    turn = parse_stream(
        sse(message_start(), *text_block(0, "..."), message_delta("pause_turn"), MESSAGE_STOP)
    )
    assert turn.send_back_unchanged
    assert turn.calls == ()


def test_unknown_stop_reason_is_kept_raw_and_releases_nothing() -> None:
    turn = parse_stream(sse(*tool_turn_events(("c", "f", ["{}"]), reason="future_reason")))
    assert turn.stop_reason == "future_reason"
    assert not turn.known_stop_reason
    assert turn.calls == ()
    assert [r.reason for r in turn.recovery_calls] == ["not_released"]


def test_model_context_window_exceeded_is_known_only_in_the_current_baseline() -> None:
    data = sse(message_start(), message_delta("model_context_window_exceeded"), MESSAGE_STOP)
    assert parse_stream(data).known_stop_reason
    assert not parse_stream(data, baseline="2026-07-21").known_stop_reason


def test_thinking_block_without_signature_fails() -> None:
    thinking = {"type": "thinking", "thinking": ""}
    events = [message_start(), block_start(0, thinking)]
    events += [delta(0, {"type": "thinking_delta", "thinking": "hm"}), block_stop(0)]
    fails(SchemaError, *events)


def test_ids_are_opaque() -> None:
    # Nothing depends on msg_/toolu_ prefixes: odd but valid ids work.
    turn = parse_stream(sse(*tool_turn_events(("toolu_", "f", ["{}"]), (" 7 ", "g", ["{}"]))))
    assert [c.call_id for c in turn.calls] == ["toolu_", " 7 "]


@pytest.mark.parametrize(
    ("limit", "bound", "events"),
    [
        ("max_argument_bytes", 8, tool_turn_events(("c", "f", ['{"a":', '"12345"}']))),
        ("max_fragments_per_call", 2, tool_turn_events(("c", "f", ["{", '"a"', ":1}"]))),
        ("max_calls_per_turn", 1, tool_turn_events(("a", "f", ["{}"]), ("b", "f", ["{}"]))),
        ("max_items_per_turn", 1, [message_start(), *text_block(0, "a"), *text_block(1, "b")]),
        ("max_text_chars", 3, [message_start(), *text_block(0, "ab", "cd")]),
    ],
)
def test_limits_are_enforced_before_buffers_grow(limit: str, bound: int, events: list[Any]) -> None:
    from callgate import DEFAULT_LIMITS

    with pytest.raises(LimitExceededError) as info:
        parse_stream(sse(*events), limits=DEFAULT_LIMITS.replace(**{limit: bound}))
    assert info.value.limit == limit


def test_failed_parser_stays_failed() -> None:
    parser = Parser()
    with pytest.raises(SequenceError) as info:
        parser.feed_bytes(sse(MESSAGE_STOP))
    assert parser.state is State.FAILED
    with pytest.raises(SequenceError) as again:
        parser.feed_bytes(sse(PING))
    assert again.value is info.value
    with pytest.raises(SequenceError) as again:
        parser.finish()
    assert again.value is info.value


def test_finished_parser_is_closed(tool_turn_bytes: bytes) -> None:
    parser = Parser()
    parser.feed_bytes(tool_turn_bytes)
    turn = parser.finish()
    with pytest.raises(UsageError):
        parser.feed_bytes(b"")
    assert parser.finish() is turn


def test_modes_cannot_be_mixed_and_bad_chunks_do_not_fail_the_parser() -> None:
    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_bytes("text")  # type: ignore[arg-type]
    parser.feed_bytes(sse(message_start()))
    with pytest.raises(UsageError):
        parser.feed_event(PING)
    with pytest.raises(UsageError):
        parse_stream("not bytes")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        Parser(baseline="2025-01-01")


def test_empty_stream_is_truncated() -> None:
    with pytest.raises(TruncatedStreamError):
        parse_stream(b"")
    with pytest.raises(TruncatedStreamError):
        Parser().finish()


def test_feed_event_rejects_non_json_values_and_non_mappings() -> None:
    import datetime

    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_event(["not", "a", "dict"])  # type: ignore[arg-type]
    assert parser.state is State.START  # still usable
    start = message_start()
    start["message"]["created"] = datetime.datetime(2026, 1, 1)
    with pytest.raises(JSONError, match="to_dict"):
        parser.feed_event(start)
    assert parser.state is State.FAILED


def test_feed_event_copies_so_later_mutation_does_not_reach_the_turn() -> None:
    parser = Parser()
    events = tool_turn_events(("c", "f", ['{"a":1}']))
    for event in events:
        parser.feed_event(event)
    events[1]["content_block"]["name"] = "rm_rf"
    assert parser.finish().calls[0].name == "f"


@pytest.mark.parametrize(
    "event",
    [
        {"type": ["list"]},
        {"type": "content_block_delta", "index": 0, "delta": {"type": ["x"]}},
        {"type": "content_block_delta", "index": 0, "delta": "str"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": {"a": 1}}},
        {"type": "message_start", "message": {"id": 5}},
        {"type": "message_delta", "delta": [], "usage": {}},
    ],
)
def test_malformed_event_shapes_raise_only_callgate_errors(event: dict[str, Any]) -> None:
    parser = Parser()
    if event["type"] != "message_start":
        parser.feed_event(message_start())
        if event["type"] == "content_block_delta":
            parser.feed_event(block_start(0, {"type": "text", "text": ""}))
    with pytest.raises(CallgateError):
        parser.feed_event(event)


@pytest.mark.parametrize(
    "body",
    [
        b"[1]",
        b'{"id": "m", "content": {}}',
        b'{"id":"m","id":"n"}',
        {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": []},
    ],
    ids=["not-object", "content-not-list", "duplicate-key", "no-usage-no-stop-reason"],
)
def test_malformed_response_bodies_raise_schema_or_json_errors(body: Any) -> None:
    from callgate import ProtocolError
    from callgate.anthropic_messages import parse_response

    with pytest.raises(ProtocolError) as info:
        parse_response(body)
    assert info.value.provider == "anthropic"


def test_response_body_tool_input_must_be_an_object() -> None:
    from callgate.anthropic_messages import parse_response

    body = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "x",
        "content": [{"type": "tool_use", "id": "c", "name": "f", "input": [1]}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    with pytest.raises(SchemaError):
        parse_response(body)
    body["content"][0]["input"] = {"a": 1}  # type: ignore[index]
    assert parse_response(body).calls[0].arguments == {"a": 1}


# -- required fields: only what the gate decides on (docs/required-fields.md) ----------------


def test_a_programmatic_loop_turn_with_null_usage_counters_releases_its_calls() -> None:
    # What a programmatic-tool-calling or tool-search loop sends: server_tool_use counters
    # that are null, and nulls beside them, in message_start and message_delta alike.
    usage = {
        "input_tokens": 812,
        "cache_creation_input_tokens": None,
        "cache_read_input_tokens": None,
        "cache_creation": None,
        "output_tokens": 3,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": None},
        "service_tier": "standard",
    }
    start = message_start()
    start["message"]["usage"] = usage
    end = message_delta("tool_use")
    nulls = {"web_search_requests": None, "web_fetch_requests": None}
    end["usage"] = {**usage, "output_tokens": 41, "input_tokens": None, "server_tool_use": nulls}
    turn = parse_stream(
        sse(start, *tool_block(0, "toolu_1", "lookup", ['{"q": 1}']), end, MESSAGE_STOP)
    )
    assert [(c.call_id, c.arguments) for c in turn.calls] == [("toolu_1", {"q": 1})]
    assert turn.usage["output_tokens"] == 41
    assert turn.usage["input_tokens"] == 812  # a null never erases
    assert turn.warnings == ()


def test_a_message_start_with_only_its_id_parses() -> None:
    start = {"type": "message_start", "message": {"id": "m-1"}}
    turn = parse_stream(
        sse(start, *tool_block(0, "t", "f", ["{}"]), message_delta("tool_use"), MESSAGE_STOP)
    )
    assert (turn.message_id, turn.model, [c.call_id for c in turn.calls]) == ("m-1", None, ["t"])
    assert turn.usage == {"output_tokens": 10}


def test_a_message_start_without_its_id_is_refused() -> None:
    # A message thread continues from the message id (previous_message_id).
    start = message_start()
    del start["message"]["id"]
    err = fails(SchemaError, start, message_delta("end_turn"), MESSAGE_STOP)
    assert "'id'" in err.message


@pytest.mark.parametrize(("key", "value"), [("role", "user"), ("type", "completion"), ("model", 3)])
def test_a_message_start_field_of_another_value_is_refused(key: str, value: object) -> None:
    start = message_start()
    start["message"][key] = value
    fails(SchemaError, start, message_delta("end_turn"), MESSAGE_STOP)


def test_a_message_delta_without_delta_leaves_the_stop_reason_required() -> None:
    event = message_delta("tool_use")
    del event["delta"]
    fails(SequenceError, message_start(), *tool_block(0, "t", "f", ["{}"]), event, MESSAGE_STOP)
