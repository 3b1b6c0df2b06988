"""Stream faults: a rendered turn's wire events -> the frames that actually leave.

Each fault is a pure function of the turn's events (dicts, as the protocol renderer made
them) and its spec; the result is the list of SSE frames to send and whether to hold the
connection open afterwards. Provider shapes (error events, truncated terminals) are
written here from the wire contracts; the protocol renderers stay fault-free.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..anthropic_messages import _render as anthropic_render
from ..gemini_interactions import _render as gemini_render
from ..openai_responses import _render as openai_render

__all__ = ["StreamPlan", "plan_stream"]

Event = dict[str, Any]

_ENCODERS: dict[str, Callable[[Sequence[Mapping[str, Any]]], bytes]] = {
    "openai_responses": openai_render.encode_sse,
    "anthropic_messages": anthropic_render.encode_sse,
    "gemini_interactions": gemini_render.encode_sse,
}
_TYPE_KEY = {
    "openai_responses": "type",
    "anthropic_messages": "type",
    "gemini_interactions": "event_type",
}


@dataclasses.dataclass(frozen=True, slots=True)
class StreamPlan:
    """The frames to send, in order, whether the stream then stays open, and the events
    those frames carry (a malformed frame carries none) -- what the client received."""

    frames: tuple[bytes, ...]
    hold: bool = False
    events: tuple[Event, ...] = ()


def _plan(protocol: str, events: Sequence[Event], hold: bool = False) -> StreamPlan:
    encode = _ENCODERS[protocol]
    return StreamPlan(tuple(encode([e]) for e in events), hold, tuple(events))


def plan_stream(protocol: str, events: Sequence[Event], fault: Mapping[str, Any]) -> StreamPlan:
    """Apply one validated stream ``fault`` to ``events`` (never mutated)."""
    kind = fault["type"]
    after = min(fault.get("after", len(events)), len(events))
    if kind in ("disconnect", "never_end"):
        return _plan(protocol, events[:after], hold=kind == "never_end")
    if kind == "error_event":
        sent = list(events[:after])
        sent.append(_error_event(protocol, sent, fault))
        return _plan(protocol, sent)
    if kind == "malformed":
        plan = _plan(protocol, events)
        frames = list(plan.frames)
        name = events[after][_TYPE_KEY[protocol]] if after < len(events) else "message"
        data = fault.get("data", '{"callgate_malformed": "this frame is cut sh')
        # Written verbatim: line breaks in ``data`` break the framing too, and lone
        # surrogates become the invalid UTF-8 bytes they escape.
        frame = f"event: {name}\ndata: {data}\n\n".encode("utf-8", "surrogateescape")
        frames.insert(after, frame)
        return StreamPlan(tuple(frames), events=plan.events)
    if kind == "duplicate":
        out = list(events)
        if after:  # an empty stream has nothing to re-send
            again = copy.deepcopy(events[after - 1])
            if fault.get("payload", "same") == "different":
                _alter(again)
            out.insert(after, again)
        return _plan(protocol, out)
    if kind == "out_of_order":
        out = list(events)
        i = min(after, len(out) - 2)
        if i >= 0:
            out[i], out[i + 1] = out[i + 1], out[i]
        return _plan(protocol, out)
    if kind == "truncate":
        return _plan(protocol, _TRUNCATE[protocol](list(events), fault))
    raise ValueError(f"not a stream fault: {kind!r}")  # check_fault rules this out


# -- in-stream error events, in each provider's shape ------------------------------------------


def _error_event(protocol: str, sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    message = fault.get("message")
    if protocol == "openai_responses":
        seq = sent[-1]["sequence_number"] + 1 if sent else 0
        error = {
            "type": fault.get("error_type", "server_error"),
            "code": fault.get("code", "server_error"),
            "message": message or "The server had an error while processing your request.",
            "param": None,
        }
        if fault.get("shape", "nested") == "flat":
            flat = {k: v for k, v in error.items() if k != "type"}
            return {"type": "error", "sequence_number": seq, **flat}
        return {"type": "error", "sequence_number": seq, "error": error}
    if protocol == "anthropic_messages":
        inner: dict[str, Any] = {
            "type": fault.get("error_type", "overloaded_error"),
            "message": message or "Overloaded",
        }
        if "code" in fault:
            inner["details"] = {"error_code": fault["code"]}
        return {"type": "error", "error": inner}
    error = {"code": fault.get("code", "INTERNAL"), "message": message or "Internal error."}
    return {"event_type": "error", "event_id": _gemini_id(sent, len(sent)), "error": error}


def _gemini_id(events: Sequence[Event], position: int) -> str:
    base = str(events[0]["event_id"]).rpartition(":")[0] if events else "callgate"
    return f"{base}:{position}"


def _alter(event: Event) -> None:
    """Change a replayed event's payload while keeping its ``event_id``."""
    delta = event.get("delta")
    if isinstance(delta, dict):
        for key in ("text", "arguments"):
            if isinstance(delta.get(key), str):
                delta[key] += " (replayed differently)"
                return
    event["callgate_replayed"] = True


