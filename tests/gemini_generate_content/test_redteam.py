"""Red-team cases: each names the attack or drift it proves closed. Nothing here releases a call."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import (
    FramingError,
    JSONError,
    LimitExceededError,
    Limits,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
)
from callgate.gemini_generate_content import parse_response, parse_stream
from callgate.gemini_generate_content._events import FINISH_REASONS, REFUSALS

from .wire import call, chunk, dumps, sse, stream_with_finish, text

OLD, CURRENT = "2026-07-21", "2026-11"
CALL = call("delete_files", {"path": "/"}, "c-1")


def _refusal(reason: str, *parts: Any, baseline: str = CURRENT) -> ProviderError:
    with pytest.raises(ProviderError) as err:
        parse_stream(stream_with_finish(reason, *parts), baseline=baseline)
    assert err.value.error_type == "finishReason"
    assert err.value.error_code == reason
    assert reason in str(err.value)
    assert err.value.turn is not None
    assert err.value.turn.calls == ()
    assert err.value.turn.finish_reason == reason
    return err.value


# -- the gate: one named refusal per documented reason -----------------------------------


def test_max_tokens_refuses_even_a_call_that_arrived_whole() -> None:
    err = _refusal("MAX_TOKENS", CALL)
    assert err.turn.parts[-1] == CALL  # kept for inspection, never released


def test_safety_refuses_with_no_content_on_the_final_chunk() -> None:
    data = sse(chunk(CALL), {"candidates": [{"finishReason": "SAFETY", "index": 0}]})
    with pytest.raises(ProviderError) as err:
        parse_stream(data)
    assert err.value.error_code == "SAFETY"


def test_recitation_refuses() -> None:
    _refusal("RECITATION", CALL)


def test_malformed_function_call_refuses_with_the_finish_message() -> None:
    data = sse(chunk(finish="MALFORMED_FUNCTION_CALL", finishMessage="Malformed call: x("))
    with pytest.raises(ProviderError) as err:
        parse_stream(data)
    assert err.value.error_code == "MALFORMED_FUNCTION_CALL"
    assert err.value.provider_message == "Malformed call: x("


def test_unexpected_tool_call_refuses() -> None:
    _refusal("UNEXPECTED_TOOL_CALL", CALL)


def test_too_many_tool_calls_refuses() -> None:
    _refusal("TOO_MANY_TOOL_CALLS", CALL)


def test_missing_thought_signature_refuses() -> None:
    _refusal("MISSING_THOUGHT_SIGNATURE", CALL)


@pytest.mark.parametrize(
    ("baseline", "reason"),
    [(b, r) for b in (OLD, CURRENT) for r in sorted(REFUSALS[b])],
    ids=lambda v: str(v),
)
def test_every_documented_refusal_names_its_reason(baseline: str, reason: str) -> None:
    _refusal(reason, CALL, baseline=baseline)


def test_refusal_from_a_body_names_its_reason_too() -> None:
    with pytest.raises(ProviderError) as err:
        parse_response(chunk(CALL, finish="SPII"))
    assert err.value.error_code == "SPII"


def test_unknown_finish_reason_is_unsupported_not_a_stop() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_stream(stream_with_finish("STOP_AND_RUN_EVERYTHING", CALL))


@pytest.mark.parametrize("reason", sorted(FINISH_REASONS[CURRENT] - FINISH_REASONS[OLD]))
def test_reasons_new_in_3_6_1_are_unknown_to_the_2026_07_21_baseline(reason: str) -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_stream(stream_with_finish(reason, CALL), baseline=OLD)


def test_lowercase_stop_is_not_stop() -> None:
    # the SDK's enum is case-insensitive; the wire spells STOP, and callgate gates on it
    with pytest.raises(UnsupportedProviderState):
        parse_stream(stream_with_finish("stop", CALL))


# -- continuation (3.6.1) is never a terminal ---------------------------------------------


def test_continuation_releases_nothing_and_surfaces_the_token() -> None:
    data = sse(chunk(CALL), chunk(text("…"), finish="CONTINUATION", continuationToken="dG9r"))
    turn = parse_stream(data)
    assert turn.calls == ()
    assert turn.needs_continuation
    assert turn.continuation_token == "dG9r"


def test_continuation_without_a_token_is_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        parse_stream(stream_with_finish("CONTINUATION"))


def test_continuation_token_is_unknown_to_the_2026_07_21_baseline() -> None:
    data = sse(chunk(text("a"), continuationToken="dG9r"), chunk(text("b"), finish="STOP"))
    with pytest.raises(UnsupportedProviderState):
        parse_stream(data, baseline=OLD)


def test_truncated_stream_keeps_the_mid_stream_token_on_the_partial_turn() -> None:
    data = sse(chunk(text("a"), continuationToken="dG9r"))
    with pytest.raises(TruncatedStreamError) as err:
        parse_stream(data)
    assert err.value.turn.continuation_token == "dG9r"


# -- truncation: the SDK ends silently, the gate does not ---------------------------------


def test_eof_without_finish_reason_is_truncated_even_with_whole_calls() -> None:
    with pytest.raises(TruncatedStreamError) as err:
        parse_stream(sse(chunk(text("Running it.")), chunk(CALL)))
    assert err.value.turn.calls == ()
    assert err.value.turn.parts[-1] == CALL


def test_an_empty_stream_is_truncated() -> None:
    with pytest.raises(TruncatedStreamError):
        parse_stream(b"")


def test_an_event_cut_off_by_eof_is_truncated() -> None:
    data = sse(chunk(text("a")), chunk(CALL, finish="STOP"))
    with pytest.raises(TruncatedStreamError):
        parse_stream(data[:-20])


def test_a_last_event_without_its_blank_line_still_decodes_like_the_sdk() -> None:
    data = sse(chunk(text("a")), chunk(CALL, finish="STOP"))
    assert parse_stream(data.rstrip(b"\n")).calls[0].call_id == "c-1"


def test_a_body_without_finish_reason_is_truncated() -> None:
    with pytest.raises(TruncatedStreamError):
        parse_response(chunk(CALL))
    with pytest.raises(TruncatedStreamError):
        parse_response({})  # an empty 200 body


# -- provider errors and blocked prompts ----------------------------------------------------


def test_error_chunk_is_a_provider_error_with_code_and_status() -> None:
    error = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    with pytest.raises(ProviderError) as err:
        parse_stream(sse(chunk(CALL), error))
    assert err.value.error_code == "429"
    assert err.value.error_type == "RESOURCE_EXHAUSTED"
    assert err.value.provider_message == "quota"
    assert err.value.turn.calls == ()


def test_error_key_that_is_not_first_still_fails_closed() -> None:
    # the SDK only raises for a chunk whose JSON starts with {"error": and decodes this
    # one as an empty response; a chunk that carries an error is never a good chunk
    with pytest.raises(ProviderError):
        parse_stream(sse(chunk(CALL), {"x": 1, "error": {"code": 500}}))


def test_error_chunk_after_the_finish_still_fails() -> None:
    with pytest.raises(ProviderError):
        parse_stream(sse(chunk(CALL, finish="STOP"), {"error": {"code": 500}}))


def test_blocked_prompt_is_a_provider_error_naming_the_block_reason() -> None:
    with pytest.raises(ProviderError) as err:
        parse_stream(sse({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}))
    assert err.value.error_type == "blockReason"
    assert err.value.error_code == "PROHIBITED_CONTENT"


def test_block_reason_beside_a_stop_candidate_still_refuses() -> None:
    blocked = chunk(CALL, finish="STOP")
    blocked["promptFeedback"] = {"blockReason": "SAFETY"}
    with pytest.raises(ProviderError):
        parse_response(blocked)


def test_unknown_block_reason_is_unsupported() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_response({"promptFeedback": {"blockReason": "NEW_REASON"}})


# -- candidates -------------------------------------------------------------------------------


def _two_candidates(*, finish: str = "STOP") -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"parts": [call("a", {}, "x")]}, "finishReason": finish, "index": 0},
            {"content": {"parts": [call("b", {}, "y")]}, "finishReason": finish, "index": 1},
        ]
    }


def test_two_candidates_fail_closed_without_candidate_index() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_response(_two_candidates())


def test_candidate_index_selects_one_candidate() -> None:
    turn = parse_response(_two_candidates(), candidate_index=1)
    assert [c.name for c in turn.calls] == ["b"]
    assert turn.candidate_index == 1


def test_a_lone_candidate_with_another_index_needs_candidate_index() -> None:
    data = {"candidates": [{"content": {"parts": [CALL]}, "finishReason": "STOP", "index": 2}]}
    with pytest.raises(UnsupportedProviderState):
        parse_response(data)
    assert parse_response(data, candidate_index=2).calls[0].name == "delete_files"


def test_duplicate_candidate_index_in_one_chunk_is_a_sequence_error() -> None:
    data = _two_candidates()
    data["candidates"][1]["index"] = 0
    with pytest.raises(SequenceError):
        parse_response(data, candidate_index=0)


# -- framing: data: lines only ------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        b"event: message",
        b"id: 7",
        b"retry: 10",
        b": keepalive",
        b"data:" + dumps(chunk(text("x"))).encode(),
        b"data: [DONE]",
        b"\xef\xbb\xbfdata: {}",
        b"DATA: {}",
    ],
    ids=["event", "id", "retry", "comment", "data-no-space", "done", "bom", "uppercase"],
)
def test_any_line_but_data_space_is_a_framing_error(line: bytes) -> None:
    good = sse(chunk(text("a")))
    with pytest.raises((FramingError, JSONError)) as err:
        parse_stream(good + line + b"\n\n" + sse(chunk(CALL, finish="STOP")))
    assert isinstance(err.value, FramingError) or line == b"data: [DONE]"


def test_data_done_sentinel_is_refused() -> None:
    with pytest.raises(JSONError):
        parse_stream(sse(chunk(CALL, finish="STOP")) + b"data: [DONE]\n\n")


def test_invalid_utf8_in_a_chunk_is_refused() -> None:
    with pytest.raises(JSONError):
        parse_stream(b'data: {"candidates":[{"content":{"parts":[{"text":"\xff"}]}}]}\n\n')


def test_duplicate_keys_cannot_smuggle_a_second_candidate_list() -> None:
    raw = '{"candidates":[{"finishReason":"SAFETY"}],"candidates":[{"finishReason":"STOP"}]}'
    with pytest.raises(JSONError):
        parse_stream(b"data: " + raw.encode() + b"\n\n")


# -- casing ---------------------------------------------------------------------------------


def test_snake_case_finish_reason_is_refused_not_read_as_a_terminal() -> None:
    data = sse(chunk(CALL), {"candidates": [{"finish_reason": "STOP"}]})
    with pytest.raises(SchemaError):
        parse_stream(data)


def test_snake_case_usage_metadata_is_refused() -> None:
    with pytest.raises(SchemaError):
        parse_stream(sse({"usage_metadata": {"totalTokenCount": 1}}))


def test_snake_case_function_call_part_is_refused() -> None:
    part = {"function_call": {"name": "f", "args": {}}}
    with pytest.raises(SchemaError):
        parse_stream(sse(chunk(part, finish="STOP")))


# -- parts and calls ------------------------------------------------------------------------


@pytest.mark.parametrize("baseline", [OLD, CURRENT])
@pytest.mark.parametrize(
    "fc",
    [
        {"name": "f", "willContinue": True},
        {"name": "f", "partialArgs": [{"jsonPath": "$.a", "stringValue": "x"}]},
    ],
    ids=["willContinue", "partialArgs"],
)
def test_vertex_streamed_arguments_fail_closed(baseline: str, fc: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_stream(sse(chunk({"functionCall": fc}), chunk(finish="STOP")), baseline=baseline)


def test_duplicate_function_call_id_is_a_sequence_error() -> None:
    with pytest.raises(SequenceError):
        parse_stream(sse(chunk(call("a", {}, "same")), chunk(call("b", {}, "same"), finish="STOP")))


def test_a_provider_id_forging_a_local_id_collides_and_fails() -> None:
    first = parse_stream(sse(chunk(call("a"), finish="STOP")))
    forged = first.calls[0].call_id
    data = sse(chunk(call("a")), chunk(call("b", {}, forged), finish="STOP"))
    with pytest.raises(SequenceError):
        parse_stream(data)


def test_a_user_role_in_the_candidate_content_is_refused() -> None:
    data = {"candidates": [{"content": {"role": "user", "parts": [CALL]}, "finishReason": "STOP"}]}
    with pytest.raises(SequenceError):
        parse_response(data)


def test_a_function_response_part_in_a_model_turn_is_refused() -> None:
    """A server-executed call's answer (see test_server_calls.py): refused, typed."""
    part = {"functionResponse": {"name": "f", "response": {}}}
    with pytest.raises(UnsupportedProviderState):
        parse_response(chunk(part, finish="STOP"))


