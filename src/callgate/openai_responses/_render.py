"""Scripted turn -> OpenAI Responses wire events: the writer seam of the mock.

The seam every room's ``_render`` declares: :func:`render_events` (the stream as wire event
dicts), :func:`render_stream` (those events as SSE bytes), :func:`render_body` (the
non-streaming body), :func:`render_error_event` (the in-stream error event) and
:func:`encode_sse`. Only ``callgate.mock._providers`` imports it.

The output follows the ordering the official SDK's stream helper expects (contract §1.2):
``response.created`` → ``response.in_progress`` → per item ``output_item.added`` … ``.done``
→ exactly one terminal. Every event carries ``sequence_number`` and every field the SDK
requires under strict response validation (``logprobs: []``, full ``usage`` with
``cache_write_tokens``). ``interleave=True`` opens every function call first and then
sends their argument deltas round-robin (A/B/A/B…), the case a "current call" parser
gets wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._errors import UsageError
from ..sse import encode_json_events
from ._hosted import HOSTED, Annotator, Splitter, added_hosted, emit_hosted

__all__ = [
    "encode_sse",
    "render_body",
    "render_error_event",
    "render_events",
    "render_stream",
]

_TERMINAL = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}


def _usage(usage: Mapping[str, int] | None) -> dict[str, Any]:
    given = dict(usage or {})
    inp, out = given.get("input_tokens", 12), given.get("output_tokens", 34)
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": given.get("reasoning_tokens", 0)},
        "total_tokens": inp + out,
    }


def _final_item(spec: Mapping[str, Any], status: str) -> dict[str, Any]:
    kind = spec["type"]
    if kind in HOSTED:  # the scripted item as it is done, with its own status
        return copy.deepcopy(dict(spec["item"]))
    if kind == "message":
        annotations = copy.deepcopy(list(spec.get("annotations", ())))
        part = {"type": "output_text", "text": spec["text"], "annotations": annotations,
                "logprobs": []}  # fmt: skip
        return {
            "type": "message",
            "id": spec["id"],
            "role": "assistant",
            "status": status,
            "content": [part],
        }
    if kind == "function_call":
        return {
            "type": "function_call",
            "id": spec["id"],
            "call_id": spec["call_id"],
            "name": spec["name"],
            "arguments": spec["arguments"],
            "status": status,
        }
    if kind == "reasoning":
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": spec["id"],
            "summary": [{"type": "summary_text", "text": t} for t in spec.get("summary", ())],
        }
        if "encrypted_content" in spec:
            item["encrypted_content"] = spec["encrypted_content"]
        return item
    raise UsageError(f"cannot render an output item of type {kind!r}")


def _added_item(spec: Mapping[str, Any]) -> dict[str, Any]:
    item = _final_item(spec, "in_progress")
    if item["type"] in HOSTED:
        return added_hosted(item)
    if item["type"] == "message":
        item["content"] = []
    elif item["type"] == "function_call":
        item["arguments"] = ""
    elif item["type"] == "reasoning":
        item["summary"] = []
        item.pop("encrypted_content", None)
    return item


def _whole(text: str) -> list[str]:
    return [text] if text else []


def render_body(
    *,
    response_id: str,
    model: str,
    items: Sequence[Mapping[str, Any]],
    status: str = "completed",
    usage: Mapping[str, int] | None = None,
    created_at: int = 1_767_225_600,
    error: Mapping[str, Any] | None = None,
    tool_usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Response object (non-streaming body and terminal-event payload); ``tool_usage``
    is sent as given (omitted when ``None``)."""
    item_status = "completed" if status == "completed" else "incomplete"
    body = {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "model": model,
        "status": status,
        "output": [_final_item(spec, item_status) for spec in items],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": dict(error) if error else None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "usage": _usage(usage),
    }
    if tool_usage is not None:
        body["tool_usage"] = copy.deepcopy(dict(tool_usage))
    return body


