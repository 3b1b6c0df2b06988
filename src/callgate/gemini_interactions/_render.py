"""Scripted turn -> Gemini Interactions v1 wire events: the writer seam of the mock.

The seam every room's ``_render`` declares: :func:`render_events` (the stream as wire event
dicts), :func:`render_stream` (those events as SSE bytes), :func:`render_body` (the
non-streaming body), :func:`render_error_event` (the in-stream error event) and
:func:`encode_sse`. Only ``callgate.mock._providers`` imports it.

Order as in the documented REST stream: ``interaction.created`` →
``interaction.status_update`` → per step ``step.start`` / ``step.delta``* / ``step.stop`` →
``interaction.completed`` carrying the authoritative status. Every event has an
``event_id`` that is deterministic from the interaction id and the event's position, so a
stream can be resumed with ``last_event_id``. ``interleave=True`` opens every function
call first and streams their ``arguments_delta`` round-robin.

An unstored Interaction (the request said ``store: false``; ``interaction_id=None``) is
rendered as the API sends it: ``"id": ""`` on the stream's interaction and
``"interaction_id": ""`` on status updates, no ``id`` in a non-streaming body (both SDK
generations type ``Interaction.id`` as ``Optional[str] = ""``), and no ``event_id``s,
since there is nothing to resume them from.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .._errors import UsageError
from .._json import loads_strict
from ..sse import encode_json_events

Splitter = Callable[[str], list[str]]
"""Turns a text into the pieces streamed as deltas (a chunk plan)."""

__all__ = [
    "encode_sse",
    "render_body",
    "render_error_event",
    "render_events",
    "render_stream",
]

_CREATED_AT = "2026-01-01T00:00:00Z"


def _whole(text: str) -> list[str]:
    return [text] if text else []


def _final_step(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind = spec["type"]
    if kind == "model_output":
        block: dict[str, Any] = {"type": "text", "text": spec["text"]}
        if spec.get("annotations") is not None:
            block["annotations"] = [dict(a) for a in spec["annotations"]]
        return {"type": "model_output", "content": [block]}
    if kind == "hosted":
        return copy.deepcopy(dict(spec["step"]))
    if kind == "thought":
        step: dict[str, Any] = {"type": "thought", "signature": spec["signature"]}
        if spec.get("summary"):
            step["summary"] = [{"type": "text", "text": spec["summary"]}]
        return step
    if kind == "function_call":
        return {
            "type": "function_call",
            "id": spec["id"],
            "name": spec["name"],
            "arguments": loads_strict(spec["arguments"]) if spec["arguments"] else {},
        }
    raise UsageError(f"cannot render a step of type {kind!r}")


def _call_start(spec: Mapping[str, Any]) -> dict[str, Any]:
    # Streamed arguments are text and may be cut or invalid JSON: never parsed here.
    return {"type": "function_call", "id": spec["id"], "name": spec["name"], "arguments": {}}


def _usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    given = dict(usage or {})
    inp, out = given.get("total_input_tokens", 12), given.get("total_output_tokens", 34)
    counts: dict[str, Any] = {
        "total_input_tokens": inp,
        "total_output_tokens": out,
        "total_tokens": inp + out,
    }
    if given.get("grounding_tool_count"):  # [{type, count}] per grounding tool
        counts["grounding_tool_count"] = copy.deepcopy(given["grounding_tool_count"])
    return counts


def render_body(
    *,
    interaction_id: str | None,
    model: str,
    steps: Sequence[Mapping[str, Any]],
    status: str,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Interaction object as a non-streaming create returns it (model steps only);
    ``interaction_id=None`` renders an unstored one (no ``id``)."""
    head = {} if interaction_id is None else {"id": interaction_id}
    return {
        **head,
        "object": "interaction",
        "model": model,
        "status": status,
        "created": _CREATED_AT,
        "updated": _CREATED_AT,
        "steps": [_final_step(spec) for spec in steps],
        "usage": _usage(usage),
    }


