"""The openai SDK's own WebSocket event objects fed as they are.

``ResponsesConnection.recv()`` decodes a frame with ``construct_type_unchecked`` into
``ResponsesServerEvent`` (openai 3.57.0: the 59 stream events with ``stream_id``, the
nested WebSocket ``error`` and the three steering events) or, in 2.46.0, into the plain
stream-event union (steering events decode as its first member, their ``type`` kept).
Fed to ``Connection.feed_event``, those objects give the turns the frames give; under the
2026-07-21 baseline a steering event fails closed. Runs under openai 3.57.0 and, in the
baseline venv, 2.46.0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import UnsupportedProviderState
from callgate.openai_responses import Connection, Turn, parse_connection

from .ws import accepted, call_response, failed, frames, on_lane, pending, steered, ws_error

openai = pytest.importorskip("openai")
from openai._models import construct_type_unchecked  # noqa: E402
from openai.types import responses as _types  # noqa: E402

# 3.x: the WebSocket server-event union; 2.x: the connection decodes into the stream union.
UNION = getattr(_types, "ResponsesServerEvent", _types.ResponseStreamEvent)

REVISION = "2026-11" if openai.__version__.startswith("3.") else "2026-07-21"


def sdk_objects(texts: list[str]) -> list[Any]:
    """What ``conn.recv()`` returns for each frame (the SDK's own decoding)."""
    return [construct_type_unchecked(value=json.loads(t), type_=UNION) for t in texts]


def by_objects(texts: list[str]) -> list[Turn]:
    conn = Connection(baseline=REVISION)
    turns = [t for obj in sdk_objects(texts) for t in conn.feed_event(obj)]
    conn.close(1000)
    return turns


def test_the_installed_sdk_is_a_baseline_generation() -> None:
    assert openai.__version__ in ("3.57.0", "2.46.0")


def test_sdk_objects_of_responses_on_lanes_give_the_turns_the_frames_give() -> None:
    events = [
        *call_response("resp_1", 2).events,
        *on_lane(call_response("resp_2").events, "lane.A"),
        ws_error(),
    ]
    texts = frames(events)
    turns = by_objects(texts)
    assert turns == list(parse_connection(texts, baseline=REVISION))
    assert [len(t.calls) for t in turns] == [2, 1, 0]
    assert turns[2].error is not None
    assert turns[2].error.code == "previous_response_not_found"


def _steering_transcript() -> list[str]:
    one, two = steered("resp_1").events, call_response("resp_2").events
    three = call_response("resp_3").events
    first = [one[0], accepted("st_1", "resp_1"), failed(None, "resp_1", "invalid_input")]
    second = [*two[:3], accepted("st_2", "resp_2"), *two[3:], pending("st_2", "resp_2", ["c"])]
    return frames([*first, *one[1:], *second, *three])


@pytest.mark.skipif(REVISION != "2026-11", reason="the 3.x SDK knows the steering events")
def test_sdk_steering_objects_give_the_records_the_frames_give() -> None:
    texts = _steering_transcript()
    objects = sdk_objects(texts)
    assert type(objects[1]).__name__ == "ResponseSteerAcceptedEvent"
    conn = Connection()
    turns = [t for obj in objects for t in conn.feed_event(obj)]
    by_frames = Connection()
    assert turns == [t for text in texts for t in by_frames.feed_message(text)]
    assert [t.response_id for t in turns] == ["resp_1", "resp_2", "resp_3"]
    assert conn.steers == by_frames.steers
    assert [(s.id, s.status) for s in conn.steers] == [
        ("st_1", "committed"),
        ("st_2", "committed"),
        (None, "failed"),
    ]


@pytest.mark.skipif(REVISION == "2026-11", reason="the 2.x SDK has no steering")
def test_a_steering_event_in_the_old_sdks_shape_fails_closed() -> None:
    objects = sdk_objects(_steering_transcript())
    assert objects[1].type == "response.steer.accepted"  # decoded as another member
    conn = Connection(baseline=REVISION)
    conn.feed_event(objects[0])
    with pytest.raises(UnsupportedProviderState):
        conn.feed_event(objects[1])
