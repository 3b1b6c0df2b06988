"""Named red-team cases: each test proves one attack or drift is closed (nothing released)."""

from __future__ import annotations

import copy
import json

import pytest

from callgate import (
    JSONError,
    LimitExceededError,
    Limits,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
)
from callgate.openai_responses import Parser, parse_response, parse_stream

from .check import OLD, fail, run
from .wire import Stream, fc_item, message_item, reasoning_item, response, sse

DELTA = "response.function_call_arguments.delta"
DONE = "response.function_call_arguments.done"


def weather(index: int = 0, args: str = '{"city":"Paris"}') -> dict:
    return fc_item(f"fc_{index}", f"call_{index}", "get_weather", args)


def one_call(args: str = '{"city":"Paris"}', **extra: object) -> Stream:
    return Stream().created().call(0, weather(0, args) | extra)


# -- association and order -------------------------------------------------------------


def test_interleaved_parallel_calls_accumulate_by_index_and_item_id() -> None:
    s = Stream().created()
    a, b = weather(0, '{"city":"Paris"}'), fc_item("fc_1", "call_1", "get_time", '{"tz":"UTC"}')
    s.added(0, a)
    s.added(1, b)
    for left, right in zip(['{"city"', ':"Paris"}'], ['{"tz"', ':"UTC"}'], strict=True):
        s.ev(DELTA, item_id="fc_1", output_index=1, delta=right)
        s.ev(DELTA, item_id="fc_0", output_index=0, delta=left)
    s.ev(DONE, item_id="fc_1", output_index=1, arguments=b["arguments"])
    s.ev(DONE, item_id="fc_0", output_index=0, arguments=a["arguments"])
    s.item_done(1, b)
    s.item_done(0, a)
    turn = run(s.completed().events)
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [
        ("call_0", "get_weather", {"city": "Paris"}),
        ("call_1", "get_time", {"tz": "UTC"}),
    ]


def test_duplicate_sequence_number_fails() -> None:
    s = one_call()
    s.events[3]["sequence_number"] = s.events[2]["sequence_number"]
    fail(s.completed().events, SequenceError)


def test_decreasing_sequence_number_fails() -> None:
    s = one_call().completed()
    s.events[-1]["sequence_number"] = 1
    fail(s.events, SequenceError)


def test_missing_sequence_number_fails() -> None:
    s = one_call().completed()
    del s.events[3]["sequence_number"]
    fail(s.events, SchemaError)


def test_delta_before_added_fails() -> None:
    s = Stream().created()
    s.ev(DELTA, item_id="fc_0", output_index=0, delta="{}")
    fail(s.events, SequenceError)


def test_delta_with_another_items_id_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.added(1, weather(1))
    s.ev(DELTA, item_id="fc_1", output_index=0, delta="{}")
    fail(s.events, SequenceError)


def test_delta_after_item_done_fails() -> None:
    s = one_call()
    s.ev(DELTA, item_id="fc_0", output_index=0, delta=" ")
    fail(s.events, SequenceError)


def test_argument_delta_on_a_message_item_fails() -> None:
    s = Stream().created()
    s.added(0, message_item("msg_0", "hi"))
    s.ev(DELTA, item_id="msg_0", output_index=0, delta="{}")
    fail(s.events, SequenceError)


def test_output_index_added_twice_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.added(0, weather(1))
    fail(s.events, SequenceError)


def test_item_done_twice_fails() -> None:
    s = one_call()
    s.item_done(0, weather(0))
    fail(s.events, SequenceError)


def test_response_id_change_between_lifecycle_events_fails() -> None:
    s = one_call().completed()
    s.events[-1]["response"]["id"] = "resp_other"
    fail(s.events, SequenceError)


def test_item_events_before_response_created_fail() -> None:
    s = Stream()
    s.added(0, weather(0))
    fail(s.events, SequenceError)


# -- consistency -----------------------------------------------------------------------


def test_done_arguments_differing_from_deltas_fail() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.ev(DELTA, item_id="fc_0", output_index=0, delta='{"city":"Paris"}')
    s.ev(DONE, item_id="fc_0", output_index=0, arguments='{"city":"Pariz"}')
    fail(s.events, SequenceError)


def test_item_done_arguments_differing_from_deltas_fail() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.ev(DELTA, item_id="fc_0", output_index=0, delta='{"city":"Paris"}')
    s.ev(DONE, item_id="fc_0", output_index=0, arguments='{"city":"Paris"}')
    s.item_done(0, weather(0, '{"city":"Rome"}'))
    fail(s.completed().events, SequenceError)


