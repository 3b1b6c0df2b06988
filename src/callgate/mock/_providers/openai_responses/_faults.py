"""OpenAI Responses in the mock:
fault roles of wire events, the in-stream error event, truncation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ....openai_responses import _render
from .._kit import Event
from ._rendering import _TERMINALS


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is an output item: added, argument deltas, done; then a terminal event."""
    kind, index = event["type"], event.get("output_index")
    if kind == "response.output_item.added" and event["item"]["type"] == "function_call":
        return (("start", index),)
    if kind == "response.function_call_arguments.delta":
        return (("delta", index),)
    if kind == "response.output_item.done":
        return (("done", index),)
    return (("terminal", None),) if kind in _TERMINALS else ()


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {k: fault[k] for k in ("error_type", "code", "shape") if k in fault}
    seq = sent[-1]["sequence_number"] + 1 if sent else 0
    return _render.render_error_event(message=fault.get("message"), sequence_number=seq, **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut call ``fault["call"]``'s argument deltas after ``keep`` chars and end the stream
    with ``response.incomplete`` (``max_output_tokens``) holding the cut call."""
    added = [e for e in events if e["type"] == "response.output_item.added"]
    calls = [e for e in added if e["item"]["type"] == "function_call"]
    index = calls[fault.get("call", 0)]["output_index"]
    terminal = events[-1]["response"]
    full = terminal["output"][index]["arguments"]
    keep = fault.get("keep", len(full) // 2)
    out: list[Event] = []
    done: dict[int, dict[str, Any]] = {}
    sent = ""
    for event in events:
        kind = event["type"]
        if kind == "response.function_call_arguments.delta" and event["output_index"] == index:
            rest = keep - len(sent)
            if len(event["delta"]) >= rest:
                if rest:
                    out.append({**event, "delta": event["delta"][:rest]})
                sent += event["delta"][:rest]
                break
            sent += event["delta"]
        elif kind == "response.output_item.done":
            done[event["output_index"]] = event["item"]
        out.append(event)
    item = {**terminal["output"][index], "arguments": sent, "status": "incomplete"}
    output = [done[i] for i in sorted(done)] + [item]
    response = {
        **copy.deepcopy(terminal),
        "status": "incomplete",
        "output": output,
        "incomplete_details": {"reason": "max_output_tokens"},
        "error": None,
    }
    out.append({"type": "response.incomplete", "response": response})
    return [{**e, "sequence_number": n} for n, e in enumerate(out)]