def test_a_part_with_two_data_fields_is_refused() -> None:
    part = {"text": "hi", "functionCall": {"name": "f", "args": {}}}
    with pytest.raises(SchemaError):
        parse_response(chunk(part, finish="STOP"))


def test_a_part_of_an_unknown_kind_fails_closed() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_response(chunk({"clientAction": {"run": "rm"}}, finish="STOP"))


def test_unknown_telemetry_beside_a_data_field_is_kept() -> None:
    part = {"text": "hi", "newTelemetry": {"x": 1}}
    turn = parse_response(chunk(part, finish="STOP"))
    assert turn.parts == (part,)


@pytest.mark.parametrize("sig", ["not base64!", "abcde", 42, ""])
def test_a_malformed_thought_signature_is_refused(sig: Any) -> None:
    part = {"text": "", "thoughtSignature": sig}
    with pytest.raises(SchemaError):
        parse_response(chunk(CALL, part, finish="STOP"))


@pytest.mark.parametrize(
    "fc",
    [{"args": {}}, {"name": "", "args": {}}, {"name": "f", "args": []}, {"name": "f", "id": ""}],
    ids=["no-name", "empty-name", "list-args", "empty-id"],
)
def test_a_malformed_function_call_is_refused(fc: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        parse_response(chunk({"functionCall": fc}, finish="STOP"))


def test_a_call_without_args_gets_the_empty_object() -> None:
    turn = parse_response(chunk({"functionCall": {"name": "now"}}, finish="STOP"))
    assert turn.calls[0].arguments == {}


def test_response_id_changing_mid_stream_is_a_sequence_error() -> None:
    other = chunk(CALL, finish="STOP")
    other["responseId"] = "r-2"
    with pytest.raises(SequenceError):
        parse_stream(sse(chunk(text("a")), other))


def test_a_candidate_streaming_after_the_finish_is_a_sequence_error() -> None:
    with pytest.raises(SequenceError):
        parse_stream(sse(chunk(text("done"), finish="STOP"), chunk(CALL)))


def test_usage_absence_is_none_and_zero_is_kept() -> None:
    assert parse_response(chunk(text("a"), finish="STOP")).usage is None
    zero = chunk(text("a"), finish="STOP")
    zero["usageMetadata"] = {"totalTokenCount": 0}
    assert parse_response(zero).usage == {"totalTokenCount": 0}


# -- limits ---------------------------------------------------------------------------------


def test_max_calls_per_turn() -> None:
    data = sse(chunk(*[call("f", {"i": i}) for i in range(3)], finish="STOP"))
    with pytest.raises(LimitExceededError) as err:
        parse_stream(data, limits=Limits(max_calls_per_turn=2))
    assert err.value.limit == "max_calls_per_turn"


def test_max_items_per_turn_counts_parts_not_text_deltas() -> None:
    deltas = sse(*[chunk(text("x")) for _ in range(10)], chunk(text("y"), finish="STOP"))
    assert len(parse_stream(deltas, limits=Limits(max_items_per_turn=1)).parts) == 1
    many = sse(chunk(*[call("f", {"i": i}) for i in range(3)], finish="STOP"))
    with pytest.raises(LimitExceededError):
        parse_stream(many, limits=Limits(max_items_per_turn=2))


def test_max_text_chars_bounds_a_joined_text_run() -> None:
    data = sse(*[chunk(text("abcd")) for _ in range(5)], chunk(finish="STOP"))
    with pytest.raises(LimitExceededError) as err:
        parse_stream(data, limits=Limits(max_text_chars=10))
    assert err.value.limit == "max_text_chars"


@pytest.mark.parametrize("piece", [7, 10**6], ids=["small-feeds", "one-feed"])
@pytest.mark.parametrize("limit", ["max_line_bytes", "max_event_bytes"])
def test_line_and_event_bounds(limit: str, piece: int) -> None:
    data = sse(chunk(text("a")), chunk(text("x" * 500), finish="STOP"))
    pieces = [data[i : i + piece] for i in range(0, len(data), piece)]
    with pytest.raises(LimitExceededError) as err:
        parse_stream(pieces, limits=Limits(**{limit: 100}))
    assert err.value.limit == limit


@pytest.mark.parametrize("piece", [5, 10**6], ids=["small-feeds", "one-feed"])
def test_max_events_per_stream(piece: int) -> None:
    data = sse(*[chunk(text("x")) for _ in range(5)], chunk(finish="STOP"))
    pieces = [data[i : i + piece] for i in range(0, len(data), piece)]
    with pytest.raises(LimitExceededError):
        parse_stream(pieces, limits=Limits(max_events_per_stream=3))