def test_item_done_without_arguments_done_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.ev(DELTA, item_id="fc_0", output_index=0, delta='{"city":"Paris"}')
    s.item_done(0, weather(0))
    fail(s.completed().events, SequenceError)


def test_item_done_changing_call_id_fails() -> None:
    s = Stream().created()
    s.call(0, weather(0))
    s.events[-1]["item"]["call_id"] = "call_swapped"
    fail(s.completed().events, SequenceError)


def test_text_done_differing_from_deltas_fails() -> None:
    s = Stream().created().message(0, message_item("msg_0", "hello"), chunks=["he", "llo"])
    done = next(e for e in s.events if e["type"] == "response.output_text.done")
    done["text"] = "HELLO"
    fail(s.completed().events, SequenceError)


def _terminal_case(mutate) -> None:  # type: ignore[no-untyped-def]
    s = Stream().created()
    s.reasoning(0, reasoning_item("rs_0", "think"))
    s.message(1, message_item("msg_1", "Let me check."))
    s.call(2, weather(2))
    output = s.output()
    mutate(output)
    fail(s.completed(output).events, SequenceError)


def test_terminal_output_missing_a_reasoning_item_fails() -> None:
    _terminal_case(lambda out: out.pop(0))


def test_terminal_output_with_a_replaced_message_fails() -> None:
    def replace(out: list) -> None:
        out[1] = message_item("msg_1", "Something else.")

    _terminal_case(replace)


def test_terminal_output_with_an_extra_call_fails() -> None:
    _terminal_case(lambda out: out.append(weather(3)))


def test_terminal_output_reordered_fails() -> None:
    _terminal_case(lambda out: out.reverse())


def test_terminal_output_with_changed_call_arguments_fails() -> None:
    def change(out: list) -> None:
        out[2]["arguments"] = '{"city":"Rome"}'

    _terminal_case(change)


def test_terminal_reasoning_ciphertext_may_be_reencrypted() -> None:
    s = Stream().created().reasoning(0, reasoning_item("rs_0", "think", "cipher-1"))
    s.call(1, weather(1))
    output = s.output()
    output[0] = output[0] | {"encrypted_content": "cipher-2"}
    turn = run(s.completed(output).events)
    assert turn.items[0]["encrypted_content"] == "cipher-2"  # the Response is authoritative
    assert [c.call_id for c in turn.calls] == ["call_1"]


def test_completed_with_an_open_item_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    fail(s.completed([]).events, SequenceError)


# -- terminal gate ---------------------------------------------------------------------


def test_eof_before_terminal_fails() -> None:
    err = fail(one_call().events, TruncatedStreamError)
    assert err.turn is not None
    assert len(err.turn.items) == 1


def test_eof_mid_event_fails() -> None:
    data = sse(one_call().completed().events)
    with pytest.raises(TruncatedStreamError) as info:
        parse_stream(data[:-1])
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_done_marker_before_terminal_fails() -> None:
    data = sse(one_call().events) + b"data: [DONE]\n\n"
    with pytest.raises(TruncatedStreamError):
        parse_stream(data)


def test_done_marker_after_terminal_is_accepted() -> None:
    data = sse(one_call().completed().events) + b"data: [DONE]\n\n"
    assert [c.call_id for c in parse_stream(data).calls] == ["call_0"]


def test_incomplete_with_a_complete_call_releases_nothing() -> None:
    s = one_call()
    body = response(s.rid, "incomplete", s.output()) | {
        "incomplete_details": {"reason": "max_output_tokens"}
    }
    s.ev("response.incomplete", response=body)
    err = fail(s.events, ProviderError)
    assert isinstance(err, ProviderError)
    assert err.error_code == "max_output_tokens"
    assert err.turn is not None
    assert err.turn.items[0]["call_id"] == "call_0"


def test_failed_releases_nothing() -> None:
    s = one_call()
    body = response(s.rid, "failed", s.output()) | {
        "error": {"code": "server_error", "message": "boom"}
    }
    s.ev("response.failed", response=body)
    err = fail(s.events, ProviderError)
    assert isinstance(err, ProviderError)
    assert (err.error_code, err.provider_message) == ("server_error", "boom")