# -- truncation in the middle of a call's arguments -------------------------------------------


def _cut(pieces: Sequence[str], keep: int) -> tuple[int, str]:
    """How many whole pieces fit in ``keep`` chars, and the partial piece after them."""
    used = 0
    for n, piece in enumerate(pieces):
        if used + len(piece) >= keep:
            return n, piece[: keep - used]
        used += len(piece)
    return len(pieces), ""


def _truncate_openai(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
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


def _truncate_anthropic(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    starts = [
        e
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    ]
    index = starts[fault.get("call", 0)]["index"]
    pieces = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta"
        and e["index"] == index
        and e["delta"]["type"] == "input_json_delta"
    ]
    keep = fault.get("keep", len("".join(pieces)) // 2)
    whole, partial = _cut(pieces, keep)
    out: list[Event] = []
    seen = 0
    for event in events:
        if event["type"] == "content_block_delta" and event["index"] == index:
            if seen == whole:
                if partial:
                    delta = {"type": "input_json_delta", "partial_json": partial}
                    out.append({**event, "delta": delta})
                break
            seen += 1
        out.append(event)
    usage: dict[str, Any] = next((e["usage"] for e in events if e["type"] == "message_delta"), {})
    out.append({"type": "content_block_stop", "index": index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": usage,
        }
    )
    out.append({"type": "message_stop"})
    return out


def _truncate_gemini(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    starts = [
        e
        for e in events
        if e["event_type"] == "step.start" and e["step"]["type"] == "function_call"
    ]
    index = starts[fault.get("call", 0)]["index"]
    pieces = [
        e["delta"]["arguments"]
        for e in events
        if e["event_type"] == "step.delta"
        and e["index"] == index
        and e["delta"]["type"] == "arguments_delta"
    ]
    keep = fault.get("keep", len("".join(pieces)) // 2)
    whole, partial = _cut(pieces, keep)
    out: list[Event] = []
    seen = 0
    for event in events:
        if event["event_type"] == "step.delta" and event["index"] == index:
            if seen == whole:
                if partial:
                    delta = {"type": "arguments_delta", "arguments": partial}
                    out.append({**event, "delta": delta})
                break
            seen += 1
        out.append(event)
    final = copy.deepcopy(events[-1])
    final["interaction"]["status"] = "incomplete"
    out.append({"event_type": "step.stop", "index": index})
    out.append(final)
    return [{**e, "event_id": _gemini_id(events, n)} for n, e in enumerate(out)]


_TRUNCATE: dict[str, Callable[[list[Event], Mapping[str, Any]], list[Event]]] = {
    "openai_responses": _truncate_openai,
    "anthropic_messages": _truncate_anthropic,
    "gemini_interactions": _truncate_gemini,
}