def render_events(
    *,
    response_id: str,
    model: str,
    items: Sequence[Mapping[str, Any]],
    status: str = "completed",
    split: Splitter = _whole,
    interleave: bool = False,
    usage: Mapping[str, int] | None = None,
    created_at: int = 1_767_225_600,
    baseline: str = "2026-11",
    tool_usage: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Wire events (dicts, ``sequence_number`` from 0) for one scripted turn.

    ``items`` are specs: ``{"type": "message", "id", "text"}``,
    ``{"type": "function_call", "id", "call_id", "name", "arguments"}`` (arguments as the
    exact JSON text to stream), ``{"type": "reasoning", "id", "summary": [str],
    "encrypted_content"?}``, a hosted item ``{"type": "web_search_call" |
    "file_search_call" | "code_interpreter_call", "item": <the item as done>}`` (streamed
    as ``added`` in progress, the tool's status pings in order -- ``completed`` only for a
    completed item -- and, for code, its deltas), and a message may carry
    ``"annotations"`` (each streamed by ``output_text.annotation.added`` once the deltas
    reach its end offset). ``status`` picks the terminal (completed, incomplete, failed).
    Under the ``2026-07-21`` baseline ``function_call_arguments.done`` carries ``name`` (that
    SDK's type requires it, although the live API omits it; the parser accepts both); from
    ``2026-11`` on it does not.
    Raises :class:`UsageError` for an unknown item type or status.
    """
    if status not in _TERMINAL:
        raise UsageError(f"cannot render terminal status {status!r}")
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    def emit_call_done(index: int, spec: Mapping[str, Any]) -> None:
        extra = {"name": spec["name"]} if baseline == "2026-07-21" else {}
        emit(
            "response.function_call_arguments.done",
            item_id=spec["id"],
            output_index=index,
            arguments=spec["arguments"],
            **extra,
        )

    shell = render_body(
        response_id=response_id, model=model, items=(), status="in_progress", created_at=created_at
    )
    shell["usage"] = None
    emit("response.created", response=shell)
    emit("response.in_progress", response=shell)

    calls = [(i, s) for i, s in enumerate(items) if s["type"] == "function_call"]
    interleaved = interleave and len(calls) > 1
    if interleaved and [i for i, _ in calls] != list(range(len(items) - len(calls), len(items))):
        raise UsageError("interleave=True needs the function calls to be the last items")
    final = "completed" if status == "completed" else "incomplete"
    for index, spec in enumerate(items):
        if interleaved and spec["type"] == "function_call":
            break
        emit("response.output_item.added", output_index=index, item=_added_item(spec))
        _emit_body(emit, index, spec, split)
        if spec["type"] == "function_call":
            emit_call_done(index, spec)
        emit("response.output_item.done", output_index=index, item=_final_item(spec, final))
    if interleaved:
        # Open every call, stream their deltas round-robin, then close each one.
        for index, spec in calls:
            emit("response.output_item.added", output_index=index, item=_added_item(spec))
        streams = [(i, s, iter(split(s["arguments"]))) for i, s in calls]
        for index, spec, piece in _round_robin(streams):
            emit(
                "response.function_call_arguments.delta",
                item_id=spec["id"],
                output_index=index,
                delta=piece,
            )
        for index, spec in calls:
            emit_call_done(index, spec)
            emit("response.output_item.done", output_index=index, item=_final_item(spec, final))

    terminal = render_body(
        response_id=response_id,
        model=model,
        items=items,
        status=status,
        usage=usage,
        created_at=created_at,
        error={"code": "server_error", "message": "scripted failure"}
        if status == "failed"
        else None,
        tool_usage=tool_usage,
    )
    emit(_TERMINAL[status], response=terminal)
    return events


def _round_robin(
    streams: list[tuple[int, Mapping[str, Any], Iterator[str]]],
) -> Iterator[tuple[int, Mapping[str, Any], str]]:
    live = list(streams)
    while live:
        still = []
        for index, spec, pieces in live:
            piece = next(pieces, None)
            if piece is not None:
                yield index, spec, piece
                still.append((index, spec, pieces))
        live = still


def _emit_body(emit: Any, index: int, spec: Mapping[str, Any], split: Splitter) -> None:
    kind = spec["type"]
    if kind in HOSTED:
        emit_hosted(emit, index, spec["item"], split)
        return
    item_id = spec["id"]
    if kind == "message":
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        annotations = list(spec.get("annotations", ()))
        annotate = Annotator(emit, item_id, index, annotations)
        emit(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=empty,
        )
        for piece in split(spec["text"]):
            emit(
                "response.output_text.delta",
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
            annotate.after(piece)
        annotate.rest()
        emit(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=spec["text"],
            logprobs=[],
        )
        emit(
            "response.content_part.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part={**empty, "text": spec["text"], "annotations": copy.deepcopy(annotations)},
        )
    elif kind == "function_call":
        for piece in split(spec["arguments"]):
            emit(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
    elif kind == "reasoning":
        for k, text in enumerate(spec.get("summary", ())):
            part = {"type": "summary_text", "text": ""}
            emit(
                "response.reasoning_summary_part.added",
                item_id=item_id,
                output_index=index,
                summary_index=k,
                part=part,
            )
            for piece in split(text):
                emit(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=index,
                    summary_index=k,
                    delta=piece,
                )
            emit(
                "response.reasoning_summary_text.done",
                item_id=item_id,
                output_index=index,
                summary_index=k,
                text=text,
            )
            emit(
                "response.reasoning_summary_part.done",
                item_id=item_id,
                output_index=index,
                summary_index=k,
                part={**part, "text": text},
            )


def render_stream(**turn: Any) -> bytes:
    """:func:`render_events` encoded as the SSE body (same keywords)."""
    return encode_sse(render_events(**turn))


def render_error_event(
    *,
    message: str | None = None,
    error_type: str = "server_error",
    code: str = "server_error",
    sequence_number: int = 0,
    shape: str = "nested",
) -> dict[str, Any]:
    """The in-stream ``error`` event. ``shape="flat"`` puts ``code``/``message``/``param``
    at the top level (both shapes reach clients; the parser reads both)."""
    error = {
        "type": error_type,
        "code": code,
        "message": message or "The server had an error while processing your request.",
        "param": None,
    }
    if shape == "flat":
        flat = {k: v for k, v in error.items() if k != "type"}
        return {"type": "error", "sequence_number": sequence_number, **flat}
    return {"type": "error", "sequence_number": sequence_number, "error": error}


def encode_sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    """SSE bytes for wire events: ``event: <type>`` and one compact JSON ``data:`` line each."""
    return encode_json_events(events, name_key="type")