def test_completed_event_with_non_completed_status_fails() -> None:
    s = one_call()
    s.ev("response.completed", response=response(s.rid, "failed", s.output()))
    fail(s.events, SchemaError)


def test_flat_error_event_releases_nothing() -> None:
    s = one_call()
    s.ev("error", code="server_error", message="The server had an error", param=None)
    err = fail(s.events, ProviderError)
    assert isinstance(err, ProviderError)
    assert (err.error_code, err.provider_message) == ("server_error", "The server had an error")
    assert err.turn is not None
    assert err.turn.error is not None
    assert err.turn.error.source == "error_event"


def test_nested_error_event_releases_nothing() -> None:
    s = one_call()
    s.ev(
        "error",
        error={"type": "too_many_requests", "code": "rate_limit_exceeded", "message": "slow"},
    )
    err = fail(s.events, ProviderError)
    assert isinstance(err, ProviderError)
    assert (err.error_type, err.error_code) == ("too_many_requests", "rate_limit_exceeded")


def test_error_event_before_response_created_releases_nothing() -> None:
    s = Stream()
    s.ev("error", code="rate_limit_exceeded", message="slow down", param=None)
    err = fail(s.events, ProviderError)
    assert err.turn is not None
    assert err.turn.response_id is None


def test_error_event_then_completed_fails() -> None:
    s = one_call()
    s.ev("error", code="server_error", message="x", param=None)
    fail(s.completed().events, SequenceError)


def test_error_event_without_message_still_refuses_the_turn() -> None:
    # The error event is the decision; its details are not required.
    s = one_call()
    s.ev("error", code="server_error", param=None)
    err = fail(s.events, ProviderError)
    assert (err.error_code, err.provider_message) == ("server_error", None)


def test_events_after_terminal_fail() -> None:
    s = one_call().completed()
    s.ev("response.in_progress", response=response(s.rid, "in_progress"))
    fail(s.events, SequenceError)


def test_second_terminal_fails() -> None:
    fail(one_call().completed().completed().events, SequenceError)


def test_call_with_incomplete_status_in_completed_response_fails() -> None:
    fail(
        Stream().created().call(0, weather(0) | {"status": "incomplete"}).completed().events,
        SequenceError,
    )


def test_duplicate_call_id_fails() -> None:
    s = Stream().created().call(0, weather(0))
    s.call(1, weather(1) | {"call_id": "call_0"})
    fail(s.completed().events, SequenceError)


# -- unsupported semantics -------------------------------------------------------------


def test_programmatic_caller_fails_closed() -> None:
    s = Stream().created()
    s.added(0, weather(0) | {"caller": {"type": "program", "caller_id": "prog_1"}})
    fail(s.events, UnsupportedProviderState)


def test_direct_caller_metadata_is_kept_raw() -> None:
    caller = {"type": "direct", "future_field": 1}
    turn = run(one_call(caller=caller).completed().events)
    assert turn.calls[0].caller == caller
    assert turn.calls[0].item["caller"] == caller


def test_namespaced_tool_fails_closed() -> None:
    s = Stream().created()
    s.added(0, weather(0) | {"namespace": "crm"})
    fail(s.events, UnsupportedProviderState)


def test_async_function_call_fails_closed() -> None:
    s = Stream().created()
    s.added(0, weather(0) | {"async": True})
    fail(s.events, UnsupportedProviderState)


@pytest.mark.parametrize("item_type", ["mcp_call", "custom_tool_call", "program", "shell_call"])
def test_unsupported_item_types_fail_closed(item_type: str) -> None:
    s = Stream().created()
    s.ev("response.output_item.added", output_index=0, item={"type": item_type, "id": "x1"})
    fail(s.events, UnsupportedProviderState)


def test_known_but_unsupported_event_fails_closed() -> None:
    s = Stream().created()
    s.ev("response.mcp_call_arguments.delta", item_id="mcp_1", output_index=0, delta="{")
    fail(s.events, UnsupportedProviderState)


def test_unknown_event_type_fails_closed() -> None:
    s = one_call()
    s.ev("response.function_call_arguments.replace", item_id="fc_0", output_index=0)
    fail(s.completed().events, UnsupportedProviderState)


def test_unknown_item_type_fails_closed() -> None:
    s = Stream().created()
    s.ev("response.output_item.added", output_index=0, item={"type": "teleport", "id": "t1"})
    fail(s.events, UnsupportedProviderState)


