"""The transition table, checked pair by pair and against an independent model; fuzzing."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import CallgateError, ProviderError, SequenceError, TruncatedStreamError
from callgate.contracts import load_fixtures
from callgate.gemini_generate_content import Parser, State, parse_stream
from callgate.gemini_generate_content._events import K_BLOCKED, K_ERROR, KINDS
from callgate.gemini_generate_content._state import TRANSITIONS

from .wire import FIXTURES, call, chunk, sse, text

STREAMS = [f for f in load_fixtures(FIXTURES) if f.layer == "wire-sse"]

# A representative, individually valid chunk of every kind.
SAMPLE: dict[str, dict[str, Any]] = {
    "error": {"error": {"code": 500, "message": "boom", "status": "INTERNAL"}},
    "blocked": {"promptFeedback": {"blockReason": "SAFETY"}},
    "finish": chunk(text("."), finish="STOP"),
    "content": chunk(text("a")),
    "empty": {"usageMetadata": {"totalTokenCount": 1}, "responseId": "r-1"},
}
# How to bring a fresh parser into each state.
PREFIX: dict[State, list[dict[str, Any]]] = {
    State.START: [],
    State.OPEN: [chunk(text("a"))],
    State.DONE: [chunk(text("a"), finish="STOP")],
}  # State.FAILED: see the test of the failed state below
assert set(PREFIX) == set(State) - {State.FAILED}


def test_table_has_an_empty_failed_row_and_only_known_kinds() -> None:
    assert {kind for _, kind in TRANSITIONS} == set(KINDS)
    assert not [key for key in TRANSITIONS if key[0] is State.FAILED]


def test_refusing_rows_lead_to_failed_and_only_finish_rows_lead_to_done() -> None:
    for (state, kind), (_handler, target) in TRANSITIONS.items():
        assert (target is State.FAILED) == (kind in (K_ERROR, K_BLOCKED)), (state, kind)
        if target is State.DONE:
            assert kind == "finish" or state is State.DONE, (state, kind)
    # Once the candidate finished, no candidate may stream again.
    assert (State.DONE, "content") not in TRANSITIONS
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
    if kind in ("error", "blocked"):
        with pytest.raises(ProviderError):
            parser.feed_event(SAMPLE[kind])
        assert parser.state is State.FAILED is target
        return
    parser.feed_event(SAMPLE[kind])
    assert parser.state is target
    if target is State.OPEN:
        with pytest.raises(TruncatedStreamError):
            parser.finish()
    else:
        assert parser.finish().finish_reason == "STOP"


def test_the_failed_state_has_no_row_and_every_chunk_reraises_the_first_error() -> None:
    parser = Parser()
    parser.feed_event(SAMPLE["finish"])
    with pytest.raises(SequenceError) as first:
        parser.feed_event(SAMPLE["content"])
    assert parser.state is State.FAILED
    for kind in KINDS:
        with pytest.raises(SequenceError) as again:
            parser.feed_event(SAMPLE[kind])
        assert again.value is first.value


# -- an independent reference model over a small alphabet --------------------------------

OPS: dict[str, dict[str, Any]] = {
    "text": chunk(text("a")),
    "call": chunk(call("f", {"n": 1})),
    "finish": chunk(text("."), finish="STOP"),
    "empty": SAMPLE["empty"],
    "error": SAMPLE["error"],
    "blocked": SAMPLE["blocked"],
}


class Model:
    """What a strict gate must do with one stream, written without the parser's table:
    chunks stream until one carries finishReason; after it only usage trailers (and the
    provider's error) may come; an error or a refused prompt ends everything."""

    def __init__(self) -> None:
        self.phase = "streaming"  # streaming | finished | failed
        self.text = ""
        self.calls = 0

    def step(self, op: str) -> type[CallgateError] | None:
        """Apply ``op``; the error it must raise (None if legal)."""
        if self.phase == "failed":
            return None  # the caller stops at the first error
        if op == "error":
            self.phase = "failed"
            return ProviderError
        if op == "empty":
            return None
        if self.phase == "finished":
            self.phase = "failed"
            return SequenceError
        if op == "blocked":
            self.phase = "failed"
            return ProviderError
        if op == "text":
            self.text += "a"
        elif op == "call":
            self.calls += 1
        else:
            self.text += "."
            self.phase = "finished"
        return None


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(st.sampled_from(sorted(OPS)), max_size=8), as_bytes=st.booleans())
def test_the_parser_agrees_with_the_reference_model(ops: list[str], as_bytes: bool) -> None:
    model, parser = Model(), Parser()

    def feed(op: str) -> None:
        if as_bytes:
            parser.feed_bytes(sse(OPS[op]))
        else:
            parser.feed_event(OPS[op])

    for op in ops:
        expected = model.step(op)
        if expected is None:
            feed(op)
            continue
        with pytest.raises(expected):
            feed(op)
        assert parser.state is State.FAILED
        return
    if model.phase != "finished":
        with pytest.raises(TruncatedStreamError):
            parser.finish()
        return
    turn = parser.finish()
    assert (turn.text, len(turn.calls), parser.state) == (model.text, model.calls, State.DONE)


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
        parse_stream(bytes(mutated))


@settings(max_examples=100, deadline=None)
@given(
    obj=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "candidates",
                        "content",
                        "parts",
                        "text",
                        "functionCall",
                        "finishReason",
                        "name",
                        "args",
                        "id",
                        "thoughtSignature",
                        "index",
                        "usageMetadata",
                        "error",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_fuzzed_chunk_dicts_raise_only_callgate_errors(obj: Any) -> None:
    parser = Parser()
    with contextlib.suppress(CallgateError):
        parser.feed_event(obj if isinstance(obj, dict) else {"candidates": obj})
        parser.feed_event(chunk(call("f"), finish="STOP"))
        parser.finish()
