"""The decoder's data-only fast path (``sse._framing.data_payloads``) and ``feed_data``.

The oracle is the decoder itself with the fast path switched off: on any stream, in any
chunking, under any limits, both must give the same events (data, event, id, retry) or
the same error (type, message, offset), and ``feed_data`` must give the events' data.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import DEFAULT_LIMITS, CallgateError, Limits
from callgate.sse import SSEDecoder, _decoder
from callgate.sse._framing import data_payloads


@contextmanager
def line_by_line() -> Iterator[None]:
    """The decoder with the fast path off: every block through the line interpreter."""
    saved = _decoder.data_payloads
    _decoder.data_payloads = lambda run, bound: None
    try:
        yield
    finally:
        _decoder.data_payloads = saved


def outcome(chunks: list[bytes], limits: Limits, as_data: bool = False) -> Any:
    dec = SSEDecoder(limits=limits)
    out: list[Any] = []
    try:
        for chunk in chunks:
            out += dec.feed_data(chunk) if as_data else dec.feed(chunk)
        dec.finish()
    except CallgateError as exc:
        return (type(exc), exc.message, exc.byte_offset, out, dec.events_dispatched)
    return out, dec.events_dispatched, dec.bytes_fed


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(c for c in cuts if c <= len(stream)), len(stream)]
    return [stream[a:b] for a, b in pairwise(bounds)]


# Mostly whole one-line data events, with every kind of line that must leave the path.
LINES = st.one_of(
    st.sampled_from(['{"a":1}', "x", "", "é𝄞", "[DONE]", "a:b", " lead"]).map(
        lambda p: f"data: {p}\n\n"
    ),
    st.sampled_from(
        [
            "data:nospace\n\n",
            "data: a\ndata: b\n\n",
            ": comment\n\n",
            "event: e\ndata: x\n\n",
            "id: 7\n\n",
            "id: 8\ndata: y\n\n",
            "retry: 5\n",
            "\n",
            "data: cr\r\n\r\n",
            "data: lone\r\r",
            "data: \xff\n\n",
            "data: open",
            "\ufeffdata: bom\n\n",
        ]
    ),
)
TIGHT = Limits(max_line_bytes=16, max_event_bytes=12, max_events_per_stream=6)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(LINES, max_size=14),
    st.lists(st.integers(0, 200), max_size=6),
    st.sampled_from([DEFAULT_LIMITS, TIGHT]),
)
def test_fast_path_matches_the_line_interpreter(
    lines: list[str], cuts: list[int], limits: Limits
) -> None:
    stream = "".join(lines).encode("utf-8", "surrogatepass").replace(b"\xc3\xbf", b"\xff")
    for chunks in (split_at(stream, cuts), [stream]):
        with line_by_line():
            expected = outcome(chunks, limits)
            expected_data = outcome(chunks, limits, as_data=True)
        assert outcome(chunks, limits) == expected
        assert outcome(chunks, limits, as_data=True) == expected_data
        if len(expected) == 3:  # no error: feed_data gives each event's data
            assert expected_data[0] == [event.data for event in expected[0]]


def test_whole_data_events_take_the_fast_path() -> None:
    stream = b"".join(b'data: {"n":%d}\n\n' % i for i in range(5))
    assert data_payloads(stream, 1000) == [f'{{"n":{i}}}' for i in range(5)]
    events = SSEDecoder().feed(stream)
    assert [e.data for e in events] == [f'{{"n":{i}}}' for i in range(5)]
    assert {(e.event, e.id, e.retry) for e in events} == {(None, None, None)}


@pytest.mark.parametrize(
    "run",
    [
        b"data: a\n\n: c\n\n",  # a comment
        b"data: a\ndata: b\n\n",  # two data lines: one event "a\nb"
        b"data:a\n\n",  # no space after the colon
        b"data: a\n\n\n",  # an extra blank line
        b"data: a\n\nevent: e\ndata: b\n\n",
        b"data: a\n",  # the event is not closed
        b"data: \xff\n\n",  # invalid UTF-8: the line interpreter reports it
        b"",
    ],
)
def test_anything_but_whole_one_line_data_events_leaves_the_path(run: bytes) -> None:
    assert data_payloads(run, 1000) is None


def test_fast_path_keeps_the_last_event_id_and_the_limits() -> None:
    dec = SSEDecoder(limits=Limits(max_events_per_stream=3))
    events = dec.feed(b"id: 9\ndata: a\n\n" + b"data: b\n\n" * 2)
    assert [(e.data, e.id) for e in events] == [("a", "9"), ("b", "9"), ("b", "9")]
    with pytest.raises(CallgateError, match="max_events_per_stream"):
        dec.feed(b"data: c\n\n")
    assert data_payloads(b"data: abcd\n\n", 3) is None  # a payload perhaps too large


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"data: a\n", [("a\nb", None), ("c", None)]),  # the open event takes the next line
        (b"event: e\n", [("b", "e"), ("c", None)]),  # a field without data opens it too
        (b"data: a\n\n", [("a", None), ("b", None), ("c", None)]),
    ],
)
def test_an_event_open_before_the_chunk_is_finished_line_by_line(
    head: bytes, expected: list[tuple[str, str | None]]
) -> None:
    dec = SSEDecoder()
    events = dec.feed(head) + dec.feed(b"data: b\n\ndata: c\n\n")
    assert [(e.data, e.event) for e in events] == expected
    data = SSEDecoder()
    payloads = data.feed_data(head) + data.feed_data(b"data: b\n\ndata: c\n\n")
    assert payloads == [d for d, _ in expected]