# -- arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "args", "error"),
    [
        ("array", "[1,2]", JSONError),
        ("number", "42", JSONError),
        ("empty", "", JSONError),
        ("duplicate-key", '{"city":"Paris","city":"Rome"}', JSONError),
        ("nan", '{"x":NaN}', JSONError),
        ("infinity", '{"x":-Infinity}', JSONError),
        ("depth-bomb", '{"x":' + "[" * 5000 + "]" * 5000 + "}", LimitExceededError),
        ("trailing-data", '{"x":1} {}', JSONError),
    ],
)
def test_arguments_that_are_not_a_strict_json_object_fail(
    case: str, args: str, error: type
) -> None:
    err = fail(one_call(args).completed().events, error)
    assert "call_id='call_0'" in err.message, case


def test_oversized_arguments_fail_while_streaming() -> None:
    limits = Limits(max_argument_bytes=64)
    data = sse(one_call('{"x":"' + "a" * 100 + '"}').completed().events)
    with pytest.raises(LimitExceededError) as info:
        parse_stream(data, limits=limits)
    assert info.value.limit == "max_argument_bytes"
    assert "output_index 0" in info.value.message


def test_too_many_fragments_fail() -> None:
    s = Stream().created().call(0, weather(0), chunks=list('{"city":"Paris"}'))
    with pytest.raises(LimitExceededError) as info:
        parse_stream(sse(s.completed().events), limits=Limits(max_fragments_per_call=5))
    assert info.value.limit == "max_fragments_per_call"


def test_too_many_calls_fail() -> None:
    s = Stream().created().call(0, weather(0)).call(1, weather(1))
    with pytest.raises(LimitExceededError):
        parse_stream(sse(s.completed().events), limits=Limits(max_calls_per_turn=1))


def test_zero_argument_call_gives_an_empty_dict() -> None:
    turn = run(one_call("{}").completed().events)
    assert turn.calls[0].arguments == {}


def test_non_ascii_arguments_are_counted_in_bytes() -> None:
    args = json.dumps({"city": "Zürich ✓"}, ensure_ascii=False)
    turn = run(one_call(args).completed().events)
    assert turn.calls[0].arguments == {"city": "Zürich ✓"}
    with pytest.raises(LimitExceededError):
        parse_stream(
            sse(one_call(args).completed().events),
            limits=Limits(max_argument_bytes=len(args)),
        )


# -- baselines: `name` on function_call_arguments.done -----------------------------------


def _done_with_name(name: object) -> Stream:
    s = Stream().created()
    item = weather(0)
    s.added(0, item)
    s.ev(DELTA, item_id="fc_0", output_index=0, delta=item["arguments"])
    extra = {} if name is None else {"name": name}
    s.ev(DONE, item_id="fc_0", output_index=0, arguments=item["arguments"], **extra)
    s.item_done(0, item)
    return s.completed()


def test_done_name_mismatch_fails_on_both_baselines() -> None:
    fail(_done_with_name("delete_everything").events, SequenceError)
    fail(_done_with_name("delete_everything").events, SequenceError, baseline=OLD)


def test_done_name_is_optional_on_current_baseline() -> None:
    assert run(_done_with_name(None).events).calls[0].name == "get_weather"
    assert run(_done_with_name("get_weather").events).calls[0].name == "get_weather"


def test_done_without_name_is_accepted_on_the_2026_07_21_baseline() -> None:
    """Live 2026-07-21 streams never carry `name` on `.done`, although openai 2.46.0's
    type declares it required: refusing them would refuse every real call."""
    turn = run(_done_with_name(None).events, baseline=OLD)
    assert [(c.call_id, c.name) for c in turn.calls] == [("call_0", "get_weather")]
    assert run(_done_with_name("get_weather").events, baseline=OLD).calls[0].call_id == "call_0"


def test_done_with_a_wrong_name_is_refused_on_the_2026_07_21_baseline() -> None:
    err = fail(_done_with_name("delete_everything").events, SequenceError, baseline=OLD)
    assert "names another function" in err.message


@pytest.mark.parametrize("baseline", [OLD, "2026-11"])
@pytest.mark.parametrize("name", [["get_weather"], {"n": "get_weather"}, 1, True])
def test_done_name_of_another_json_type_is_a_schema_error(name: object, baseline: str) -> None:
    fail(_done_with_name(name).events, SchemaError, baseline=baseline)


# -- identity and drift ----------------------------------------------------------------


