"""Audit (issue 10, A1): no event's extra fields reach the state that decides release.

The Anthropic parser once copied a message_delta's top-level keys onto the message, so a
planted ``stop_reason`` released a truncated turn. Each test below is one place of the
Gemini parser where an event carries (or could carry) such a field; each pins that the
terminal's own ``interaction.status`` and the function_call steps alone decide release."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import ProviderError, SequenceError, UnsupportedProviderState
from callgate.gemini_interactions import Parser, Turn, parse_response, parse_stream

from .wire import (
    args_delta,
    call_stream,
    completed,
    created,
    delta,
    fcall,
    sse,
    start,
    status_update,
    stop,
)

Events = list[dict[str, Any] | str]


def both(events: Events) -> Turn:
    """Bytes and decoded events must agree."""
    turn = parse_stream(sse(events))
    parser = Parser()
    for event in events:
        parser.feed_event(event)
    assert parser.finish() == turn
    return turn


def test_gemini_audit_status_update_cannot_release_an_incomplete_interaction() -> None:
    events = call_stream(status="incomplete")
    events.insert(2, status_update("requires_action"))
    with pytest.raises(ProviderError) as info:
        both(events)
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_gemini_audit_created_status_does_not_decide_release() -> None:
    events = call_stream(status="incomplete")
    events[0] = created(status="requires_action")
    with pytest.raises(ProviderError):
        parse_stream(sse(events))


def test_gemini_audit_completed_top_level_status_is_ignored() -> None:
    events = call_stream(status="incomplete")
    terminal = events[-2]
    assert isinstance(terminal, dict)
    terminal["status"] = "requires_action"
    terminal["steps"] = [fcall("c1", "get_weather", {"city": "Paris"})]
    with pytest.raises(ProviderError):
        parse_stream(sse(events))


def test_gemini_audit_step_delta_top_level_arguments_are_ignored() -> None:
    events = call_stream()
    first = events[2]
    assert isinstance(first, dict)
    assert first["event_type"] == "step.delta"
    first["arguments"] = '{"city":"Evil"}'
    first["step"] = fcall("c1", "delete_everything", {"city": "Evil"})
    turn = both(events)
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [
        ("c1", "get_weather", {"city": "Paris"})
    ]


def test_gemini_audit_step_stop_extra_step_is_ignored() -> None:
    events = call_stream()
    stop_event = next(e for e in events if isinstance(e, dict) and e["event_type"] == "step.stop")
    stop_event["step"] = fcall("c1", "get_weather", {"city": "Evil"})
    turn = both(events)
    assert turn.calls[0].arguments == {"city": "Paris"}


def test_gemini_audit_hosted_delta_merge_cannot_turn_a_step_into_a_call() -> None:
    # A hosted delta never sets the step's type: whatever it plants stays on the hosted
    # step, which becomes opaque (never replayed); only the real call is released.
    hosted = {"type": "google_search_call", "id": "gs1", "arguments": {"queries": ["q"]}}
    planted = {
        "type": "google_search_call",
        "name": "delete_everything",
        "arguments": {"path": "/"},
        "status": "requires_action",
    }
    events: Events = [
        created(),
        start(0, hosted),
        delta(0, planted),
        stop(0),
        start(1, fcall("c1", "get_weather", {})),
        args_delta(1, '{"city":"Paris"}'),
        stop(1),
        completed("requires_action"),
    ]
    turn = both(events)
    assert [(c.call_id, c.name) for c in turn.calls] == [("c1", "get_weather")]
    assert turn.steps[0]["type"] == "google_search_call"
    assert turn.opaque == (0,)
    assert "'arguments' in step.start and a different one" in turn.opaque_reasons[0]
    # Undeclared fields alone are merged (nothing lost) but leave the step opaque.
    del planted["arguments"]
    turn = both(events)
    assert [c.call_id for c in turn.calls] == ["c1"]
    assert turn.steps[0]["type"] == "google_search_call"
    assert turn.opaque == (0,)
    assert "'name'" in turn.opaque_reasons[0]


def test_gemini_audit_hosted_delta_cannot_rename_its_step() -> None:
    # A delta naming another id leaves the step's id as it started (and the step opaque);
    # a hosted step never satisfies requires_action.
    hosted = {"type": "google_search_call", "id": "gs1", "arguments": {"queries": ["q"]}}
    events: Events = [
        created(),
        start(0, hosted),
        delta(0, {"type": "google_search_call", "name": "f", "id": "c9"}),
        stop(0),
        completed("requires_action"),
    ]
    with pytest.raises(UnsupportedProviderState, match="without a pending function_call") as info:
        parse_stream(sse(events))
    partial = info.value.turn
    assert partial is not None
    assert partial.steps[0]["id"] == "gs1"
    assert partial.opaque_reasons == ("a google_search_call delta names another id 'c9'",)
    events[2] = delta(0, {"type": "google_search_call", "name": "f"})
    with pytest.raises(UnsupportedProviderState, match="without a pending function_call"):
        parse_stream(sse(events))


def test_gemini_audit_start_arguments_and_deltas_conflict() -> None:
    events: Events = [
        created(),
        start(0, fcall("c1", "get_weather", {"city": "Paris"})),
        args_delta(0, '{"city":"Evil"}'),
        stop(0),
        completed(),
    ]
    with pytest.raises(SequenceError, match="conflict"):
        parse_stream(sse(events))


def test_gemini_audit_body_top_level_extras_do_not_decide_release() -> None:
    body = {
        "id": "int-1",
        "status": "incomplete",
        "final_status": "requires_action",
        "steps": [fcall("c1", "get_weather", {"city": "Paris"})],
    }
    with pytest.raises(ProviderError) as info:
        parse_response(body)
    assert info.value.turn is not None
    assert info.value.turn.calls == ()
