"""Scripted turn -> Anthropic Messages wire events: the writer seam of the mock.

The seam every room's ``_render`` declares: :func:`render_events` (the stream as wire event
dicts), :func:`render_stream` (those events as SSE bytes), :func:`render_body` (the
non-streaming body), :func:`render_error_event` (the in-stream error event) and
:func:`encode_sse`. Only ``callgate.mock._providers`` imports it.

Follows the documented order: ``message_start``, per block ``content_block_start`` →
deltas → ``content_block_stop``, ``message_delta`` (stop reason, cumulative usage),
``message_stop``. Blocks are strictly sequential (the protocol has no interleaving);
``ping`` events can be sprinkled in. Every frame is a named SSE event whose name equals
its JSON ``type``, which the official SDK needs to route it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


def _whole(text: str) -> list[str]:
    return [text] if text else []


def _final_block(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind = spec["type"]
    if kind == "text":
        if spec.get("citations"):
            return {"type": "text", "text": spec["text"], "citations": list(spec["citations"])}
        return {"type": "text", "text": spec["text"]}
    if kind == "whole":  # a block complete at content_block_start (server tool results)
        return dict(spec["block"])
    if kind == "thinking":
        return {"type": "thinking", "thinking": spec["thinking"], "signature": spec["signature"]}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": spec["data"]}
    if kind in ("tool_use", "server_tool_use"):
        return {
            "type": kind,
            "id": spec["id"],
            "name": spec["name"],
            "input": loads_strict(spec["input_json"]) if spec["input_json"] else {},
            **({"caller": spec["caller"]} if "caller" in spec else {}),
        }
    raise UsageError(f"cannot render a content block of type {kind!r}")


def _usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    given = dict(usage or {})
    counts: dict[str, Any] = {
        "input_tokens": given.get("input_tokens", 12),
        "output_tokens": given.get("output_tokens", 34),
    }
    if "server_tool_use" in given:  # both counters, cumulative
        counts["server_tool_use"] = dict(given["server_tool_use"])
    return counts


def render_body(
    *,
    message_id: str,
    model: str,
    blocks: Sequence[Mapping[str, Any]],
    stop_reason: str | None,
    usage: Mapping[str, Any] | None = None,
    container: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Message object (non-streaming body). ``tool_use`` specs need valid JSON input.
    ``usage``: ``input_tokens`` / ``output_tokens`` (12 and 34 when not given) and, for
    server tools, ``server_tool_use``; ``container``: the code-execution container."""
    body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_final_block(spec) for spec in blocks],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(usage),
    }
    if container is not None:
        body["container"] = dict(container)
    return body


def render_events(
    *,
    message_id: str,
    model: str,
    blocks: Sequence[Mapping[str, Any]],
    stop_reason: str,
    split: Splitter = _whole,
    ping_every: int | None = None,
    usage: Mapping[str, Any] | None = None,
    container: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Wire events (dicts) for one scripted assistant message.

    ``blocks`` are specs: ``{"type": "text", "text"}``, ``{"type": "thinking", "thinking",
    "signature"}``, ``{"type": "redacted_thinking", "data"}``, ``{"type": "tool_use", "id",
    "name", "input_json"}`` (the exact JSON text streamed as ``partial_json``; it may be
    cut short to script a ``max_tokens`` truncation). Server tools: ``{"type":
    "server_tool_use", "id", "name", "input_json"}`` streams like ``tool_use`` (an empty
    first fragment, as the API sends), ``{"type": "whole", "block"}`` is a block complete at
    ``content_block_start`` (a ``*_tool_result``), and a text spec's ``citations`` stream as
    ``citations_delta`` events before its text. ``ping_every=n`` inserts a ``ping``
    after every n-th event; ``usage`` and ``container`` as for :func:`render_body` (both
    arrive in ``message_delta``; ``message_start`` has zero server counters). Raises
    :class:`UsageError` for an unknown block type.
    """
    events: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        events.append(event)
        if ping_every and len(events) % ping_every == 0:
            events.append({"type": "ping"})

    tokens = _usage(usage)
    start = render_body(
        message_id=message_id,
        model=model,
        blocks=(),
        stop_reason=None,
        usage={"input_tokens": tokens["input_tokens"], "output_tokens": 1},
    )
    if "server_tool_use" in tokens:
        start["usage"]["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
    emit({"type": "message_start", "message": start})
    for index, spec in enumerate(blocks):
        kind = spec["type"]
        if kind == "text":
            emit(_start(index, {"type": "text", "text": ""}))
            for citation in spec.get("citations", ()):
                emit(_delta(index, {"type": "citations_delta", "citation": citation}))
            for piece in split(spec["text"]):
                emit(_delta(index, {"type": "text_delta", "text": piece}))
        elif kind == "thinking":
            emit(_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
            for piece in split(spec["thinking"]):
                emit(_delta(index, {"type": "thinking_delta", "thinking": piece}))
            emit(_delta(index, {"type": "signature_delta", "signature": spec["signature"]}))
        elif kind in ("redacted_thinking", "whole"):
            emit(_start(index, _final_block(spec)))
        elif kind in ("tool_use", "server_tool_use"):
            block = {**_final_block({**spec, "input_json": ""}), "input": {}}
            emit(_start(index, block))
            if kind == "server_tool_use":
                emit(_delta(index, {"type": "input_json_delta", "partial_json": ""}))
            for piece in split(spec["input_json"]):
                emit(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
        else:
            raise UsageError(f"cannot render a content block of type {kind!r}")
        emit({"type": "content_block_stop", "index": index})
    final: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    if container is not None:
        final["container"] = dict(container)
    counts = {k: v for k, v in tokens.items() if k in ("output_tokens", "server_tool_use")}
    emit({"type": "message_delta", "delta": final, "usage": counts})
    emit({"type": "message_stop"})
    return events


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def render_stream(**turn: Any) -> bytes:
    """:func:`render_events` encoded as the SSE body (same keywords)."""
    return encode_sse(render_events(**turn))


def render_error_event(
    *, message: str | None = None, error_type: str = "overloaded_error", code: str | None = None
) -> dict[str, Any]:
    """The in-stream ``error`` event; ``code`` goes to ``error.details.error_code``."""
    error: dict[str, Any] = {"type": error_type, "message": message or "Overloaded"}
    if code is not None:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error}


def encode_sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    """SSE bytes: ``event: <type>`` plus one compact JSON ``data:`` line per event."""
    return encode_json_events(events, name_key="type")
