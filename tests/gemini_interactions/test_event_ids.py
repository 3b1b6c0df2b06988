"""event_id dedup: the same semantics in fixed-size memory per seen id."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import SequenceError, canonical_bytes
from callgate.gemini_interactions import Parser, parse_stream
from callgate.gemini_interactions._event_ids import MAX_KEPT_ID_CHARS, _canonical_text, _encode

from .wire import args_delta, completed, created, fcall, sse, start, stop


def _stream(ids: list[str], text: str = "x" * 4096) -> list[dict[str, Any]]:
    """A call whose argument string is fed by one delta per id, each ``text`` long."""
    events: list[dict[str, Any]] = [created(eid="c"), start(0, fcall("k", "f", {}), eid="s")]
    events.append(args_delta(0, '{"q":"', eid="open"))
    events += [args_delta(0, text, eid=eid) for eid in ids]
    events += [args_delta(0, '"}', eid="close"), stop(0, eid="t"), completed(eid="d")]
    return events


def test_seen_ids_keep_a_fixed_size_record_not_the_event_text() -> None:
    """10^6 small events cost 331 MiB for 117 MiB fed when each id kept its event text:
    now each seen id keeps a 16-byte digest, whatever the event's size."""
    parser = Parser()
    parser.feed_bytes(sse(_stream([f"e{n}" for n in range(50)])))
    seen = parser._ids._seen
    assert len(seen) == 50 + 6
    assert {len(digest) for digest in seen.values()} == {16}
    assert all(type(digest) is bytes for digest in seen.values())
    assert parser.finish().calls[0].arguments == {"q": "x" * 4096 * 50}


def test_a_long_id_is_kept_as_its_digest_and_still_deduplicates() -> None:
    long_id = "r" * (MAX_KEPT_ID_CHARS + 1)
    events = _stream([long_id, "short"], text="ab")
    events.insert(4, events[3])  # the long-id delta re-delivered
    parser = Parser()
    parser.feed_bytes(sse(events))
    assert set(map(type, parser._ids._seen)) == {str, bytes}
    assert all(len(key) <= MAX_KEPT_ID_CHARS for key in parser._ids._seen)
    assert parser.finish().calls[0].arguments == {"q": "abab"}


def test_a_long_id_replayed_with_another_payload_is_a_sequence_error() -> None:
    long_id = "r" * 10_000
    events = _stream([long_id], text="ab")
    events.insert(4, args_delta(0, "zz", eid=long_id))
    with pytest.raises(SequenceError, match="another payload"):
        parse_stream(sse(events))


def test_a_replay_reserialised_with_another_key_order_is_still_ignored() -> None:
    events = _stream(["e1", "e2"], text="ab")
    replay = json.dumps(dict(reversed(list(events[3].items()))), separators=(" , ", " : "))
    data = sse(events[:4]) + f"data: {replay}\n\n".encode() + sse(events[4:])
    assert parse_stream(data).calls[0].arguments == {"q": "abab"}


def test_the_same_replay_is_ignored_through_feed_event() -> None:
    events = _stream(["e1"], text="ab")
    parser = Parser()
    for event in events[:4]:
        parser.feed_event(event)
    parser.feed_event(dict(reversed(list(events[3].items()))))
    for event in events[4:]:
        parser.feed_event(event)
    assert parser.finish().calls[0].arguments == {"q": "ab"}


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_the_dedup_encoder_writes_exactly_the_canonical_bytes(value: Any) -> None:
    """The dedup skips canonical_bytes' validation walk (the value is decoded strict JSON),
    never its form: a replay through feed_bytes and through feed_event digests alike."""
    assert _encode(value).encode("utf-8") == canonical_bytes(value)


_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
_KEY = st.sampled_from(["type", "arguments", "text", "signature"]) | _TEXT
_DELTAS = st.dictionaries(_KEY, _TEXT, min_size=2, max_size=2) | st.dictionaries(
    _KEY, _TEXT | st.integers() | st.none(), max_size=3
)
_DELTA_EVENTS = st.fixed_dictionaries(
    {
        "event_type": st.sampled_from(["step.delta", "step.stop", ""]) | _TEXT,
        "event_id": _TEXT,
        "index": st.integers(-(2**40), 2**40),
        "delta": _DELTAS.flatmap(lambda d: st.permutations(list(d.items())).map(dict)),
    },
    optional={"extra": _JSON},
).flatmap(lambda d: st.permutations(list(d.items())).map(dict))


@settings(max_examples=400, deadline=None)
@given(_DELTA_EVENTS)
def test_the_delta_fast_path_writes_exactly_the_canonical_bytes(event: dict[str, Any]) -> None:
    """The hot step.delta shape is written by an f-string, not the encoder: in any key
    order, with any strings, its bytes (so its digest) are canonical_bytes' own."""
    assert _canonical_text(event).encode("utf-8") == canonical_bytes(event)


def test_a_delta_replay_with_its_keys_reordered_is_ignored_and_a_changed_one_refused() -> None:
    events = _stream(["e1"], text="ab")
    delta = events[3]
    swapped = {**delta, "delta": dict(reversed(list(delta["delta"].items())))}
    data = sse(events[:4]) + sse([swapped]) + sse(events[4:])
    assert parse_stream(data).calls[0].arguments == {"q": "ab"}
    changed = {**delta, "delta": {**delta["delta"], "arguments": "zz"}}
    with pytest.raises(SequenceError, match="another payload"):
        parse_stream(sse(events[:4]) + sse([changed]) + sse(events[4:]))
