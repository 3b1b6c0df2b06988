"""Wire values of the wrong JSON type, checked before they are used as keys.

The parser routes by wire values (``event_type``, ``step.type``, ``delta.type``, the step
``index``, ``event_id``): each is a dict key or a set member, so a list or object there
is unhashable. Every such value must give a typed error through both entry points
(``feed_bytes`` and ``feed_event``), never a bare ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from callgate import CallgateError, SchemaError
from callgate.gemini_interactions import Parser, parse_stream

from .wire import completed, created, delta, fcall, sse, start, status_update, stop

UNHASHABLE: list[Any] = [["text"], {"type": "text"}]


def both_fail(events: list[dict[str, Any]]) -> list[CallgateError]:
    """Both entry points raise the same typed error (a bare exception fails the test)."""
    errors: list[CallgateError] = []
    with pytest.raises(CallgateError) as from_bytes:
        parse_stream(sse(events))
    errors.append(from_bytes.value)
    errors.append(_feed_events(events))
    assert type(errors[0]) is type(errors[1])
    assert errors[0].message == errors[1].message
    return errors


def _feed_events(events: list[dict[str, Any]]) -> CallgateError:
    parser = Parser()
    try:
        for event in events:
            parser.feed_event(event)
        parser.finish()
    except CallgateError as exc:
        return exc
    raise AssertionError("feed_event accepted the stream")


def _opened() -> list[dict[str, Any]]:
    return [created(), start(0, fcall("c1", "f", {}))]


@pytest.mark.parametrize("kind", UNHASHABLE)
def test_delta_type_of_list_or_object_is_a_schema_error(kind: Any) -> None:
    """The reported bug: ``routes.get(delta["type"])`` raised a bare TypeError."""
    for err in both_fail([*_opened(), delta(0, {"type": kind, "arguments": "{}"})]):
        assert type(err) is SchemaError
        assert "string 'type'" in err.message


def _event_type(value: Any) -> list[dict[str, Any]]:
    return [created(), {"event_type": value, "index": 0}]


def _step_type(value: Any) -> list[dict[str, Any]]:
    return [created(), start(0, {"type": value, "id": "c1", "name": "f"})]


def _index(value: Any, make: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    if make is start:
        return [created(), start(value, fcall("c1", "f", {}))]
    if make is delta:
        return [*_opened(), delta(value, {"type": "arguments_delta", "arguments": "{}"})]
    return [*_opened(), stop(value)]


def _event_id(value: Any) -> list[dict[str, Any]]:
    return [{**created(), "event_id": value}]


def _lifecycle(key: str, value: Any) -> list[dict[str, Any]]:
    event = created()
    event["interaction"][key] = value
    return [event]


def _status_update(key: str, value: Any) -> list[dict[str, Any]]:
    event = status_update("in_progress")
    event[key] = value
    return [created(), event]


def _terminal_status(value: Any) -> list[dict[str, Any]]:
    return [created(), completed(value)]


PLACES: dict[str, Callable[[Any], list[dict[str, Any]]]] = {
    "event_type": _event_type,
    "step.type": _step_type,
    "step.start index": lambda v: _index(v, start),
    "step.delta index": lambda v: _index(v, delta),
    "step.stop index": lambda v: _index(v, stop),
    "event_id": _event_id,
    "interaction.id": lambda v: _lifecycle("id", v),
    "interaction.status": lambda v: _lifecycle("status", v),
    "status_update.interaction_id": lambda v: _status_update("interaction_id", v),
    "status_update.status": lambda v: _status_update("status", v),
    "completed.status": _terminal_status,
}


@pytest.mark.parametrize("value", UNHASHABLE)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_routed_wire_value_of_list_or_object_type_is_a_schema_error(
    place: str, value: Any
) -> None:
    """The sweep: every other value the parser uses as a key is type-checked first."""
    for err in both_fail(PLACES[place](value)):
        assert type(err) is SchemaError, f"{place}: {type(err).__name__}: {err}"
