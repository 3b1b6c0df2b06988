"""The transition table, exhaustively and under Hypothesis; fuzzing raises only CallgateError."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import CallgateError, ProviderError, SequenceError, TruncatedStreamError
from callgate.gemini_interactions import Parser, parse_stream
from callgate.gemini_interactions._state import ROUTED, TRANSITIONS, State

from .wire import FIXTURES, args_delta, completed, created, fcall, start, stop

# A representative, individually valid event for every routed type (index 0 step open).
SAMPLE: dict[str, dict[str, Any] | str] = {
    "interaction.created": created(),
    "interaction.status_update": {
        "event_type": "interaction.status_update",
        "interaction_id": "int-1",
        "status": "in_progress",
    },
    "step.start": start(1, fcall("b", "g", {})),
    "step.delta": {
        "event_type": "step.delta",
        "index": 0,
        "delta": {"type": "thought_signature", "signature": "c2ln"},
    },
    "step.stop": stop(0),
    "interaction.completed": completed("completed"),
    "error": {"event_type": "error", "error": {"message": "boom"}},
    "[DONE]": "[DONE]",
}
# How to bring a fresh parser into each state (with step 0 open where steps are legal).
PREFIX: dict[State, list[dict[str, Any] | str]] = {
    State.START: [],
    State.OPEN: [created(), start(0, {"type": "thought"})],
    State.DONE: [created(), completed("completed")],
    State.CLOSED: [created(), completed("completed"), "[DONE]"],
}  # State.FAILED: see the test of the failed state below
assert set(PREFIX) == set(State) - {State.FAILED}


def test_table_covers_only_routed_events() -> None:
    assert {event for _, event in TRANSITIONS} <= set(ROUTED)
    assert len(set(ROUTED)) == 8


def test_the_failed_state_has_no_row_and_every_event_reraises_the_first_error() -> None:
    assert not [key for key in TRANSITIONS if key[0] is State.FAILED]
    parser = Parser()
    with pytest.raises(SequenceError) as first:
        parser.feed_event(stop(0))
    assert parser.state is State.FAILED
    for event_type in ROUTED:
        with pytest.raises(SequenceError) as again:
            parser.feed_event(SAMPLE[event_type])
        assert again.value is first.value


@pytest.mark.parametrize("state", list(PREFIX), ids=lambda s: s.value)
@pytest.mark.parametrize("event_type", ROUTED)
def test_every_state_event_pair_is_legal_or_a_sequence_error(state: State, event_type: str) -> None:
    parser = Parser()
    for event in PREFIX[state]:
        parser.feed_event(event)
    sample = SAMPLE[event_type]
    if event_type == "interaction.completed" and state is State.OPEN:
        parser.feed_event(stop(0))  # a terminal needs every step closed
    legal = (state, event_type) in TRANSITIONS
    if not legal:
        with pytest.raises(SequenceError):
            parser.feed_event(sample)
        return
    if event_type == "error":
        with pytest.raises(ProviderError):
            parser.feed_event(sample)
    elif event_type == "[DONE]" and state is not State.DONE:
        with pytest.raises(TruncatedStreamError):
            parser.feed_event(sample)
    else:
        parser.feed_event(sample)


POOL: list[dict[str, Any] | str] = [
    created(),
    created("int-2"),
    start(0, fcall("a", "f", {})),
    start(1, fcall("b", "g")),
    start(0, {"type": "thought"}),
    start(2, {"type": "model_output"}),
    args_delta(0, '{"x":'),
    args_delta(0, "1}"),
    args_delta(1, "{}"),
    args_delta(1, None),
    {"event_type": "step.delta", "index": 2, "delta": {"type": "text", "text": "t"}},
    {
        "event_type": "step.delta",
        "index": 0,
        "delta": {"type": "thought_signature", "signature": "s"},
    },
    stop(0),
    stop(1),
    stop(2),
    SAMPLE["interaction.status_update"],
    completed("requires_action"),
    completed("completed"),
    completed("failed"),
    SAMPLE["error"],
    "[DONE]",
    {**stop(0), "event_id": "dup"},
    {**stop(1), "event_id": "dup"},
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=14))
def test_random_event_sequences_fail_only_with_callgate_errors(events: list[Any]) -> None:
    parser = Parser()
    try:
        for event in events:
            parser.feed_event(event)
        turn = parser.finish()
    except CallgateError as exc:
        error: CallgateError | None = exc
        turn = None
    else:
        error = None
    if error is not None:
        assert error.turn is None or error.turn.calls == ()
        return
    assert turn is not None
    # whatever got through is a coherent gate decision
    if turn.calls:
        assert turn.status == "requires_action"
        assert all(type(c.arguments) is dict for c in turn.calls)
    else:
        assert turn.status == "completed"


GOLDEN = (FIXTURES / "weather_call_with_thought.sse").read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(GOLDEN) - 1), st.binary(min_size=0, max_size=3)),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_bytes_fail_only_with_callgate_errors(edits: list[tuple[int, bytes]]) -> None:
    raw = bytearray(GOLDEN)
    for position, replacement in edits:
        raw[position : position + 1] = replacement
    try:
        turn = parse_stream(bytes(raw))
    except CallgateError:
        return
    assert turn.status in {"requires_action", "completed"}


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "event_type",
                        "index",
                        "delta",
                        "step",
                        "type",
                        "id",
                        "name",
                        "arguments",
                        "interaction",
                        "status",
                        "event_id",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_structurally_random_events_fail_only_with_callgate_errors(obj: Any) -> None:
    parser = Parser()
    try:
        parser.feed_event(created())
        parser.feed_event(start(0, fcall("a", "f", {})))
        parser.feed_event(obj)
        parser.finish()
    except CallgateError:
        return
