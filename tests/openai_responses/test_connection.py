"""The Responses WebSocket connection parser: golden transcripts and named red-team cases.

Every response on a socket keeps the SSE rules (its turn equals what ``parse_stream`` gives
for the same events); what the socket adds -- lanes, steering, truncation on close, the
connection-local cache -- is proved here one case at a time (docs/contracts/
openai-responses-websocket.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgate import (
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.contracts import load_fixture
from callgate.openai_responses import Connection, Turn, parse_connection, parse_stream

from .ws import (
    accepted,
    call_response,
    failed,
    frames,
    on_lane,
    pending,
    steered,
    text_response,
    ws_error,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai_responses"


def expected(events: list[dict]) -> Turn:
    """What the SSE path gives for one response: its turn, or its error's partial turn."""
    try:
        return parse_stream(b"".join(_sse(events)))
    except ProviderError as exc:
        turn = exc.turn
    assert isinstance(turn, Turn)
    return turn


def _sse(events: list[dict]) -> list[bytes]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def feed(conn: Connection, events: list[dict]) -> list[Turn]:
    turns: list[Turn] = []
    for frame in frames(events):
        turns.extend(conn.feed_message(frame))
    return turns


# -- golden ----------------------------------------------------------------------------


def _golden() -> list[list[dict]]:
    streams = []
    for path in sorted(FIXTURES.glob("*.sse")):
        fixture = load_fixture(path)
        if fixture.contract_revision != "2026-11" or path.stem == "failed_after_error":
            continue
        streams.append([obj for _name, obj in fixture.wire_events() if isinstance(obj, dict)])
    return streams


def test_golden_streams_back_to_back_on_one_socket_give_the_sse_turns_in_order() -> None:
    streams = _golden()
    assert len(streams) >= 6
    turns = parse_connection(frames([e for events in streams for e in events]))
    assert list(turns) == [expected(events) for events in streams]
    assert any(t.calls for t in turns)
    assert any(t.status == "incomplete" for t in turns)


def test_golden_stream_with_an_error_then_failed_yields_one_turn_at_the_error() -> None:
    events = [
        obj
        for _n, obj in load_fixture(FIXTURES / "failed_after_error.sse").wire_events()
        if isinstance(obj, dict)
    ]
    error_at = next(i for i, e in enumerate(events) if e["type"] == "error")
    conn = Connection()
    turns = [(i, t) for i, f in enumerate(frames(events)) for t in conn.feed_message(f)]
    assert [i for i, _ in turns] == [error_at]  # at once: a socket has no EOF to wait for
    assert turns[0][1].error is not None
    assert turns[0][1].calls == ()
    conn.close(1000)


def test_golden_steered_response_and_its_successor() -> None:
    """Case 1 of the steering lifecycle: accepted, incomplete (steered), successor."""
    first = steered("resp_1")
    second = call_response("resp_2")
    events = [*first.events[:4], accepted("st_1", "resp_1", 4), *first.events[4:]]
    conn = Connection()
    turns = feed(conn, events + second.events)
    assert [t.response_id for t in turns] == ["resp_1", "resp_2"]
    assert turns[0].status == "incomplete"
    assert turns[0].error is not None
    assert turns[0].error.code == "steered"
    assert turns[0].calls == ()
    assert [c.call_id for c in turns[1].calls] == ["call_resp_2_0"]
    (steer,) = conn.steers
    assert (steer.id, steer.status, steer.successor_id) == ("st_1", "committed", "resp_2")
    conn.close(1000)


def test_a_response_naming_another_parent_does_not_commit_the_steer() -> None:
    """A create the client queued on the lane first runs before the successor."""
    first, queued, successor = steered("resp_1"), text_response("r_q"), text_response("r_s")
    queued.events[0]["response"]["previous_response_id"] = "resp_0"
    successor.events[0]["response"]["previous_response_id"] = "resp_1"
    conn = Connection()
    feed(conn, [first.events[0], accepted("st_1", "resp_1"), *first.events[1:]])
    feed(conn, queued.events)
    assert conn.steers[0].status == "accepted"
    feed(conn, successor.events)
    assert (conn.steers[0].status, conn.steers[0].successor_id) == ("committed", "r_s")


