"""Scripted turn -> Chat Completions wire chunks, bytes and bodies (the writer seam).

Pure functions producing the shapes OpenAI streams (``docs/contracts/openai-chat-completions.md``
§1.3): a role chunk, one chunk per content delta, the first delta of each tool call with
``index``, ``id``, ``type``, ``function.name`` and ``arguments: ""``, then one chunk per
argument fragment (``index`` and ``function.arguments`` only), a finish chunk with an
empty delta, an optional usage chunk with empty ``choices``, then ``data: [DONE]``.

A scripted call is ``{"id": str, "name": str, "arguments": [str, ...]}`` (the fragments,
joined: the argument text). Every function raises :class:`~callgate.UsageError` for a
script it cannot render.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._errors import UsageError
from ._events import CHUNK_OBJECT, COMPLETION_OBJECT, DONE_MARKER

__all__ = ["encode_sse", "render_body", "render_chunks", "render_stream"]


def _call(call: Any) -> tuple[str, str, list[str]]:
    if type(call) is not dict:
        raise UsageError("a scripted call must be a dict")
    call_id, name, fragments = call.get("id"), call.get("name"), call.get("arguments", [])
    if type(call_id) is not str or type(name) is not str or type(fragments) is not list:
        raise UsageError("a scripted call needs str 'id' and 'name' and a list of fragments")
    if not all(type(f) is str for f in fragments):
        raise UsageError("argument fragments must be strings")
    return call_id, name, fragments


def render_chunks(
    *,
    completion_id: str = "chatcmpl-callgate",
    model: str = "gpt-4o-mini",
    created: int = 1_760_000_000,
    content: Sequence[str] = (),
    calls: Sequence[dict[str, Any]] = (),
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The chunks of one streamed turn (without ``[DONE]``). ``finish_reason`` defaults
    to ``tool_calls`` when there are calls, else ``stop``."""
    head = {"id": completion_id, "object": CHUNK_OBJECT, "created": created, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "choices": [choice]}

    out = [chunk({"role": "assistant", "content": "" if content else None})]
    out += [chunk({"content": text}) for text in content]
    for index, call in enumerate(calls):
        call_id, name, fragments = _call(call)
        first = {"name": name, "arguments": ""}
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call_id, "type": "function", "function": first}
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]})
            for f in fragments
        ]
    out.append(chunk({}, finish_reason or ("tool_calls" if calls else "stop")))
    if usage is not None:
        out.append({**head, "choices": [], "usage": usage})
    return out


def encode_sse(chunks: Sequence[dict[str, Any]], *, done: bool = True) -> bytes:
    """``data: <json>\\n\\n`` per chunk, then ``data: [DONE]\\n\\n`` unless ``done=False``."""
    lines = [b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks]
    if done:
        lines.append(b"data: " + DONE_MARKER.encode() + b"\n\n")
    return b"".join(lines)


def render_stream(**turn: Any) -> bytes:
    """The SSE bytes of :func:`render_chunks` (same arguments), ``[DONE]`` included."""
    return encode_sse(render_chunks(**turn))


def render_body(
    *,
    completion_id: str = "chatcmpl-callgate",
    model: str = "gpt-4o-mini",
    created: int = 1_760_000_000,
    content: Sequence[str] = (),
    calls: Sequence[dict[str, Any]] = (),
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` body of the same turn."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) if content else None,
        "refusal": None,
    }
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": "".join(f)}}
            for i, n, f in map(_call, calls)
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
    }
    body: dict[str, Any] = {
        "id": completion_id,
        "object": COMPLETION_OBJECT,
        "created": created,
        "model": model,
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = usage
    return body
