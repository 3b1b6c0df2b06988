"""Properties of the connection parser: any schedule of responses on one socket.

A WebSocket frame is one event, so "any split" of a connection is any interleaving of its
responses' events across lanes (each lane keeps its own order), cut anywhere by a close.
For every such schedule: each response that ended gives exactly the turn the SSE path
gives for its events, in the order the terminals arrived; a close with a response still
running is a truncation; steers commit exactly when a successor was created on their lane.
The writer the mock uses (``_render.render_events``) round-trips through the connection.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import CallgateError, TruncatedStreamError
from callgate.mock._script import make_splitter
from callgate.openai_responses import Connection, Turn, parse_connection, parse_stream
from callgate.openai_responses import _render as openai_render

from .test_connection import expected
from .ws import accepted, call_response, frames, on_lane, steered, text_response

LANES = (None, "lane.A", "b-2")


@dataclasses.dataclass
class Planned:
    rid: str
    lane: str | None
    events: list[dict[str, Any]]  # on its lane, in order
    steer: str | None  # the steer accepted for it (a steered response)


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[Planned], list[dict[str, Any]], int]:
    """Responses on lanes, one random interleaving of the lanes, and a cut point."""
    planned: list[Planned] = []
    for n in range(draw(st.integers(1, 6))):
        rid, lane = f"resp_{n}", draw(st.sampled_from(LANES))
        kind = draw(st.sampled_from(["calls", "text", "steered"]))
        steer = None
        if kind == "calls":
            events = call_response(rid, draw(st.integers(1, 3))).events
        elif kind == "text":
            events = text_response(rid, draw(st.text(max_size=5))).events
        else:
            steer = f"st_{n}"
            body = steered(rid).events
            at = draw(st.integers(1, len(body) - 1))  # after created, before the terminal
            events = [*body[:at], accepted(steer, rid, seq=body[at - 1]["sequence_number"]),
                      *body[at:]]  # fmt: skip
            # Steer events carry their own sequence number; the response's keep increasing.
        planned.append(Planned(rid, lane, on_lane(events, lane), steer))
    queues = {lane: [e for p in planned if p.lane == lane for e in p.events] for lane in LANES}
    order: list[dict[str, Any]] = []
    while any(queues.values()):
        lane = draw(st.sampled_from([k for k, q in queues.items() if q]))
        order.append(queues[lane].pop(0))
    cut = draw(st.integers(0, len(order)))
    return planned, order, cut


def _is_terminal(event: dict[str, Any]) -> bool:
    return event["type"] in ("response.completed", "response.incomplete", "response.failed")


@settings(max_examples=120, deadline=None)
@given(schedules())
def test_any_schedule_gives_the_sse_turns_in_terminal_order(
    plan: tuple[list[Planned], list[dict[str, Any]], int],
) -> None:
    planned, order, cut = plan
    by_id = {p.rid: p for p in planned}
    conn = Connection()
    turns: list[Turn] = []
    for frame in frames(order[:cut]):
        turns.extend(conn.feed_message(frame))
    seen = order[:cut]
    ended = [e["response"]["id"] for e in seen if _is_terminal(e)]
    assert [t.response_id for t in turns] == ended
    for turn in turns:
        own = [
            {k: v for k, v in e.items() if k != "stream_id"}
            for e in by_id[turn.response_id].events
            if not e["type"].startswith("response.steer")
        ]
        assert turn == expected(own)
        assert not turn.calls or turn.status == "completed"
    created = {e["response"]["id"] for e in seen if e["type"] == "response.created"}
    running = created - set(ended)
    if running:
        with pytest.raises(TruncatedStreamError) as info:
            conn.close(1000)
        assert info.value.turn is not None
        assert info.value.turn.calls == ()
        assert info.value.turn.response_id in running
    else:
        conn.close(1000)
    # A steer commits iff a later response was created on its lane before the cut.
    statuses = {s.id: s.status for s in conn.steers}
    for p in planned:
        if p.steer is None or p.steer not in statuses:
            continue
        later = [q for q in planned[planned.index(p) + 1 :] if q.lane == p.lane]
        committed = bool(later) and later[0].rid in created
        assert statuses[p.steer] == ("committed" if committed else "unknown"), p


# -- the mock's writer through the connection ------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_ARGS = st.dictionaries(_TEXT, st.integers() | _TEXT | st.booleans(), max_size=3)
_CHUNKING = st.sampled_from(["whole", "char"]) | st.builds(
    lambda n: {"fixed": n}, st.integers(1, 5)
)


@st.composite
def rendered(draw: st.DrawFn, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One scripted turn written as the mock writes it: (item specs, wire events)."""
    items: list[dict[str, Any]] = []
    if draw(st.booleans()):
        items.append({"type": "message", "id": f"msg_{n}", "text": draw(_TEXT)})
    for k in range(draw(st.integers(0, 3))):
        arguments = json.dumps(draw(_ARGS), separators=(",", ":"))
        items.append({"type": "function_call", "id": f"fc_{n}_{k}", "call_id": f"call_{n}_{k}",
                      "name": "tool", "arguments": arguments})  # fmt: skip
    events = openai_render.render_events(
        response_id=f"resp_{n}",
        model="m",
        items=items,
        split=make_splitter(draw(_CHUNKING)),
        interleave=draw(st.booleans()) and not any(i["type"] == "message" for i in items),
    )
    return items, events


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_mock_writer_round_trips_through_the_connection(data: st.DataObject) -> None:
    turns_in = [data.draw(rendered(n)) for n in range(data.draw(st.integers(1, 4)))]
    lanes = [data.draw(st.sampled_from(LANES)) for _ in turns_in]
    conn = Connection()
    got: list[Turn] = []
    for (_items, events), lane in zip(turns_in, lanes, strict=True):
        for frame in frames(on_lane(events, lane)):
            got.extend(conn.feed_message(frame))
    conn.close(1000)
    assert len(got) == len(turns_in)
    for turn, (items, events) in zip(got, turns_in, strict=True):
        assert turn == parse_stream(openai_render.encode_sse(events))
        calls = [
            (i["call_id"], json.loads(i["arguments"])) for i in items if i["type"] != "message"
        ]
        assert [(c.call_id, c.arguments) for c in turn.calls] == calls