def test_golden_pending_steer_waits_for_the_saved_results_then_commits() -> None:
    """Case 3: the parent completes with calls (released), the steer waits for them."""
    parent = call_response("resp_1", 2)
    conn = Connection()
    turns = feed(conn, [*parent.events[:3], accepted("st_1", "resp_1"), *parent.events[3:]])
    assert len(turns[0].calls) == 2  # the parent completed: its calls are released
    feed(conn, [pending("st_1", "resp_1", [c.call_id for c in turns[0].calls])])
    (steer,) = conn.steers
    assert steer.status == "pending"
    assert [s["call_id"] for s in steer.required_input] == ["call_resp_1_0", "call_resp_1_1"]
    feed(conn, text_response("resp_2").events)
    assert conn.steers[0].status == "committed"
    assert conn.steers[0].successor_id == "resp_2"


def test_golden_failed_steer_leaves_the_running_response_untouched() -> None:
    run = call_response("resp_1")
    conn = Connection()
    events = [*run.events[:5], failed(None, "resp_1", "steering_not_supported"), *run.events[5:]]
    (turn,) = feed(conn, events)
    assert turn == expected(run.events)
    assert len(turn.calls) == 1
    (steer,) = conn.steers
    assert steer.status == "failed"
    assert steer.id is None
    assert steer.input == "go left"
    assert steer.error is not None
    assert steer.error.code == "steering_not_supported"


def test_golden_two_lanes_interleaved_each_keeps_its_own_sequence() -> None:
    a = on_lane(call_response("resp_a", 2).events, "lane.A")
    b = on_lane(text_response("resp_b").events, "lane-B")
    mixed = [e for pair in zip(a, b, strict=False) for e in pair] + a[len(b) :]
    turns = parse_connection(frames(mixed))
    assert {t.response_id for t in turns} == {"resp_a", "resp_b"}
    assert turns[0].response_id == "resp_b"  # the shorter one ended first
    assert turns[1] == expected(call_response("resp_a", 2).events)


def test_request_error_without_a_response_is_a_turn_with_no_id() -> None:
    conn = Connection()
    (turn,) = conn.feed_message(json.dumps(ws_error()))
    assert turn.response_id is None
    assert turn.calls == ()
    assert turn.error is not None
    assert turn.error.code == "previous_response_not_found"
    assert feed(conn, text_response("resp_2").events)[0].text == "hello"  # the socket lives on


# -- red team: the socket's own rules --------------------------------------------------


@pytest.mark.parametrize("code", [1000, 1001, 1006, 1011, None])
def test_close_mid_response_is_a_truncation_whatever_the_code(code: int | None) -> None:
    conn = Connection()
    events = call_response("resp_1").events
    feed(conn, events[:-1])  # everything but response.completed: the calls are all there
    with pytest.raises(TruncatedStreamError) as info:
        conn.close(code)
    assert info.value.turn is not None
    assert info.value.turn.calls == ()
    with pytest.raises(TruncatedStreamError) as again:
        conn.feed_message(frames(events[-1:])[0])
    assert again.value is info.value


def test_close_on_another_lane_truncates_even_if_the_default_lane_finished() -> None:
    conn = Connection()
    feed(conn, text_response("resp_1").events)
    feed(conn, on_lane(call_response("resp_2").events[:3], "x"))
    with pytest.raises(TruncatedStreamError, match="'x'"):
        conn.close(1000)


def test_close_with_an_accepted_steer_leaves_its_outcome_unknown() -> None:
    run = text_response("resp_1")
    conn = Connection()
    feed(conn, [*run.events[:3], accepted("st_1", "resp_1"), *run.events[3:]])
    conn.close(1006)
    assert conn.steers[0].status == "unknown"


