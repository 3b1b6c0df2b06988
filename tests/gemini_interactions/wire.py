"""Builders of Gemini Interactions wire events and SSE bytes for the tests.

Shapes follow ``contracts/gemini.md`` (google-genai 3.6.1 models). IDs are synthetic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import wire as shared

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini_interactions"
IID = "int-1"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def sse(events: Iterable[dict[str, Any] | str], *, names: bool = False) -> bytes:
    """SSE bytes: one ``data:`` line per event (``"[DONE]"`` passes through)."""
    return shared.sse(events, name_key="event_type" if names else None)


def _eid(event: dict[str, Any], eid: str | None) -> dict[str, Any]:
    if eid is not None:
        event["event_id"] = eid
    return event


def created(
    iid: str = IID, *, eid: str | None = None, status: str = "in_progress"
) -> dict[str, Any]:
    return _eid(
        {"event_type": "interaction.created", "interaction": {"id": iid, "status": status}}, eid
    )


def status_update(status: str, iid: str = IID, *, eid: str | None = None) -> dict[str, Any]:
    return _eid(
        {"event_type": "interaction.status_update", "interaction_id": iid, "status": status}, eid
    )


def start(index: Any, step: dict[str, Any], *, eid: str | None = None) -> dict[str, Any]:
    return _eid({"event_type": "step.start", "index": index, "step": step}, eid)


def delta(index: Any, body: dict[str, Any], *, eid: str | None = None) -> dict[str, Any]:
    return _eid({"event_type": "step.delta", "index": index, "delta": body}, eid)


def args_delta(index: Any, text: str | None, *, eid: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "arguments_delta"}
    if text is not None:
        body["arguments"] = text
    return delta(index, body, eid=eid)


def stop(index: Any, *, eid: str | None = None) -> dict[str, Any]:
    return _eid({"event_type": "step.stop", "index": index}, eid)


def completed(
    status: str = "requires_action",
    iid: str = IID,
    *,
    usage: dict[str, Any] | None = None,
    eid: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    interaction: dict[str, Any] = {"id": iid, "status": status, **extra}
    if usage is not None:
        interaction["usage"] = usage
    return _eid({"event_type": "interaction.completed", "interaction": interaction}, eid)


def fcall(call_id: str, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"type": "function_call", "id": call_id, "name": name}
    if arguments is not None:
        step["arguments"] = arguments
    return step


def call_stream(
    call_id: str = "c1",
    name: str = "get_weather",
    fragments: Iterable[str] = ('{"city":', '"Paris"}'),
    *,
    index: int = 0,
    status: str = "requires_action",
    done: bool = True,
) -> list[dict[str, Any] | str]:
    """A minimal one-call stream as event objects."""
    events: list[dict[str, Any] | str] = [created(), start(index, fcall(call_id, name, {}))]
    events += [args_delta(index, fragment) for fragment in fragments]
    events += [stop(index), completed(status)]
    if done:
        events.append("[DONE]")
    return events


def summary(turn: Any) -> dict[str, Any]:
    """The comparable projection used by fixtures' ``expected`` objects."""
    return {
        "interaction_id": turn.interaction_id,
        "status": turn.status,
        "step_types": [step["type"] for step in turn.steps],
        "calls": [
            {"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in turn.calls
        ],
        "usage": turn.usage,
        "opaque": list(turn.opaque),
    }
