"""Scripted turn -> generateContent wire bytes and bodies (the writer seam of the mock).

Pure functions, lowerCamel keys everywhere, the shapes the contract's mock checklist asks
for (``contracts/gemini-generate-content.md`` §5.1, §9.5, §12): ``data: <json>\\n\\n`` per
chunk and nothing else, ``finishReason`` (and by default ``usageMetadata``) on the last
chunk, every function call whole inside one chunk, ``error`` as the first key of an error
chunk, no ``continuationToken`` unless scripted.

A scripted part is one of:

- ``{"text": str, "deltas"?: [str, ...], "thought"?: bool, "signature"?: str}``: streamed
  as one wire part per delta (``deltas`` must join to ``text``; default: one delta); a
  signature rides on the last delta (the body carries one part with the whole text);
- ``{"function_call": {"name": str, "args"?: dict, "id"?: str}, "signature"?: str}``;
- ``{"raw": dict}``: a wire part sent verbatim (hosted-tool parts, inline data, ...).

``chunk_plan`` lists how many wire parts go in each chunk (``0`` allowed; it must add up
to the number of wire parts): parallel calls in one chunk or in several, a signature on a
trailing empty text part, and so on. Default: one wire part per chunk. Every function
raises :class:`~callgate.UsageError` for a script it cannot render.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import UsageError

__all__ = [
    "encode_sse",
    "render_blocked",
    "render_body",
    "render_error_body",
    "render_error_event",
    "render_events",
    "render_stream",
    "wire_parts",
]

_MODEL = "gemini-3-flash-preview"


def _dumps(obj: Any) -> bytes:
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"scripted value is not JSON: {exc}") from None
    return text.encode("utf-8")


def _text_parts(spec: Mapping[str, Any], whole: bool) -> list[dict[str, Any]]:
    text = spec["text"]
    deltas = spec.get("deltas", [text])
    if type(text) is not str or not isinstance(deltas, Sequence) or isinstance(deltas, str):
        raise UsageError("a text part needs a str 'text' and a list of str 'deltas'")
    if not all(type(d) is str for d in deltas) or "".join(deltas) != text or not deltas:
        raise UsageError("a text part's 'deltas' must be strs that join to its 'text'")
    pieces = [text] if whole else list(deltas)
    out: list[dict[str, Any]] = []
    for piece in pieces:
        part: dict[str, Any] = {"text": piece}
        if spec.get("thought"):
            part["thought"] = True
        out.append(part)
    signature = spec.get("signature")
    if signature is not None:
        if type(signature) is not str:
            raise UsageError("'signature' must be a base64 str")
        out[-1]["thoughtSignature"] = signature
    return out


def _call_part(spec: Mapping[str, Any]) -> dict[str, Any]:
    call = spec["function_call"]
    if not isinstance(call, Mapping) or type(call.get("name")) is not str or not call["name"]:
        raise UsageError("'function_call' needs a non-empty str 'name'")
    wire: dict[str, Any] = {}
    if call.get("id") is not None:
        wire["id"] = call["id"]
    wire["name"] = call["name"]
    wire["args"] = dict(call.get("args") or {})
    part: dict[str, Any] = {"functionCall": wire}
    if spec.get("signature") is not None:
        part["thoughtSignature"] = spec["signature"]
    return part


def wire_parts(parts: Any, *, whole: bool = False) -> list[dict[str, Any]]:
    """The wire parts of a scripted part list (``whole=True``: text deltas joined, as a
    non-streaming body carries them)."""
    if isinstance(parts, str | bytes) or not isinstance(parts, Sequence):
        raise UsageError("parts must be a list of scripted parts")
    out: list[dict[str, Any]] = []
    for spec in parts:
        if not isinstance(spec, Mapping):
            raise UsageError("a scripted part must be a mapping")
        if "text" in spec:
            out.extend(_text_parts(spec, whole))
        elif "function_call" in spec:
            out.append(_call_part(spec))
        elif "raw" in spec and isinstance(spec["raw"], Mapping):
            out.append(json.loads(_dumps(spec["raw"])))
        else:
            raise UsageError(f"cannot render scripted part {sorted(spec)}")
    return out


def _plan(n_parts: int, chunk_plan: Sequence[int] | None) -> list[int]:
    if chunk_plan is None:
        return [1] * n_parts or [0]
    plan = list(chunk_plan)
    if not plan or any(type(n) is not int or n < 0 for n in plan) or sum(plan) != n_parts:
        raise UsageError(f"chunk_plan must be ints >= 0 adding up to {n_parts} wire parts")
    return plan


def render_events(
    *,
    parts: Sequence[Mapping[str, Any]],
    finish_reason: str | None = "STOP",
    usage: Mapping[str, Any] | None = None,
    chunk_plan: Sequence[int] | None = None,
    usage_on_every_chunk: bool = False,
    response_id: str = "resp-1",
    model_version: str = _MODEL,
    finish_message: str | None = None,
    continuation_token: str | None = None,
    candidate_extra: Mapping[str, Any] | None = None,
    first_extra: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The chunk objects of one streamed turn. ``finish_reason=None`` leaves it off (a
    truncated stream); ``candidate_extra`` (e.g. ``groundingMetadata``) goes on the last
    chunk's candidate, ``first_extra`` on the first one's when the stream has several (an
    early part of metadata the last chunk re-sends whole). A chunk with no part carries no
    ``content``."""
    wire = wire_parts(parts)
    plan = _plan(len(wire), chunk_plan)
    chunks: list[dict[str, Any]] = []
    start = 0
    for number, count in enumerate(plan):
        last = number == len(plan) - 1
        candidate: dict[str, Any] = {}
        if count:
            candidate["content"] = {"parts": wire[start : start + count], "role": "model"}
        start += count
        if number == 0 and not last:
            candidate.update(first_extra or {})
        if last:
            if finish_reason is not None:
                candidate["finishReason"] = finish_reason
            if finish_message is not None:
                candidate["finishMessage"] = finish_message
            if continuation_token is not None:
                candidate["continuationToken"] = continuation_token
            candidate.update(candidate_extra or {})
        candidate["index"] = 0
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if usage is not None and (last or usage_on_every_chunk):
            chunk["usageMetadata"] = dict(usage)
        chunk["modelVersion"] = model_version
        chunk["responseId"] = response_id
        chunks.append(chunk)
    return chunks


