"""Gemini Interactions in the mock:
fault roles of wire events, the in-stream error event, truncation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ....gemini_interactions import _render
from .._kit import Event, cut_deltas


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is a ``function_call`` step; the terminal is ``interaction.completed``."""
    kind, index = event["event_type"], event.get("index")
    if kind == "step.start" and event["step"]["type"] == "function_call":
        return (("start", index),)
    if kind == "step.delta" and event["delta"]["type"] == "arguments_delta":
        return (("delta", index),)
    if kind == "step.stop":
        return (("done", index),)
    return (("terminal", None),) if kind == "interaction.completed" else ()


def _event_id(events: Sequence[Event], position: int) -> str | None:
    """The id of the event at ``position`` (``None`` in an unstored stream, which has none)."""
    if events and "event_id" not in events[0]:
        return None
    base = str(events[0]["event_id"]).rpartition(":")[0] if events else "callgate"
    return f"{base}:{position}"


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {"code": fault["code"]} if "code" in fault else {}
    event_id = _event_id(sent, len(sent))
    return _render.render_error_event(message=fault.get("message"), event_id=event_id, **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut a call step's ``arguments_delta`` after ``keep`` chars; end ``incomplete``."""
    starts = [
        e
        for e in events
        if e["event_type"] == "step.start" and e["step"]["type"] == "function_call"
    ]
    index = starts[fault.get("call", 0)]["index"]
    out = cut_deltas(
        events,
        lambda e: e["event_type"] == "step.delta" and e["index"] == index
        and e["delta"]["type"] == "arguments_delta",
        lambda e: str(e["delta"]["arguments"]),
        lambda e, text: {**e, "delta": {"type": "arguments_delta", "arguments": text}},
        fault.get("keep"),
    )  # fmt: skip
    final = copy.deepcopy(events[-1])
    final["interaction"]["status"] = "incomplete"
    out.append({"event_type": "step.stop", "index": index})
    out.append(final)
    if _event_id(events, 0) is None:
        return out
    return [{**e, "event_id": _event_id(events, n)} for n, e in enumerate(out)]