def test_synthetic_ids_without_provider_prefixes() -> None:
    s = Stream("7d1e").created()
    s.call(0, fc_item("a", "b", "get_weather", '{"city":"Oslo"}'))
    turn = run(s.completed().events)
    assert (turn.response_id, turn.calls[0].call_id, turn.calls[0].item_id) == ("7d1e", "b", "a")


def test_call_item_without_id_binds_the_streamed_item_id() -> None:
    s = Stream().created()
    item = fc_item(None, "call_0", "get_weather", "{}")
    s.added(0, item)
    s.ev(DELTA, item_id="late_id", output_index=0, delta="{}")
    s.ev(DONE, item_id="late_id", output_index=0, arguments="{}")
    s.item_done(0, item)
    output = [item | {"id": "late_id"}]
    turn = run(s.completed(output).events)
    assert (turn.calls[0].call_id, turn.calls[0].item_id) == ("call_0", "late_id")


def test_call_item_without_id_rejects_a_second_item_id() -> None:
    s = Stream().created()
    s.added(0, fc_item(None, "call_0", "get_weather", "{}"))
    s.ev(DELTA, item_id="first", output_index=0, delta="{")
    s.ev(DELTA, item_id="second", output_index=0, delta="}")
    fail(s.events, SequenceError)


def test_unknown_extra_fields_are_kept_and_tolerated() -> None:
    s = Stream().created()
    item = weather(0) | {"new_item_field": {"x": 1}}
    s.added(0, item)
    s.ev(DELTA, item_id="fc_0", output_index=0, delta=item["arguments"], obfuscation="Qx9")
    s.ev(DONE, item_id="fc_0", output_index=0, arguments=item["arguments"], new_event_field=1)
    s.item_done(0, item)
    s.completed()
    s.events[-1]["response"]["new_response_field"] = [1, 2]
    turn = run(s.events)
    assert turn.items[0]["new_item_field"] == {"x": 1}
    assert turn.calls[0].item["new_item_field"] == {"x": 1}
    assert turn.response is not None
    assert turn.response["new_response_field"] == [1, 2]


def test_text_deltas_without_logprobs_parse() -> None:
    # logprobs is telemetry: Azure and older recordings send no `logprobs` at all.
    s = Stream().created().message(0, message_item("msg_0", "hi"))
    for event in s.events:
        if event["type"] in ("response.output_text.delta", "response.output_text.done"):
            del event["logprobs"]
    assert run(s.completed().events).text == "hi"


def test_missing_required_field_fails() -> None:
    # A text delta without its `delta` cannot be assembled.
    s = Stream().created().message(0, message_item("msg_0", "hi"))
    for event in s.events:
        if event["type"] == "response.output_text.delta":
            del event["delta"]
    fail(s.completed().events, SchemaError)


# -- output_item.added is partial: only what binds the call is required there ----------------


def _added(s: Stream, index: int = 0) -> dict:
    return next(
        e["item"]
        for e in s.events
        if e["type"] == "response.output_item.added" and e["output_index"] == index
    )


def test_a_function_call_added_without_arguments_or_status_releases() -> None:
    s = one_call()
    added = _added(s)
    del added["arguments"], added["status"]
    assert [c.arguments for c in run(s.completed().events).calls] == [{"city": "Paris"}]


@pytest.mark.parametrize("key", ["call_id", "name"])
def test_a_function_call_added_without_its_identity_is_refused(key: str) -> None:
    s = one_call()
    del _added(s)[key]
    err = fail(s.completed().events, SchemaError)
    assert f"lacks required field {key!r}" in err.message


@pytest.mark.parametrize("key", ["call_id", "name", "arguments"])
def test_a_done_function_call_without_what_the_gate_reads_is_refused(key: str) -> None:
    s = one_call()
    done = next(e for e in s.events if e["type"] == "response.output_item.done")
    del done["item"][key]
    err = fail(s.completed().events, SchemaError)
    assert f"lacks required field {key!r}" in err.message


def test_items_without_optional_fields_parse() -> None:
    # An item's id, a message's role and content, a reasoning item's summary are kept
    # raw and read when present; their absence refuses nothing.
    s = Stream().created()
    item = message_item("msg_0", "hi")
    del item["role"]
    s.message(0, item)
    s.call(1, weather(1))
    added = _added(s)
    del added["content"], added["id"]
    turn = run(s.completed().events)
    assert (turn.text, [c.call_id for c in turn.calls]) == ("hi", ["call_1"])
    assert "role" not in turn.items[0]


