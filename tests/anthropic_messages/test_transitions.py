"""The transition table: every (state, event) pair is legal or a typed error, checked
exhaustively and with Hypothesis-generated event orders; fuzzed bytes raise only
CallgateError subclasses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import CallgateError, ProviderError, SequenceError
from callgate.anthropic_messages import Parser, State, parse_stream
from callgate.anthropic_messages._state import TRANSITIONS

from .wire import (
    MESSAGE_STOP,
    PING,
    block_start,
    block_stop,
    message_delta,
    message_start,
    text_delta,
    wire_fixtures,
)

START, BETWEEN_BLOCKS, IN_BLOCK = State.START, State.BETWEEN_BLOCKS, State.IN_BLOCK
STOPPING, DONE, COMPLETE = State.STOPPING, State.DONE, State.COMPLETE

EVENT_TYPES = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
]
ERROR = {"type": "error", "error": {"type": "api_error", "message": "boom"}}


def make_event(kind: str, next_index: int, open_index: int) -> dict[str, Any]:
    """A well-formed event of ``kind`` whose index fits the model, so only order matters."""
    if kind == "message_start":
        return message_start()
    if kind == "content_block_start":
        return block_start(next_index, {"type": "text", "text": ""})
    if kind == "content_block_delta":
        return text_delta(open_index, "x")
    if kind == "content_block_stop":
        return block_stop(open_index)
    if kind == "message_delta":
        return message_delta("end_turn")
    if kind == "message_stop":
        return dict(MESSAGE_STOP)
    if kind == "ping":
        return dict(PING)
    return dict(ERROR)


def _complete_start() -> dict[str, Any]:
    """A message_start that carries the finished message (programmatic tool calling)."""
    event = message_start()
    event["message"]["content"] = [{"type": "text", "text": "done"}]
    event["message"]["stop_reason"] = "end_turn"
    return event


PREFIXES: dict[State, list[dict[str, Any]]] = {
    START: [],
    BETWEEN_BLOCKS: [message_start()],
    IN_BLOCK: [message_start(), block_start(0, {"type": "text", "text": ""})],
    STOPPING: [message_start(), message_delta("end_turn")],
    DONE: [message_start(), message_delta("end_turn"), dict(MESSAGE_STOP)],
    COMPLETE: [_complete_start()],
}


@pytest.mark.parametrize("state", list(PREFIXES), ids=lambda s: s.name)
@pytest.mark.parametrize("kind", EVENT_TYPES)
def test_every_state_event_pair_is_legal_or_a_sequence_error(state: State, kind: str) -> None:
    parser = Parser()
    for event in PREFIXES[state]:
        parser.feed_event(event)
    event = make_event(kind, next_index=0, open_index=0)
    if kind == "error" and (state, kind) in TRANSITIONS:
        with pytest.raises(ProviderError):
            parser.feed_event(event)
    elif (state, kind) in TRANSITIONS:
        parser.feed_event(event)
    else:
        with pytest.raises(SequenceError):
            parser.feed_event(event)


def test_done_accepts_nothing() -> None:
    assert not [key for key in TRANSITIONS if key[0] == DONE]


def test_every_state_has_a_prefix() -> None:
    assert set(PREFIXES) == {state for state, _ in TRANSITIONS} | {DONE}


def test_complete_accepts_only_message_stop_ping_and_error() -> None:
    assert sorted(kind for state, kind in TRANSITIONS if state == COMPLETE) == [
        "error",
        "message_stop",
        "ping",
    ]


@settings(max_examples=300, deadline=None)
@given(kinds=st.lists(st.sampled_from(EVENT_TYPES), max_size=14))
def test_random_event_orders_follow_the_table(kinds: list[str]) -> None:
    parser = Parser()
    state, blocks, open_index = START, 0, -1
    for kind in kinds:
        event = make_event(kind, blocks, open_index)
        entry = TRANSITIONS.get((state, kind))
        if entry is None:
            with pytest.raises(SequenceError):
                parser.feed_event(event)
            return
        if kind == "error":
            with pytest.raises(ProviderError):
                parser.feed_event(event)
            return
        parser.feed_event(event)
        if kind == "content_block_start":
            open_index = blocks
        elif kind == "content_block_stop":
            blocks, open_index = blocks + 1, -1
        state = entry[1]
    if state == DONE:
        assert parser.finish().complete
    else:
        with pytest.raises(CallgateError):
            parser.finish()


FIXTURES = wire_fixtures()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(min_value=0, max_value=len(FIXTURES) - 1),
    edits=st.lists(
        st.tuples(st.floats(min_value=0, max_value=1), st.binary(min_size=0, max_size=4)),
        min_size=1,
        max_size=4,
    ),
)
def test_fuzzed_streams_raise_only_callgate_errors(
    which: int, edits: list[tuple[float, bytes]]
) -> None:
    data = bytearray(FIXTURES[which].data)
    for where, replacement in edits:
        at = int(where * len(data))
        data[at : at + len(replacement)] = replacement
    try:
        turn = parse_stream(bytes(data))
    except CallgateError:
        return
    for call in turn.calls:
        assert type(call.arguments) is dict


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(
        st.dictionaries(
            st.sampled_from(["type", "index", "delta", "message", "content_block", "usage"]),
            st.one_of(
                st.sampled_from(EVENT_TYPES),
                st.integers(-1, 3),
                st.none(),
                st.text(max_size=3),
                st.dictionaries(st.sampled_from(["type", "text", "partial_json"]), st.text()),
            ),
        ),
        max_size=8,
    )
)
def test_fuzzed_event_dicts_raise_only_callgate_errors(events: list[dict[str, Any]]) -> None:
    parser = Parser()
    try:
        parser.feed_event(message_start())
        for event in events:
            parser.feed_event(event)
        parser.finish()
    except CallgateError:
        pass
