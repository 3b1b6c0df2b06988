"""Unstored Interactions (``store: false``): no id on the wire, id ``None`` on the turn.

The live API sends ``"id": ""`` on the stream's interaction and ``"interaction_id": ""`` on
status updates, and omits ``id`` from a non-streaming body; google-genai 3.6.1 and 2.12.1
both type ``Interaction.id`` as ``Optional[str] = ""`` (the SSE interaction's ``id`` as a
required ``str``). Such a turn is continued statelessly; the stateful builder refuses it.
"""

from __future__ import annotations

from typing import Any

import pytest

from callgate import ContinuationError, SchemaError, SequenceError, ToolResult
from callgate.gemini_interactions import (
    Parser,
    Turn,
    build_stateful_continuation,
    build_stateless_continuation,
    parse_interaction,
    parse_stream,
)
from callgate.gemini_interactions import _render as render

from .wire import args_delta, completed, created, fcall, sse, start, status_update, stop

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
USER = {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}
CALL = fcall("c1", "get_weather", {"city": "Paris"})


def unstored_stream(
    created_id: str = "", completed_id: str = "", update_id: str = ""
) -> list[dict[str, Any] | str]:
    return [
        created(created_id),
        status_update("in_progress", update_id),
        start(0, fcall("c1", "get_weather", {})),
        args_delta(0, '{"city":"Paris"}'),
        stop(0),
        completed("requires_action", completed_id),
    ]


def both(events: list[dict[str, Any] | str]) -> Turn:
    turn = parse_stream(sse(events))
    parser = Parser()
    for event in events:
        parser.feed_event(event)
    assert parser.finish() == turn
    return turn


# -- the parsers ------------------------------------------------------------------------


def test_unstored_stream_with_empty_ids_is_accepted_with_id_none() -> None:
    turn = both(unstored_stream())
    assert turn.interaction_id is None
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [
        ("c1", "get_weather", {"city": "Paris"})
    ]


@pytest.mark.parametrize(
    ("ids", "where"),
    [
        ({"completed_id": "int-9"}, "completed"),
        ({"created_id": "int-9", "update_id": "int-9"}, "completed"),
        ({"update_id": "int-9"}, "status_update"),
    ],
)
def test_an_unstored_stream_must_stay_unstored_to_its_end(ids: dict[str, str], where: str) -> None:
    """The id (empty or not) is fixed by interaction.created: every later id must equal it."""
    with pytest.raises(SequenceError, match="another") as info:
        parse_stream(sse(unstored_stream(**ids)))
    assert info.value.wire_type == f"interaction.{where}"
    assert info.value.turn is None or info.value.turn.calls == ()


def test_a_stream_interaction_without_any_id_field_is_refused() -> None:
    """The SSE interaction types ``id`` as a required str: absent is drift, not unstored."""
    event = created()
    del event["interaction"]["id"]
    with pytest.raises(SchemaError, match="string 'id'"):
        parse_stream(sse([event]))


@pytest.mark.parametrize("body_id", ["absent", "", None])
@pytest.mark.parametrize("source", ["create", "get"])
def test_unstored_body_without_an_id_is_accepted_with_id_none(body_id: Any, source: str) -> None:
    body: dict[str, Any] = {"status": "requires_action", "steps": [CALL]}
    if source == "get":
        body["steps"] = [USER, CALL]
    if body_id != "absent":
        body["id"] = body_id
    turn = parse_interaction(body, source=source)  # type: ignore[arg-type]
    assert turn.interaction_id is None
    assert [c.call_id for c in turn.calls] == ["c1"]


@pytest.mark.parametrize("body_id", [0, ["x"], {"id": "x"}, True])
def test_a_body_id_of_another_json_type_is_a_schema_error(body_id: Any) -> None:
    with pytest.raises(SchemaError, match="'id' must be a string"):
        parse_interaction({"id": body_id, "status": "completed"}, source="create")


# -- the builders ------------------------------------------------------------------------


def test_stateful_builder_refuses_an_unstored_turn_and_says_why() -> None:
    turn = both(unstored_stream())
    with pytest.raises(ContinuationError) as info:
        build_stateful_continuation(
            turn,
            [ToolResult("c1", "sunny")],
            previous_interaction_was_stored=True,
            store=True,
            model="gemini-test",
            tools=TOOLS,
        )
    assert "no interaction id" in info.value.message
    assert "build_stateless_continuation" in info.value.message


@pytest.mark.parametrize("origin", ["stream", "create"])
def test_stateless_builder_continues_an_unstored_turn(origin: str) -> None:
    if origin == "stream":
        turn = both(unstored_stream())
    else:
        turn = parse_interaction({"status": "requires_action", "steps": [CALL]}, source="create")
    request = build_stateless_continuation(
        turn,
        [ToolResult("c1", "sunny")],
        snapshot_source=origin,
        prior_input_steps=[USER],
        model="gemini-test",
        tools=TOOLS,
    )
    assert request["store"] is False
    assert "previous_interaction_id" not in request
    assert request["input"] == [
        USER,
        CALL,
        {"type": "function_result", "call_id": "c1", "name": "get_weather", "result": "sunny"},
    ]


# -- the renderer the mock uses ----------------------------------------------------------


SPEC = [{"type": "function_call", "id": "c1", "name": "get_weather", "arguments": '{"a":1}'}]


def test_render_of_an_unstored_stream_sends_empty_ids_and_no_event_ids() -> None:
    events = render.render_events(
        interaction_id=None, model="m", steps=SPEC, status="requires_action"
    )
    assert events[0]["interaction"]["id"] == ""
    assert events[1] == {
        "event_type": "interaction.status_update",
        "interaction_id": "",
        "status": "in_progress",
    }
    assert events[-1]["interaction"]["id"] == ""
    assert all("event_id" not in event for event in events)
    assert parse_stream(render.encode_sse(events)).interaction_id is None


def test_render_of_an_unstored_body_has_no_id() -> None:
    body = render.render_body(interaction_id=None, model="m", steps=SPEC, status="requires_action")
    assert "id" not in body
    assert parse_interaction(body, source="create").interaction_id is None
    stored = render.render_body(
        interaction_id="int-1", model="m", steps=SPEC, status="requires_action"
    )
    assert stored["id"] == "int-1"
    assert parse_interaction(stored, source="create").interaction_id == "int-1"