def test_mistyped_output_index_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.added(1, weather(1))
    s.ev(DELTA, item_id="fc_1", output_index=True, delta="{")  # True == 1 in Python
    fail(s.events, SchemaError)


def test_sse_event_name_that_contradicts_the_json_type_fails() -> None:
    data = sse(one_call().completed().events).replace(
        b"event: response.function_call_arguments.done",
        b"event: response.function_call_arguments.delta",
    )
    with pytest.raises(SchemaError):
        parse_stream(data)


def test_hosted_event_addressing_a_function_call_fails() -> None:
    s = Stream().created()
    s.added(0, weather(0))
    s.ev("response.web_search_call.searching", item_id="fc_0", output_index=0)
    fail(s.events, SequenceError)


def test_feed_event_refuses_non_finite_floats() -> None:
    parser = Parser()
    event = copy.deepcopy(Stream().created().events[0])
    event["response"]["temperature"] = float("nan")
    with pytest.raises(JSONError):
        parser.feed_event(event)


# -- an error reported beside success (the SDK raises APIError; nothing may be released) --

_ERROR = {"type": "server_error", "code": "server_error", "message": "boom", "param": None}


def _completed_with(**fields: object) -> Stream:
    s = one_call().completed()
    s.events[-1]["response"].update(fields)
    return s


def test_completed_response_with_a_non_null_error_releases_nothing() -> None:
    err = fail(_completed_with(error=dict(_ERROR)).events, ProviderError)
    assert isinstance(err, ProviderError)
    assert (err.error_code, err.provider_message) == ("server_error", "boom")
    assert err.turn.error.source == "response.completed"


def test_completed_response_with_incomplete_details_releases_nothing() -> None:
    # ProviderError, as for response.incomplete: the provider says the turn did not finish.
    details = {"reason": "max_output_tokens"}
    err = fail(_completed_with(incomplete_details=details).events, ProviderError)
    assert err.turn.error.code == "max_output_tokens"
    assert err.turn.error.raw == details


@pytest.mark.parametrize("field", ["error", "incomplete_details"])
@pytest.mark.parametrize("value", ["boom", [], 0, False, 1.5])
def test_completed_response_error_fields_of_another_type_are_schema_errors(
    field: str, value: object
) -> None:
    fail(_completed_with(**{field: value}).events, SchemaError)


def test_completed_response_with_null_error_and_incomplete_details_releases_its_calls() -> None:
    turn = run(_completed_with(error=None, incomplete_details=None).events)
    assert [c.call_id for c in turn.calls] == ["call_0"]


@pytest.mark.parametrize(
    "fields", [{"error": dict(_ERROR)}, {"incomplete_details": {"reason": "content_filter"}}]
)
def test_parse_response_refuses_a_completed_body_that_reports_a_problem(
    fields: dict[str, object],
) -> None:
    body = response("resp_body", "completed", [weather(0)]) | fields
    with pytest.raises(ProviderError) as info:
        parse_response(body)
    assert info.value.turn.calls == ()
    assert info.value.turn.error.source == "response.completed"


def test_parse_response_error_field_of_another_type_is_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        parse_response(response("resp_body", "completed", [weather(0)]) | {"error": "boom"})


@pytest.mark.parametrize("position", range(7))
def test_a_truthy_top_level_error_on_any_event_fails_closed(position: int) -> None:
    events = one_call().completed().events
    assert events[position]["type"] != "error"
    events[position]["error"] = dict(_ERROR)
    err = fail(events, ProviderError)
    assert err.provider_message == "boom"
    assert err.event_index == position
    assert err.turn.error.source == "error_field"


@pytest.mark.parametrize("value", ["boom", [1], 1, True])
def test_a_truthy_top_level_error_that_is_not_an_object_fails_closed(value: object) -> None:
    events = one_call().completed().events
    events[2]["error"] = value
    err = fail(events, ProviderError)
    assert err.turn.error.source == "error_field"


@pytest.mark.parametrize("value", [None, {}, False, "", 0, []])
def test_a_falsy_top_level_error_is_ignored_as_the_sdk_ignores_it(value: object) -> None:
    events = one_call().completed().events
    for event in events:
        event["error"] = copy.deepcopy(value)
    assert [c.call_id for c in run(events).calls] == ["call_0"]
