"""Anthropic Messages in the mock:
fault roles of wire events, the in-stream error event, truncation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ....anthropic_messages import _render
from .._kit import Event, cut_deltas


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is a ``tool_use`` block; the terminal is the ``message_delta`` with the stop
    reason (``message_stop`` follows it)."""
    kind, index = event["type"], event.get("index")
    if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
        return (("start", index),)
    if kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
        return (("delta", index),)
    if kind == "content_block_stop":
        return (("done", index),)
    return (("terminal", None),) if kind == "message_delta" else ()


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {k: fault[k] for k in ("error_type", "code") if k in fault}
    return _render.render_error_event(message=fault.get("message"), **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut a ``tool_use`` block's ``partial_json`` after ``keep`` chars; stop on
    ``max_tokens``."""
    starts = [
        e
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    ]
    index = starts[fault.get("call", 0)]["index"]
    out = cut_deltas(
        events,
        lambda e: e["type"] == "content_block_delta" and e["index"] == index
        and e["delta"]["type"] == "input_json_delta",
        lambda e: str(e["delta"]["partial_json"]),
        lambda e, text: {**e, "delta": {"type": "input_json_delta", "partial_json": text}},
        fault.get("keep"),
    )  # fmt: skip
    counts: dict[str, Any] = next((e["usage"] for e in events if e["type"] == "message_delta"), {})
    out.append({"type": "content_block_stop", "index": index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": counts,
        }
    )
    out.append({"type": "message_stop"})
    return out
