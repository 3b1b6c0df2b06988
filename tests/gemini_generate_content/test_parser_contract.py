"""The one parser contract, and the data:-only framing (the table and fuzzing:
test_transitions.py)."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import (
    JSONError,
    ProviderError,
    SchemaError,
    UsageError,
)
from callgate.contracts import load_fixtures
from callgate.gemini_generate_content import Parser, parse_response, parse_stream
from callgate.gemini_generate_content._handlers import Handlers

from .wire import FIXTURES, chunk, sse, text

STREAMS = [f for f in load_fixtures(FIXTURES) if f.layer == "wire-sse"]


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
        parser.feed_event({"error": {"code": 500, "message": "boom", "status": "INTERNAL"}})
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
