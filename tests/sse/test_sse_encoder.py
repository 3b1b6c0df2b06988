"""Tests for callgate.sse.encode_event: canonical output that the decoder reads back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import UsageError
from callgate.sse import ServerSentEvent, SSEDecoder, encode_event, encode_json_events

E = ServerSentEvent


def decode(stream: bytes, chunk_size: int | None = None) -> list[ServerSentEvent]:
    dec = SSEDecoder()
    size = chunk_size or max(len(stream), 1)
    events: list[ServerSentEvent] = []
    for i in range(0, len(stream), size):
        events += dec.feed(stream[i : i + size])
    events += dec.finish()
    return events


def test_all_fields_in_canonical_order() -> None:
    ev = E(event="delta", data="a\nb", id="42", retry=3000)
    assert encode_event(ev) == b"event: delta\nid: 42\nretry: 3000\ndata: a\ndata: b\n\n"


def test_absent_fields_are_omitted() -> None:
    assert encode_event(E(data="x")) == b"data: x\n\n"


def test_empty_data_is_one_empty_data_line() -> None:
    assert encode_event(E()) == b"data: \n\n"
    assert decode(encode_event(E())) == [E()]


def test_empty_strings_are_kept_distinct_from_none() -> None:
    ev = E(event="", data="", id="", retry=0)
    assert encode_event(ev) == b"event: \nid: \nretry: 0\ndata: \n\n"
    assert decode(encode_event(ev)) == [ev]


def test_leading_spaces_colons_nul_and_bom_survive() -> None:
    ev = E(event=" spaced", data="\ufeff lead\n: not a comment\n\0", id=" x:y")
    assert decode(encode_event(ev)) == [ev]


def test_non_ascii_is_utf8() -> None:
    assert encode_event(E(data="€")) == "data: €\n\n".encode()


@pytest.mark.parametrize(
    "ev",
    [
        E(event="a\rb"),
        E(event="a\nb"),
        E(id="a\rb"),
        E(id="a\nb"),
        E(id="a\0b"),
        E(data="a\rb"),
        E(data="a\r\nb"),
        E(retry=-1),
        E(retry=True),
        E(retry=1.5),  # type: ignore[arg-type]
        E(retry=10**5000),
        E(data=b"bytes"),  # type: ignore[arg-type]
        E(event=1),  # type: ignore[arg-type]
        E(data="\ud800"),
    ],
)
def test_unencodable_events_are_rejected(ev: ServerSentEvent) -> None:
    with pytest.raises(UsageError):
        encode_event(ev)


def test_non_event_is_rejected() -> None:
    with pytest.raises(UsageError):
        encode_event("data: x\n\n")  # type: ignore[arg-type]


texts = st.text(max_size=20)
events = st.builds(
    ServerSentEvent,
    event=st.none() | texts.filter(lambda s: "\r" not in s and "\n" not in s),
    data=texts.filter(lambda s: "\r" not in s),
    id=st.none() | texts.filter(lambda s: not {"\r", "\n", "\0"} & set(s)),
    retry=st.none() | st.integers(min_value=0, max_value=2**70),
)


@settings(max_examples=300, deadline=None)
@given(events, st.integers(1, 16))
def test_round_trip_of_a_first_event(ev: ServerSentEvent, chunk_size: int) -> None:
    assert decode(encode_event(ev), chunk_size) == [ev]


@settings(max_examples=100, deadline=None)
@given(st.lists(events.filter(lambda ev: ev.id is not None), max_size=6))
def test_round_trip_of_a_stream_with_ids(evs: list[ServerSentEvent]) -> None:
    assert decode(b"".join(map(encode_event, evs))) == evs


def test_encode_json_events_names_each_event_by_its_key() -> None:
    data = encode_json_events([{"type": "a", "n": 1}, {"type": "b", "s": "é"}], name_key="type")
    events = SSEDecoder().feed(data)
    assert [(e.event, e.data) for e in events] == [
        ("a", '{"type":"a","n":1}'),
        ("b", '{"type":"b","s":"é"}'),
    ]


@pytest.mark.parametrize(
    "obj", [{"n": 1}, {"type": 5}, {"type": "a", "x": float("nan")}, {"type": "a", "x": object()}]
)
def test_encode_json_events_refuses_unnamed_or_non_json_objects(obj: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        encode_json_events([obj], name_key="type")