# -- mutations: hostile frames raise only callgate errors and never forge a call --------

_JSON_VALUE = st.none() | st.booleans() | st.integers(-3, 3) | _TEXT | st.just({}) | st.just([])


def _transcript() -> list[dict[str, Any]]:
    one = steered("resp_1").events
    two = call_response("resp_2", 2).events
    three = on_lane(call_response("resp_3").events, "lane.A")
    return [one[0], accepted("st_1", "resp_1", 0), *one[1:], *two[:4], *three, *two[4:]]


@st.composite
def mutated(draw: st.DrawFn) -> list[str]:
    events = _transcript()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(events) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "swap", "field", "lane", "cut"]))
        event = json.loads(json.dumps(events[at]))
        if how == "drop":
            del events[at]
        elif how == "repeat":
            events.insert(at, event)
        elif how == "swap" and at + 1 < len(events):
            events[at], events[at + 1] = events[at + 1], events[at]
        elif how == "field":
            key = draw(st.sampled_from(sorted(event)))
            event[key] = draw(_JSON_VALUE)
            events[at] = event
        elif how == "lane":
            event["stream_id"] = draw(st.sampled_from(["lane.A", "other", None]))
            events[at] = event
    texts = frames(events)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(texts) - 1))
        texts[at] = texts[at][: draw(st.integers(0, len(texts[at])))]
    return texts


_ORIGINAL_CALLS = {
    (c.call_id, json.dumps(c.arguments, sort_keys=True))
    for t in parse_connection(frames(_transcript()))
    for c in t.calls
}


@settings(max_examples=200, deadline=None)
@given(mutated())
def test_mutated_frames_raise_only_callgate_errors_and_release_no_forged_call(
    texts: list[str],
) -> None:
    conn = Connection()
    released: list[Turn] = []
    try:
        for text in texts:
            released.extend(conn.feed_message(text))
        conn.close(1000)
    except CallgateError:
        pass
    for turn in released:
        for c in turn.calls:
            assert (c.call_id, json.dumps(c.arguments, sort_keys=True)) in _ORIGINAL_CALLS
