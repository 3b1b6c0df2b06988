"""Red-team cases for the stream parser: each test names the attack or drift it closes."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import (
    CallgateError,
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.gemini_interactions import Parser, State, Turn, parse_stream

from .wire import (
    args_delta,
    call_stream,
    completed,
    created,
    delta,
    fcall,
    sse,
    start,
    status_update,
    stop,
)

Events = list[dict[str, Any] | str]


def run(events: Events, **kwargs: Any) -> Turn:
    return parse_stream(sse(events), **kwargs)


def fails(exc: type[CallgateError], events: Events, **kwargs: Any) -> CallgateError:
    with pytest.raises(exc) as info:
        run(events, **kwargs)
    err = info.value
    assert err.provider == "google"
    # a failing parse never releases anything, and the partial turn says so
    assert err.turn is None or err.turn.calls == ()
    return err


# -- event ids ---------------------------------------------------------------------------


def test_event_id_idempotent_replay_is_ignored() -> None:
    """A resumed stream re-delivers events: identical id + payload must not double arguments."""
    events: Events = [
        created(eid="1"),
        start(0, fcall("c", "f", {}), eid="2"),
        args_delta(0, '{"a":', eid="3"),
        args_delta(0, '{"a":', eid="3"),
        args_delta(0, "1}", eid="4"),
        stop(0, eid="5"),
        stop(0, eid="5"),
        completed(eid="6"),
        completed(eid="6"),
    ]
    turn = run(events)
    assert turn.calls[0].arguments == {"a": 1}


def test_event_id_conflict_is_a_sequence_error() -> None:
    """Same event_id, different payload: a forged or corrupted re-delivery is refused."""
    events: Events = [
        created(eid="1"),
        start(0, fcall("c", "f", {}), eid="2"),
        args_delta(0, '{"a":1}', eid="3"),
        args_delta(0, '{"a":2}', eid="3"),
    ]
    fails(SequenceError, events)


def test_event_id_must_be_a_string() -> None:
    fails(SchemaError, [created(), {**stop(0), "event_id": 7}])


# -- status_update -----------------------------------------------------------------------


def test_no_status_update_at_all_is_fine() -> None:
    """status_update is optional: a stream without one still completes."""
    turn = run(call_stream())
    assert turn.status == "requires_action"
    assert len(turn.calls) == 1


def test_a_status_update_without_its_fields_parses() -> None:
    events = call_stream()
    events.insert(1, {"event_type": "interaction.status_update"})
    turn = parse_stream(sse(events))
    assert [c.call_id for c in turn.calls] == ["c1"]


def test_a_status_update_for_another_interaction_is_refused() -> None:
    events = call_stream()
    events.insert(1, status_update("in_progress", "other-interaction"))
    fails(SequenceError, events)


def test_status_update_contradicting_the_terminal_never_overrides_it() -> None:
    """A status_update saying 'completed' cannot turn a requires_action terminal into a final
    answer, nor 'requires_action' release calls of a completed terminal."""
    events = call_stream()
    events.insert(1, status_update("completed"))
    events.insert(3, status_update("failed"))
    turn = run(events)
    assert turn.status == "requires_action"
    assert len(turn.calls) == 1
    text_only: Events = [
        created(),
        status_update("requires_action"),
        start(0, {"type": "model_output"}),
        delta(0, {"type": "text", "text": "hi"}),
        stop(0),
        completed("completed"),
    ]
    assert run(text_only).calls == ()


def test_status_update_for_another_interaction_is_refused() -> None:
    fails(SequenceError, [created(), status_update("in_progress", "other")])


def test_terminal_for_another_interaction_is_refused() -> None:
    fails(SequenceError, [created(), completed("completed", "other")])


# -- index rules -------------------------------------------------------------------------


def test_negative_and_non_contiguous_indexes_are_association_keys() -> None:
    events: Events = [
        created(),
        start(-3, fcall("a", "f", {})),
        start(1000, fcall("b", "g", {"x": 1})),
        args_delta(-3, '{"y":2}'),
        stop(1000),
        stop(-3),
        completed(),
    ]
    turn = run(events)
    # steps are in step.start order, never sorted by index
    assert [c.call_id for c in turn.calls] == ["a", "b"]
    assert turn.calls[0].arguments == {"y": 2}
    assert turn.calls[1].arguments == {"x": 1}


@pytest.mark.parametrize("index", [2**31, -(2**31) - 1, 10**30])
def test_index_outside_int32_is_a_schema_error(index: int) -> None:
    fails(SchemaError, [created(), start(index, fcall("a", "f", {}))])


@pytest.mark.parametrize("index", [True, 1.0, "1", None])
def test_index_of_another_json_type_is_a_schema_error(index: Any) -> None:
    """``true`` and ``1.0`` hash like 1 in Python: they must not reach the open-step table."""
    events: Events = [created(), start(1, fcall("a", "f", {})), args_delta(index, "{}")]
    fails(SchemaError, events)


def test_start_on_an_open_index_is_a_sequence_error() -> None:
    fails(SequenceError, [created(), start(0, fcall("a", "f", {})), start(0, fcall("b", "f", {}))])


@pytest.mark.parametrize("event", [args_delta(9, "{}"), stop(9)])
def test_delta_or_stop_on_an_unopened_index_is_a_sequence_error(event: dict[str, Any]) -> None:
    fails(SequenceError, [created(), start(0, fcall("a", "f", {})), event])


def test_an_index_may_be_reused_after_its_stop() -> None:
    events: Events = [
        created(),
        start(0, fcall("a", "f", {"n": 1})),
        stop(0),
        start(0, fcall("b", "f", {"n": 2})),
        stop(0),
        completed(),
    ]
    assert [c.arguments["n"] for c in run(events).calls] == [1, 2]


def test_interleaved_parallel_calls_never_bleed_into_each_other() -> None:
    """No 'current call' variable: fragments follow their own index."""
    events: Events = [created(), start(0, fcall("a", "f", {})), start(1, fcall("b", "g", {}))]
    for left, right in zip(['{"k":', '"A"}'], ['{"k":', '"B"}'], strict=True):
        events += [args_delta(1, right), args_delta(0, left)]
    events += [stop(1), stop(0), completed()]
    turn = run(events)
    assert [(c.call_id, c.arguments) for c in turn.calls] == [("a", {"k": "A"}), ("b", {"k": "B"})]


def test_steps_still_open_at_the_terminal_release_nothing() -> None:
    fails(SequenceError, [created(), start(0, fcall("a", "f", {})), completed()])


# -- arguments ---------------------------------------------------------------------------


def test_arguments_in_step_start_only() -> None:
    events: Events = [created(), start(0, fcall("a", "f", {"q": [1]})), stop(0), completed()]
    assert run(events).calls[0].arguments == {"q": [1]}


def test_arguments_in_deltas_only_with_no_arguments_field_in_start() -> None:
    events: Events = [created(), start(0, fcall("a", "f")), args_delta(0, '{"q":1}'), stop(0)]
    assert run([*events, completed()]).calls[0].arguments == {"q": 1}


def test_arguments_in_start_and_deltas_is_a_conflict() -> None:
    events: Events = [created(), start(0, fcall("a", "f", {"q": 1})), args_delta(0, '{"q":2}')]
    fails(SequenceError, events)


def test_delta_without_arguments_adds_nothing_never_the_text_none() -> None:
    events: Events = [
        created(),
        start(0, fcall("a", "f", {})),
        args_delta(0, None),
        args_delta(0, '{"q":'),
        delta(0, {"type": "arguments_delta", "arguments": None}),
        args_delta(0, "true}"),
        stop(0),
        completed(),
    ]
    assert run(events).calls[0].arguments == {"q": True}


def test_zero_argument_call_completes_from_empty_object() -> None:
    events: Events = [created(), start(0, fcall("a", "ping", {})), stop(0), completed()]
    assert run(events).calls[0].arguments == {}


def test_function_call_with_no_arguments_anywhere_fails_closed() -> None:
    fails(SchemaError, [created(), start(0, fcall("a", "f")), stop(0), completed()])


@pytest.mark.parametrize(
    ("fragments", "exc"),
    [
        (["[1,2]"], SchemaError),
        (['"text"'], SchemaError),
        (['{"a":1,"a":2}'], JSONError),
        (['{"a":NaN}'], JSONError),
        (['{"a":1'], JSONError),
        (['{"a":1}', "{}"], JSONError),
    ],
)
def test_arguments_must_be_one_strict_json_object(fragments: list[str], exc: type[Any]) -> None:
    events = call_stream(fragments=fragments)
    fails(exc, events)


def test_arguments_delta_of_wrong_json_type_is_a_schema_error() -> None:
    fails(SchemaError, [created(), start(0, fcall("a", "f", {})), args_delta(0, 5)])  # type: ignore[arg-type]


def test_duplicate_function_call_id_in_one_turn_is_refused() -> None:
    events: Events = [
        created(),
        start(0, fcall("same", "f", {})),
        start(1, fcall("same", "g", {})),
    ]
    fails(SequenceError, events)


# -- step and delta kinds ----------------------------------------------------------------


def test_unknown_step_type_fails_closed() -> None:
    err = fails(UnsupportedProviderState, [created(), start(0, {"type": "shell_call", "id": "s"})])
    assert err.wire_type == "shell_call"


def test_unknown_delta_type_fails_closed() -> None:
    events: Events = [created(), start(0, fcall("a", "f", {})), delta(0, {"type": "args_v2"})]
    fails(UnsupportedProviderState, events)


def test_delta_type_newer_than_the_baseline_fails_closed() -> None:
    """processing_call deltas arrived after google-genai 2.12.1: unknown to 2026-07-21."""
    events: Events = [
        created(),
        start(0, {"type": "model_output"}),
        delta(0, {"type": "processing_call", "signature": "x"}),
    ]
    fails(UnsupportedProviderState, events, baseline="2026-07-21")
    fails(SequenceError, events, baseline="2026-11")  # known, but not a model_output delta


def test_delta_of_another_step_kind_is_a_sequence_error() -> None:
    """Text cannot be smuggled into a function_call; arguments cannot go to model output."""
    fails(
        SequenceError,
        [created(), start(0, fcall("a", "f", {})), delta(0, {"type": "text", "text": "{}"})],
    )
    fails(
        SequenceError,
        [created(), start(0, {"type": "model_output"}), args_delta(0, "{}")],
    )


MCP_CALL = {
    "type": "mcp_server_tool_call",
    "id": "m",
    "name": "drop_table",
    "server_name": "db",
    "arguments": {"t": "users"},
}


def test_mcp_step_under_current_baseline_is_a_non_client_step() -> None:
    events: Events = [
        created(),
        start(0, MCP_CALL),
        stop(0),
        start(1, {"type": "model_output"}),
        stop(1),
        completed("completed"),
    ]
    turn = run(events, baseline="2026-11")
    assert [s["type"] for s in turn.steps] == ["mcp_server_tool_call", "model_output"]
    assert turn.calls == ()


def test_mcp_step_under_the_2026_07_21_baseline_is_a_non_client_step_too() -> None:
    """google-genai 2.12.1 decodes the MCP server pair (17 step types), so that baseline
    knows it; what it does not know (retrieval, tool_search, processing) fails closed."""
    events: Events = [created(), start(0, MCP_CALL), stop(0), completed("completed")]
    assert run(events, baseline="2026-07-21").calls == ()
    retrieval = {"type": "retrieval_call", "id": "r", "arguments": {}}
    fails(UnsupportedProviderState, [created(), start(0, retrieval)], baseline="2026-07-21")


def test_mcp_requires_action_is_not_a_client_call() -> None:
    """An MCP call is executed by the server: requires_action with only it releases nothing."""
    events: Events = [created(), start(0, MCP_CALL), stop(0), completed("requires_action")]
    fails(UnsupportedProviderState, events)


@pytest.mark.parametrize("kind", ["user_input", "function_result"])
def test_input_steps_in_a_streamed_model_turn_are_refused(kind: str) -> None:
    step = {"type": kind, "content": []} if kind == "user_input" else {}
    if kind == "function_result":
        step = {"type": kind, "call_id": "c", "result": "forged"}
    fails(SequenceError, [created(), start(0, step)])


def test_hosted_step_with_a_pinned_delta_and_annotations_is_provably_complete() -> None:
    """A hosted delta of the step's own type whose fields the step declares, and an
    annotation after the text it annotates, assemble exactly: nothing is opaque."""
    events: Events = [
        created(),
        start(0, {"type": "code_execution_call", "id": "x", "arguments": {}}),
        delta(0, {"type": "code_execution_call", "arguments": {"code": "print(1)"}}),
        stop(0),
        start(1, {"type": "model_output"}),
        delta(1, {"type": "text", "text": "see"}),
        delta(1, {"type": "text_annotation_delta", "annotations": [{"type": "url_citation"}]}),
        stop(1),
        completed("completed"),
    ]
    turn = run(events)
    assert turn.opaque == ()
    assert turn.steps[0]["arguments"] == {"code": "print(1)"}
    assert turn.steps[1]["content"] == [
        {"type": "text", "text": "see", "annotations": [{"type": "url_citation"}]}
    ]
    assert [(c.tool, c.id, c.status) for c in turn.hosted_calls] == [("code_execution", "x", None)]
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
        ("url_citation", None, None, None)
    ]


def test_hosted_delta_without_a_place_on_the_step_is_kept_but_opaque() -> None:
    events: Events = [
        created(),
        start(0, {"type": "file_search_call", "id": "f"}),
        stop(0),
        start(1, {"type": "file_search_result", "call_id": "f"}),
        delta(1, {"type": "file_search_result", "result": [{"text": "chunk"}]}),
        stop(1),
        start(2, {"type": "model_output"}),
        delta(2, {"type": "text_annotation_delta", "annotations": [{"type": "file_citation"}]}),
        delta(2, {"type": "text", "text": "x"}),
        stop(2),
        completed("completed"),
    ]
    turn = run(events)
    assert turn.opaque == (1, 2)
    assert "file_search_result delta field 'result'" in turn.opaque_reasons[0]
    assert "before any text" in turn.opaque_reasons[1]
    assert turn.steps[1]["result"] == [{"text": "chunk"}]  # kept, nothing lost


# -- terminal statuses -------------------------------------------------------------------


@pytest.mark.parametrize("status", ["failed", "cancelled", "incomplete", "budget_exceeded"])
def test_failed_terminal_statuses_release_nothing(status: str) -> None:
    err = fails(ProviderError, call_stream(status=status))
    assert isinstance(err, ProviderError)
    assert err.error_type == status
    assert err.turn is not None
    assert err.turn.status == status
    assert [s["type"] for s in err.turn.steps] == ["function_call"]


@pytest.mark.parametrize(
    "status", ["in_progress", "queued", "idle", "requires_continuation", "requires_review", ""]
)
def test_unknown_or_non_terminal_status_fails_closed(status: str) -> None:
    fails(UnsupportedProviderState, call_stream(status=status))


def test_completed_interaction_with_an_unanswered_call_is_contradictory() -> None:
    fails(SequenceError, call_stream(status="completed"))


def test_requires_action_without_a_call_fails_closed() -> None:
    events: Events = [created(), completed("requires_action")]
    fails(UnsupportedProviderState, events)


def test_completed_final_answer_returns_a_turn_without_calls() -> None:
    events: Events = [
        created(),
        start(0, {"type": "model_output"}),
        delta(0, {"type": "text", "text": "Done."}),
        stop(0),
        completed("completed"),
    ]
    turn = run(events)
    assert turn.calls == ()
    assert turn.steps[0]["content"] == [{"type": "text", "text": "Done."}]


def test_error_event_releases_nothing_and_keeps_what_was_seen() -> None:
    events = call_stream(done=False)
    events.insert(4, {"event_type": "error", "error": {"code": "503", "message": "overloaded"}})
    err = fails(ProviderError, events)
    assert isinstance(err, ProviderError)
    assert (err.error_code, err.provider_message) == ("503", "overloaded")
    assert err.event_index == 4
    assert err.wire_type == "error"


def test_failed_interaction_errors_are_reported() -> None:
    events = call_stream(status="failed", done=False)
    events[-1]["interaction"]["errors"] = [{"code": "RESOURCE_EXHAUSTED", "message": "quota"}]  # type: ignore[index]
    err = fails(ProviderError, events)
    assert isinstance(err, ProviderError)
    assert err.error_code == "RESOURCE_EXHAUSTED"


def test_missing_terminal_is_a_truncated_stream() -> None:
    err = fails(TruncatedStreamError, call_stream()[:-2])
    assert err.turn is not None
    assert err.turn.interaction_id == "int-1"


def test_done_before_terminal_is_a_truncated_stream() -> None:
    events = call_stream()
    events.insert(-2, "[DONE]")
    fails(TruncatedStreamError, events)


def test_events_after_done_are_refused() -> None:
    fails(SequenceError, [*call_stream(), completed()])


def test_events_after_the_terminal_are_refused() -> None:
    fails(SequenceError, [*call_stream(done=False), start(5, fcall("late", "f", {}))])


def test_a_second_hop_after_the_terminal_is_refused() -> None:
    """Auto-continuation hops (requires_continuation) are out of scope: fail closed."""
    events: Events = [created(), completed("requires_continuation")]
    fails(UnsupportedProviderState, events)


def test_lifecycle_event_embedding_steps_fails_closed() -> None:
    events = call_stream(done=False)
    events[-1]["interaction"]["steps"] = [fcall("z", "f", {"x": 1})]  # type: ignore[index]
    fails(UnsupportedProviderState, events)


# -- usage -------------------------------------------------------------------------------


def test_usage_absent_is_none_and_zero_is_zero() -> None:
    assert run(call_stream()).usage is None
    zero = {"total_input_tokens": 0, "total_output_tokens": 0, "total_tokens": 0}
    events = call_stream(done=False)
    events[-1] = completed(usage=zero)
    assert run(events).usage == zero
    partial = {"total_tokens": 9, "future_field": {"x": 1}}
    events[-1] = completed(usage=partial)
    assert run(events).usage == partial


def test_usage_of_wrong_type_is_a_warning_not_a_refusal() -> None:
    events = call_stream(done=False)
    events[-1] = completed(usage=[1])  # type: ignore[arg-type]
    turn = parse_stream(sse(events))
    assert (turn.usage, turn.warnings) == (None, ("interaction 'usage' is not an object: ignored",))
    assert [c.call_id for c in turn.calls] == ["c1"]


# -- framing and routing -----------------------------------------------------------------


def test_event_line_disagreeing_with_event_type_is_refused() -> None:
    raw = sse(call_stream(), names=True).replace(b"event: step.stop", b"event: step.start")
    with pytest.raises(SchemaError):
        parse_stream(raw)


def test_unknown_event_type_fails_closed() -> None:
    fails(UnsupportedProviderState, [created(), {"event_type": "interaction.cancelled"}])


@pytest.mark.parametrize("data", [b"data: [1]\n\n", b"data: {}\n\n", b'data: {"event_type":1}\n\n'])
def test_non_object_or_untyped_events_are_schema_errors(data: bytes) -> None:
    with pytest.raises(SchemaError):
        parse_stream(data)


def test_first_event_must_be_interaction_created() -> None:
    fails(SequenceError, call_stream()[1:])


def test_unknown_extra_fields_are_kept() -> None:
    events = call_stream(done=False)
    events[1]["step"]["x_trace"] = {"k": 1}  # type: ignore[index]
    events[-1] = completed(x_new_field=True)
    turn = run(events)
    assert turn.steps[0]["x_trace"] == {"k": 1}


# -- limits ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "events"),
    [
        ("max_argument_bytes", call_stream(fragments=['{"a":"', "x" * 40, '"}'])),
        ("max_fragments_per_call", call_stream(fragments=['{"a":'] + ["1"] * 20 + ["}"])),
        ("max_calls_per_turn", [created()] + [start(i, fcall(str(i), "f", {})) for i in range(20)]),
        ("max_items_per_turn", [created()] + [start(i, {"type": "thought"}) for i in range(20)]),
        (
            "max_text_chars",
            [created(), start(0, {"type": "model_output"})]
            + [delta(0, {"type": "text", "text": "abcdefgh"}) for _ in range(5)],
        ),
    ],
)
def test_limits_are_enforced_before_buffers_grow(limit: str, events: Events) -> None:
    from callgate import DEFAULT_LIMITS

    limits = DEFAULT_LIMITS.replace(**{limit: 16})
    err = fails(LimitExceededError, events, limits=limits)
    assert isinstance(err, LimitExceededError)
    assert err.limit == limit


# -- parser lifecycle --------------------------------------------------------------------


def test_failed_parser_stays_failed_and_reraises_the_same_error() -> None:
    parser = Parser()
    parser.feed_bytes(sse([created()]))
    with pytest.raises(SequenceError) as first:
        parser.feed_bytes(sse([stop(3)]))
    with pytest.raises(SequenceError) as again:
        parser.feed_bytes(sse([completed()]))
    assert again.value is first.value
    with pytest.raises(SequenceError) as at_finish:
        parser.finish()
    assert at_finish.value is first.value


def test_finish_is_idempotent_and_feeding_after_it_is_misuse() -> None:
    parser = Parser()
    parser.feed_bytes(sse(call_stream()))
    turn = parser.finish()
    assert parser.finish() is turn
    with pytest.raises(UsageError):
        parser.feed_bytes(b"data: [DONE]\n\n")


def test_mixing_bytes_and_events_is_misuse() -> None:
    parser = Parser()
    parser.feed_bytes(sse([created()]))
    with pytest.raises(UsageError):
        parser.feed_event(start(0, fcall("a", "f", {})))


def test_feed_event_copies_the_callers_dict() -> None:
    parser = Parser()
    events = call_stream(fragments=['{"a":1}'], done=False)
    for event in events:
        parser.feed_event(event)  # type: ignore[arg-type]
        event.clear()  # type: ignore[union-attr]
    assert parser.finish().calls[0].arguments == {"a": 1}


def test_feed_event_refuses_an_event_holding_a_non_json_value_as_a_json_error() -> None:
    parser = Parser()
    with pytest.raises(JSONError, match="to_dict"):
        parser.feed_event({"event_type": "error", "x": {1, 2}})
    assert parser.state is State.FAILED


@pytest.mark.parametrize("obj", [[1], 3, b"{}", "interaction.created"])
def test_feed_event_refuses_a_non_mapping_as_misuse_and_stays_usable(obj: Any) -> None:
    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_event(obj)
    for event in call_stream(fragments=['{"a":1}']):
        parser.feed_event(event)
    assert parser.finish().calls[0].arguments == {"a": 1}


def test_bad_constructor_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        Parser(baseline="2025-01")
    with pytest.raises(UsageError):
        Parser(limits={"max_json_depth": 3})  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        parse_stream("data: x")  # type: ignore[arg-type]


class _NotADict:
    """A Mapping by registration only: dict() of it raises a bare KeyError."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Any:
        return iter(["event_type"])

    def keys(self) -> Any:
        return ["event_type"]

    def __len__(self) -> int:
        return 1


def test_a_stray_error_from_a_callers_mapping_is_converted_once_at_the_boundary() -> None:
    from collections.abc import Mapping

    Mapping.register(_NotADict)
    parser = Parser()
    with pytest.raises(SchemaError, match="KeyError") as caught:
        parser.feed_event(_NotADict())  # type: ignore[arg-type]
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.provider == "google"
    assert parser.state is State.FAILED
    with pytest.raises(SchemaError) as again:
        parser.finish()
    assert again.value is caught.value
