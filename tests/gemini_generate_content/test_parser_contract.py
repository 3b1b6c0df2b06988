"""The one parser contract, the transition table pair by pair, and fuzzing."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import (
    CallgateError,
    JSONError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UsageError,
)
from callgate.contracts import load_fixtures
from callgate.gemini_generate_content import Parser, State, parse_response, parse_stream
from callgate.gemini_generate_content._events import KINDS
from callgate.gemini_generate_content._handlers import Handlers
from callgate.gemini_generate_content._state import TRANSITIONS

from .wire import FIXTURES, call, chunk, sse, text

STREAMS = [f for f in load_fixtures(FIXTURES) if f.layer == "wire-sse"]

SAMPLE: dict[str, dict[str, Any]] = {
    "error": {"error": {"code": 500, "message": "boom", "status": "INTERNAL"}},
    "blocked": {"promptFeedback": {"blockReason": "SAFETY"}},
    "finish": chunk(text("."), finish="STOP"),
    "content": chunk(text("a")),
    "empty": {"usageMetadata": {"totalTokenCount": 1}, "responseId": "r-1"},
}
PREFIX: dict[State, list[dict[str, Any]]] = {
    State.START: [],
    State.OPEN: [chunk(text("a"))],
    State.DONE: [chunk(text("a"), finish="STOP")],
}


def test_table_has_an_empty_failed_row_and_only_known_kinds() -> None:
    assert {kind for _, kind in TRANSITIONS} == set(KINDS)
    assert not [key for key in TRANSITIONS if key[0] is State.FAILED]


@pytest.mark.parametrize("state", list(PREFIX), ids=lambda s: s.value)
@pytest.mark.parametrize("kind", KINDS)
def test_every_state_kind_pair_is_legal_or_a_sequence_error(state: State, kind: str) -> None:
    parser = Parser()
    for obj in PREFIX[state]:
        parser.feed_event(obj)
    if (state, kind) not in TRANSITIONS:
        with pytest.raises(SequenceError):
            parser.feed_event(SAMPLE[kind])
        return
    if kind in ("error", "blocked"):
        with pytest.raises(ProviderError):
            parser.feed_event(SAMPLE[kind])
        return
    parser.feed_event(SAMPLE[kind])
    if (state, kind) == (State.START, "empty") or TRANSITIONS[state, kind][1] is State.OPEN:
        with pytest.raises(TruncatedStreamError):
            parser.finish()
    else:
        assert parser.finish().finish_reason == "STOP"


def test_after_a_protocol_error_every_call_reraises_the_same_object() -> None:
    parser = Parser()
    parser.feed_bytes(sse(chunk(text("a"))))
    with pytest.raises(SchemaError) as first:
        parser.feed_bytes(b"data: [1]\n\n")
    for again in (
        lambda: parser.feed_bytes(b""),
        parser.finish,
        lambda: parser.feed_bytes(sse(chunk(text("b"), finish="STOP"))),
    ):
        with pytest.raises(SchemaError) as later:
            again()
        assert later.value is first.value
    assert first.value.turn is not None
    assert first.value.turn.calls == ()
    assert first.value.turn.text == "a"
    assert first.value.event_index == 1
    assert first.value.provider == "google"


def test_failed_event_mode_parser_reraises_from_feed_event_too() -> None:
    parser = Parser()
    with pytest.raises(ProviderError) as first:
        parser.feed_event(SAMPLE["error"])
    with pytest.raises(ProviderError) as later:
        parser.feed_event(chunk(text("a")))
    assert later.value is first.value


def test_finish_after_success_returns_the_same_turn_and_feeding_is_usage_error() -> None:
    parser = Parser()
    parser.feed_bytes(STREAMS[0].data)
    turn = parser.finish()
    assert parser.finish() is turn
    with pytest.raises(UsageError):
        parser.feed_bytes(b"")
    assert parser.finish() is turn


def test_mixing_feed_bytes_and_feed_event_is_usage_error_and_leaves_parser_usable() -> None:
    parser = Parser()
    parser.feed_bytes(sse(chunk(text("a"))))
    with pytest.raises(UsageError):
        parser.feed_event(chunk(text("b")))
    parser.feed_bytes(sse(chunk(text("b"), finish="STOP")))
    assert parser.finish().text == "ab"


@pytest.mark.parametrize("bad", [[1], "data", 3, None, b"{}"])
def test_feed_event_of_a_non_mapping_is_usage_error(bad: Any) -> None:
    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_event(bad)
    parser.feed_event(chunk(text("ok"), finish="STOP"))  # still usable
    assert parser.finish().text == "ok"


@pytest.mark.parametrize("value", [float("nan"), {1, 2}, object(), b"x"])
def test_a_non_json_value_inside_an_event_is_json_error(value: Any) -> None:
    parser = Parser()
    with pytest.raises(JSONError):
        parser.feed_event({"candidates": [], "x": value})


def test_feed_bytes_of_a_str_is_usage_error() -> None:
    parser = Parser()
    with pytest.raises(UsageError):
        parser.feed_bytes("data: {}")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        parse_stream("data: {}")  # type: ignore[arg-type]


@pytest.mark.parametrize("stray", [KeyError("k"), TypeError("t"), ValueError("v")])
def test_a_stray_error_in_a_handler_is_converted_once_at_the_boundary(
    monkeypatch: pytest.MonkeyPatch, stray: Exception
) -> None:
    def broken(self: Any, obj: Any) -> None:
        raise stray

    monkeypatch.setattr(Handlers, "_on_content", broken)
    parser = Parser()
    with pytest.raises(SchemaError) as err:
        parser.feed_event(chunk(text("a")))
    assert err.value.__cause__ is stray
    assert err.value.provider == "google"
    assert err.value.wire_type == "content"
    with pytest.raises(SchemaError) as again:
        parser.finish()
    assert again.value is err.value


@pytest.mark.parametrize(
    "kwargs", [{"limits": 3}, {"baseline": "2020-01-01"}, {"candidate_index": -1}]
)
def test_bad_constructor_arguments_are_usage_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Parser(**kwargs)


@pytest.mark.parametrize("bad", [3, [1], None])
def test_parse_response_takes_mapping_bytes_or_str(bad: Any) -> None:
    with pytest.raises(UsageError):
        parse_response(bad)
    with pytest.raises(SchemaError):
        parse_response(b"[1]")
    with pytest.raises(JSONError):
        parse_response("{")


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


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_a_multi_line_data_event_joins_with_newline_at_any_line_end(eol: bytes) -> None:
    head = b'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]},' + eol
    tail = b'data: "finishReason":"STOP"}]}' + eol + eol
    body = sse(chunk(text("a"))).replace(b"\n", eol) + head + tail
    for pieces in ([body], [body[i : i + 1] for i in range(len(body))]):
        assert parse_stream(pieces).text == "ahi"


def test_blank_lines_between_events_dispatch_nothing() -> None:
    data = b"\n\n\n" + sse(chunk(text("a"))) + b"\n\n\n\n" + sse(chunk(text("b"), finish="STOP"))
    assert parse_stream(data).text == "ab"