def encode_sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    """SSE bytes as the SDK reads them: one ``data: <compact json>`` line and a blank line
    per chunk, nothing else (no ``event:`` names, no ``[DONE]``)."""
    return b"".join(b"data: " + _dumps(event) + b"\n\n" for event in events)


def render_stream(**script: Any) -> bytes:
    """:func:`render_events` framed by :func:`encode_sse` (the SSE body; same keywords)."""
    return encode_sse(render_events(**script))


def render_body(
    *,
    parts: Sequence[Mapping[str, Any]],
    finish_reason: str | None = "STOP",
    usage: Mapping[str, Any] | None = None,
    response_id: str = "resp-1",
    model_version: str = _MODEL,
    finish_message: str | None = None,
    candidate_extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The non-streaming ``generateContent`` body of the same scripted turn."""
    wire = wire_parts(parts, whole=True)
    candidate: dict[str, Any] = {}
    if wire:
        candidate["content"] = {"parts": wire, "role": "model"}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    if finish_message is not None:
        candidate["finishMessage"] = finish_message
    candidate.update(candidate_extra or {})
    candidate["index"] = 0
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = dict(usage)
    body["modelVersion"] = model_version
    body["responseId"] = response_id
    return body


def render_blocked(
    block_reason: str, *, usage: Mapping[str, Any] | None = None, model_version: str = _MODEL
) -> dict[str, Any]:
    """A prompt-blocked response: ``promptFeedback.blockReason`` and no candidates (the
    body, or the single chunk of a stream)."""
    body: dict[str, Any] = {"promptFeedback": {"blockReason": block_reason}}
    if usage is not None:
        body["usageMetadata"] = dict(usage)
    body["modelVersion"] = model_version
    return body


def render_error_body(code: int, message: str, status: str) -> dict[str, Any]:
    """The provider's error object: ``{"error": {"code", "message", "status"}}``."""
    if type(code) is not int or type(message) is not str or type(status) is not str:
        raise UsageError("an error needs an int code and str message and status")
    return {"error": {"code": code, "message": message, "status": status}}


def render_error_event(
    *, code: int = 500, message: str | None = None, status: str = "INTERNAL"
) -> dict[str, Any]:
    """A mid-stream error chunk, ``error`` its only (so first) key: the SDK only raises when
    the chunk's JSON starts with ``{"error":``."""
    return render_error_body(code, message or "Internal error encountered.", status)