def test_steered_ending_without_an_accepted_steer_is_refused() -> None:
    with pytest.raises(SequenceError, match="no steer was accepted"):
        parse_connection(frames(steered("resp_1").events))


def test_steered_response_never_releases_a_finished_call() -> None:
    s = call_response("resp_1")
    body = {**s.events[-1]["response"], "status": "incomplete"}
    body["incomplete_details"] = {"reason": "steered"}
    events = [*s.events[:3], accepted("st_1", "resp_1"), *s.events[3:-1]]
    events.append({**s.events[-1], "type": "response.incomplete", "response": body})
    (turn,) = parse_connection(frames(events))
    assert turn.calls == ()
    assert turn.status == "incomplete"
    assert len([i for i in turn.items if i["type"] == "function_call"]) == 1


def test_steer_accepted_for_a_response_not_seen_on_this_connection_is_refused() -> None:
    with pytest.raises(SequenceError, match="not seen on this connection"):
        parse_connection(frames([accepted("st_1", "resp_elsewhere")]))


def test_steer_accepted_twice_is_refused() -> None:
    run = text_response("resp_1").events
    with pytest.raises(SequenceError, match="accepted twice"):
        parse_connection(frames([run[0], accepted("st_1", "resp_1"), accepted("st_1", "resp_1")]))


def test_pending_before_the_parent_completed_is_refused() -> None:
    run = call_response("resp_1").events
    events = [run[0], accepted("st_1", "resp_1"), pending("st_1", "resp_1", ["c"])]
    with pytest.raises(SequenceError, match="before 'resp_1' completed"):
        parse_connection(frames(events))


def test_pending_for_a_steer_never_accepted_is_refused() -> None:
    events = [*call_response("resp_1").events, pending("st_9", "resp_1", ["c"])]
    with pytest.raises(SequenceError, match="which is unknown"):
        parse_connection(frames(events))


def test_pending_that_moves_the_steer_to_another_parent_is_refused() -> None:
    one = call_response("resp_1").events
    events = [one[0], accepted("st_1", "resp_1"), pending("st_1", "resp_2", ["c"])]
    with pytest.raises(SequenceError, match="changed its target"):
        parse_connection(frames(events))


def test_pending_without_required_input_stubs_is_refused() -> None:
    run = call_response("resp_1").events
    bad = pending("st_1", "resp_1", ["c"]) | {"required_input": [{"call_id": "c"}]}
    with pytest.raises(SchemaError, match="required_input"):
        parse_connection(frames([run[0], accepted("st_1", "resp_1"), *run[1:], bad]))


def test_a_committed_steer_cannot_fail_afterwards() -> None:
    one, two = steered("resp_1").events, text_response("resp_2").events
    events = [one[0], accepted("st_1", "resp_1"), *one[1:], *two, failed("st_1", "resp_1")]
    with pytest.raises(SequenceError, match="failed after it was committed"):
        parse_connection(frames(events))


def test_steering_events_fail_closed_under_the_baseline_without_steering() -> None:
    run = text_response("resp_1").events
    with pytest.raises(UnsupportedProviderState, match="2026-07-21"):
        parse_connection(frames([run[0], accepted("st_1", "resp_1")]), baseline="2026-07-21")


def test_a_response_id_is_used_once_per_connection() -> None:
    events = text_response("resp_1").events
    with pytest.raises(SequenceError, match="already used"):
        parse_connection(frames(events + events))


def test_a_lane_holds_one_running_response() -> None:
    one, two = call_response("resp_1").events, call_response("resp_2").events
    second = dict(two[0], sequence_number=50)  # past resp_1's: only the lane rule is left
    with pytest.raises(SequenceError, match="not allowed in state open"):
        parse_connection(frames([*one[:3], second]))