def render_events(
    *,
    interaction_id: str | None,
    model: str,
    steps: Sequence[Mapping[str, Any]],
    status: str,
    split: Splitter = _whole,
    interleave: bool = False,
    usage: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Wire events (dicts) for one scripted interaction turn.

    ``steps`` are specs: ``{"type": "model_output", "text", "annotations"?}`` (the
    annotations stream as one ``text_annotation_delta`` after the text), ``{"type":
    "thought", "signature", "summary"?}``, ``{"type": "function_call", "id", "name",
    "arguments"}`` (the exact JSON text streamed as ``arguments_delta``), ``{"type":
    "hosted", "step", "as_delta"?}`` (a complete hosted call or result step, streamed in its
    ``step.start``, or with ``as_delta`` as a bare start plus one delta of its own type
    carrying every payload field). ``status`` is the terminal
    status (``requires_action`` for a tool turn, ``completed`` for a final answer, ...).
    ``interaction_id=None`` renders an unstored Interaction (see the module docstring).
    Raises :class:`UsageError` for an unknown step type.
    """
    events: list[dict[str, Any]] = []
    wire_id = "" if interaction_id is None else interaction_id

    def emit(kind: str, **fields: Any) -> None:
        if interaction_id is None:
            events.append({"event_type": kind, **fields})
        else:
            eid = f"{interaction_id}:{len(events)}"
            events.append({"event_type": kind, "event_id": eid, **fields})

    shell = {"id": wire_id, "status": "in_progress", "model": model, "object": "interaction"}
    emit("interaction.created", interaction=shell)
    emit("interaction.status_update", interaction_id=wire_id, status="in_progress")
    calls = [(i, s) for i, s in enumerate(steps) if s["type"] == "function_call"]
    interleaved = interleave and len(calls) > 1
    for index, spec in enumerate(steps):
        if interleaved and spec["type"] == "function_call":
            continue
        _emit_step(emit, index, spec, split)
    if interleaved:
        for index, spec in calls:
            emit("step.start", index=index, step=_call_start(spec))
        streams = [(i, iter(split(s["arguments"]))) for i, s in calls]
        for index, piece in _round_robin(streams):
            emit("step.delta", index=index, delta={"type": "arguments_delta", "arguments": piece})
        for index, _ in calls:
            emit("step.stop", index=index)
    final = {**shell, "status": status, "usage": _usage(usage), "updated": _CREATED_AT}
    emit("interaction.completed", interaction=final)
    return events


def _emit_step(emit: Any, index: int, spec: Mapping[str, Any], split: Splitter) -> None:
    kind = spec["type"]
    if kind == "model_output":
        emit("step.start", index=index, step={"type": "model_output"})
        for piece in split(spec["text"]):
            emit("step.delta", index=index, delta={"type": "text", "text": piece})
        if spec.get("annotations") is not None:
            annotations = [dict(a) for a in spec["annotations"]]
            delta = {"type": "text_annotation_delta", "annotations": annotations}
            emit("step.delta", index=index, delta=delta)
    elif kind == "hosted":
        step = _final_step(spec)
        if not spec.get("as_delta"):
            emit("step.start", index=index, step=step)
        else:
            ident = "id" if "id" in step else "call_id"
            emit("step.start", index=index, step={"type": step["type"], ident: step[ident]})
            payload = {k: v for k, v in step.items() if k not in ("type", ident)}
            emit("step.delta", index=index, delta={"type": step["type"], **payload})
    elif kind == "thought":
        emit("step.start", index=index, step={"type": "thought"})
        if spec.get("summary"):
            content = {"type": "text", "text": spec["summary"]}
            emit("step.delta", index=index, delta={"type": "thought_summary", "content": content})
        delta = {"type": "thought_signature", "signature": spec["signature"]}
        emit("step.delta", index=index, delta=delta)
    elif kind == "function_call":
        emit("step.start", index=index, step=_call_start(spec))
        for piece in split(spec["arguments"]):
            emit("step.delta", index=index, delta={"type": "arguments_delta", "arguments": piece})
    else:
        raise UsageError(f"cannot render a step of type {kind!r}")
    emit("step.stop", index=index)


def _round_robin(streams: list[tuple[int, Iterator[str]]]) -> Iterator[tuple[int, str]]:
    live = list(streams)
    while live:
        still = []
        for index, pieces in live:
            piece = next(pieces, None)
            if piece is not None:
                yield index, piece
                still.append((index, pieces))
        live = still


def render_stream(**turn: Any) -> bytes:
    """:func:`render_events` encoded as the SSE body (same keywords)."""
    return encode_sse(render_events(**turn))


def render_error_event(
    *, message: str | None = None, code: str = "api_error", event_id: str | None = None
) -> dict[str, Any]:
    """The in-stream ``error`` event (``event_id`` when the stream carries ids); ``code`` is
    one of the API's documented error codes (a string, as both SDK generations type it)."""
    error = {"code": code, "message": message or "Internal error."}
    head = {} if event_id is None else {"event_id": event_id}
    return {"event_type": "error", **head, "error": error}


def encode_sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    """SSE bytes: ``event: <event_type>`` plus one compact JSON ``data:`` line per event."""
    return encode_json_events(events, name_key="event_type")
