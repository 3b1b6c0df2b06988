"""The transition table, checked pair by pair and against an independent model; fuzzing."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import CallgateError, ProviderError, SequenceError, TruncatedStreamError
from callgate.contracts import load_fixtures
from callgate.openai_chat_completions import Parser, State, parse_stream
from callgate.openai_chat_completions._events import K_DONE, K_ERROR, KINDS
from callgate.openai_chat_completions._state import TRANSITIONS

from .wire import FIXTURES, HEAD, USAGE, args, chunk, first, sse

STREAMS = [f for f in load_fixtures(FIXTURES) if f.layer == "wire-sse"]
DONE = "[DONE]"

# A representative, individually valid chunk of every kind.
SAMPLE: dict[str, Any] = {
    "error": {"error": {"message": "boom", "type": "server_error"}},
    "delta": chunk({"content": "a"}),
    "finish": chunk({}, "stop"),
    "empty": {**HEAD, "choices": [], "usage": USAGE},
    "[DONE]": DONE,
}
assert set(SAMPLE) == set(KINDS)
# How to bring a fresh parser into each state.
PREFIX: dict[State, list[Any]] = {
    State.START: [],
    State.OPEN: [chunk({"content": "a"})],
    State.DONE: [chunk({"content": "a"}, "stop")],
    State.CLOSED: [chunk({"content": "a"}, "stop"), DONE],
}  # State.FAILED: see the test of the failed state below
assert set(PREFIX) == set(State) - {State.FAILED}


def test_table_has_an_empty_failed_row_and_only_known_kinds() -> None:
    assert {kind for _, kind in TRANSITIONS} == set(KINDS)
    assert not [key for key in TRANSITIONS if key[0] in (State.FAILED, State.CLOSED)]


def test_refusing_rows_lead_to_failed_and_only_finish_rows_lead_to_done() -> None:
    for (state, kind), (_handler, target) in TRANSITIONS.items():
        early_done = kind == K_DONE and state in (State.START, State.OPEN)
        assert (target is State.FAILED) == (kind == K_ERROR or early_done), (state, kind)
        if target is State.DONE:
            assert kind == "finish" or state is State.DONE, (state, kind)
    assert (State.DONE, "delta") not in TRANSITIONS
    assert (State.DONE, "finish") not in TRANSITIONS


@pytest.mark.parametrize("state", list(PREFIX), ids=lambda s: s.value)
@pytest.mark.parametrize("kind", KINDS)
def test_every_state_kind_pair_is_legal_or_a_sequence_error(state: State, kind: str) -> None:
    parser = Parser()
    for obj in PREFIX[state]:
        parser.feed_event(obj)
    assert parser.state is state
    if (state, kind) not in TRANSITIONS:
        with pytest.raises(SequenceError):
            parser.feed_event(SAMPLE[kind])
        assert parser.state is State.FAILED
        return
    target = TRANSITIONS[state, kind][1]
    if target is State.FAILED:
        with pytest.raises(ProviderError if kind == K_ERROR else TruncatedStreamError):
            parser.feed_event(SAMPLE[kind])
        assert parser.state is State.FAILED
        return
    parser.feed_event(SAMPLE[kind])
    assert parser.state is target
    if target is State.OPEN:
        with pytest.raises(TruncatedStreamError):
            parser.finish()
    else:
        assert parser.finish().finish_reason == "stop"


def test_the_failed_state_has_no_row_and_every_chunk_reraises_the_first_error() -> None:
    parser = Parser()
    parser.feed_event(SAMPLE["finish"])
    with pytest.raises(SequenceError) as first_error:
        parser.feed_event(SAMPLE["delta"])
    assert parser.state is State.FAILED
    for kind in KINDS:
        with pytest.raises(SequenceError) as again:
            parser.feed_event(SAMPLE[kind])
        assert again.value is first_error.value


def test_bytes_need_done_where_events_may_end_at_the_finish() -> None:
    chunks = [chunk({"content": "a"}), chunk({}, "stop")]
    parser = Parser()
    parser.feed_bytes(sse(chunks, done=False))
    assert parser.state is State.DONE
    with pytest.raises(TruncatedStreamError, match="DONE"):
        parser.finish()
    parser = Parser()
    for obj in chunks:
        parser.feed_event(obj)
    assert parser.finish().text == "a"


# -- an independent reference model over a small alphabet --------------------------------

OPS: dict[str, Any] = {
    "text": chunk({"content": "a"}),
    "call": None,  # a new whole call per use (its own index), see _op
    "args": None,  # a fragment "x" for the last call: its arguments stop being JSON
    "stop": chunk({}, "stop"),
    "tools": chunk({}, "tool_calls"),
    "usage": SAMPLE["empty"],
    "error": SAMPLE["error"],
    "done": DONE,
}


class Model:
    """What a strict gate must do with one stream, written without the parser's table:
    deltas stream until the choice's finish reason; after it only usage trailers, the
    provider's error and [DONE] may come; after [DONE] nothing; an error ends everything.
    A turn is released only after [DONE] (bytes) and only from a consistent finish."""

    def __init__(self) -> None:
        self.phase = "streaming"  # streaming | finished | closed | failed
        self.text = ""
        self.calls = 0
        self.open_args = False  # some call's arguments got a fragment after "{}"
        self.finish: str | None = None

    def step(self, op: str) -> type[CallgateError] | None:
        if op == "args" and not self.calls:
            return None  # nothing is sent
        if op == "error" and self.phase != "closed":
            self.phase = "failed"
            return ProviderError
        if self.phase == "closed":
            self.phase = "failed"
            return SequenceError
        if op == "usage":
            return None
        if op == "done":
            if self.phase == "streaming":
                self.phase = "failed"
                return TruncatedStreamError
            self.phase = "closed"
            return None
        if self.phase == "finished":
            self.phase = "failed"
            return SequenceError
        if op == "text":
            self.text += "a"
        elif op == "call":
            self.calls += 1
        elif op == "args":
            self.open_args = True  # "{}" + "x": that call's arguments are no longer JSON
        else:
            self.finish = "stop" if op == "stop" else "tool_calls"
            self.phase = "finished"
            return self._gate()
        return None

    def _gate(self) -> type[CallgateError] | None:
        if self.finish == "stop" and self.calls:
            self.phase = "failed"
            return SequenceError
        if self.finish == "tool_calls" and not self.calls:
            self.phase = "failed"
            return SequenceError
        if self.finish == "tool_calls" and self.open_args:
            self.phase = "failed"
            return CallgateError  # the last call's arguments are not JSON
        return None


def _op(op: str, calls: int) -> Any:
    if op == "call":
        entry = {
            "index": calls,
            "id": f"c{calls}",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
        }
        return chunk({"tool_calls": [entry]})
    return OPS[op]  # "args" is built by the caller (None: no call to append to)


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(st.sampled_from(sorted(OPS)), max_size=9), as_bytes=st.booleans())
def test_the_parser_agrees_with_the_reference_model(ops: list[str], as_bytes: bool) -> None:
    model, parser = Model(), Parser()
    for op in ops:
        calls = model.calls
        obj = _op(op, calls)
        if op == "args" and calls:
            obj = args(calls - 1, "x")
        expected = model.step(op)

        def feed(obj: Any = obj) -> None:
            if obj is None:
                return
            if as_bytes:
                parser.feed_bytes(sse([obj], done=False) if obj != DONE else b"data: [DONE]\n\n")
            else:
                parser.feed_event(obj)

        if expected is None:
            feed()
            continue
        with pytest.raises(expected):
            feed()
        assert parser.state is State.FAILED
        return
    if model.phase == "streaming" or (model.phase == "finished" and as_bytes):
        with pytest.raises(TruncatedStreamError):
            parser.finish()
        return
    turn = parser.finish()
    assert (turn.text, len(turn.calls)) == (
        model.text,
        model.calls if model.finish == "tool_calls" else 0,
    )


# -- fuzzing: nothing but CallgateError ----------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_bytes_raise_only_callgate_errors(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(STREAMS)).data
    mutated = bytearray(base)
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(mutated) - 1))
        mutated[pos] = data.draw(st.integers(0, 255))
    with contextlib.suppress(CallgateError):
        parse_stream(
            bytes(mutated), profile=data.draw(st.sampled_from([None, "ollama", "openrouter"]))
        )


KEYS = ["choices", "delta", "message", "tool_calls", "function", "arguments", "name", "id", "index"]
KEYS += ["finish_reason", "content", "refusal", "usage", "error", "object", "type", "logprobs"]


@settings(max_examples=150, deadline=None)
@given(
    obj=st.recursive(
        st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
        ),
        max_leaves=14,
    )
)
def test_fuzzed_chunk_and_body_dicts_raise_only_callgate_errors(obj: Any) -> None:
    from callgate.openai_chat_completions import parse_response

    parser = Parser(profile="vllm")
    with contextlib.suppress(CallgateError):
        parser.feed_event(obj if isinstance(obj, dict) else {"choices": obj})
        parser.feed_event(first(0, "c", "f"))
        parser.feed_event(chunk({}, "tool_calls"))
        parser.finish()
    with contextlib.suppress(CallgateError):
        parse_response(obj if isinstance(obj, dict) else {"choices": obj})