def test_an_event_on_a_lane_with_no_running_response_is_refused() -> None:
    one = call_response("resp_1").events
    with pytest.raises(SequenceError, match="not allowed in state start"):
        parse_connection(frames([*one[:3], *on_lane(one[3:], "other")]))


def test_events_keep_the_sse_sequence_rule_per_response() -> None:
    one = call_response("resp_1").events
    events = [*one[:4], one[3], *one[4:]]
    with pytest.raises(SequenceError, match="does not increase"):
        parse_connection(frames(events))


def test_only_an_error_event_may_omit_its_sequence_number() -> None:
    one = call_response("resp_1").events
    bare = {k: v for k, v in one[1].items() if k != "sequence_number"}
    with pytest.raises(SchemaError, match="sequence_number"):
        parse_connection(frames([one[0], bare]))


def test_an_error_event_mid_response_ends_it_and_the_lane_moves_on() -> None:
    one = call_response("resp_1").events
    conn = Connection()
    assert feed(conn, one[:-1]) == []
    (turn,) = conn.feed_message(json.dumps(ws_error("server_error")))
    assert turn.response_id == "resp_1"
    assert turn.calls == ()
    assert turn.error is not None
    assert feed(conn, text_response("resp_2").events)[0].response_id == "resp_2"
    conn.close(1000)


def test_stream_id_must_be_a_string() -> None:
    one = text_response("resp_1").events
    with pytest.raises(SchemaError, match="stream_id"):
        parse_connection(frames([dict(one[0], stream_id=7)]))


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ("[1]", SchemaError),
        ('{"type":"error","type":"x"}', JSONError),
        ("{", JSONError),
        ('{"sequence_number":0}', SchemaError),
    ],
)
def test_frames_that_are_not_one_event_object_are_refused(frame: str, error: type) -> None:
    with pytest.raises(error):
        parse_connection([frame])


def test_lanes_in_flight_are_bounded() -> None:
    created = call_response("resp").events[0]
    events = [
        dict(created, stream_id=f"l{i}", response=dict(created["response"], id=f"r{i}"))
        for i in range(34)
    ]
    with pytest.raises(LimitExceededError):
        parse_connection(frames(events))


# -- the boundary: the parser contract on a connection -------------------------------


def test_wrong_input_types_and_mixed_modes_are_usage_errors_that_leave_it_usable() -> None:
    conn = Connection()
    with pytest.raises(UsageError):
        conn.feed_message(7)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        conn.feed_event(7)
    run = text_response("resp_1").events
    conn.feed_event(run[0])
    with pytest.raises(UsageError, match="mixed"):
        conn.feed_message(frames(run[1:2])[0])
    assert [t.text for e in run[1:] for t in conn.feed_event(e)] == ["hello"]
    conn.close(1000)
    conn.close(1000)  # idempotent
    with pytest.raises(UsageError, match="closed"):
        conn.feed_event(run[0])
    with pytest.raises(UsageError):
        conn.close("1000")  # type: ignore[arg-type]


def test_bytes_frames_and_events_give_the_same_turns() -> None:
    events = call_response("resp_1", 2).events + text_response("resp_2").events
    by_bytes = parse_connection([f.encode() for f in frames(events)])
    conn = Connection()
    by_events = [t for e in events for t in conn.feed_event(e)]
    assert list(by_bytes) == by_events
    assert parse_connection(frames(events)) == by_bytes


def test_a_fed_event_is_copied() -> None:
    events = call_response("resp_1").events
    conn = Connection()
    turns = [t for e in events for t in conn.feed_event(e)]
    events[-1]["response"]["output"][0]["arguments"] = "{}"
    assert turns[0].calls[0].arguments == {"city": "c0"}


def test_parse_connection_takes_an_iterable_of_frames() -> None:
    with pytest.raises(UsageError):
        parse_connection("{}")
    with pytest.raises(UsageError):
        parse_connection(3)  # type: ignore[arg-type]
    assert parse_connection([]) == ()
