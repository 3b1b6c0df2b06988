"""Gemini generateContent in the mock:
a scripted turn on the wire, through the room's ``_render`` seam.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ...._errors import CallgateError, UsageError
from ...._json import loads_strict
from ....gemini_generate_content import _render
from .._kit import Ids, RenderedTurn, ScriptTurn, arguments, usage
from . import _hosted as hosted
from ._routes import _PROTOCOL
from ._signatures import place_signature, signs

# Every finishReason either SDK generation knows (google-genai 3.6.1's 24 values).
STATUSES = (
    "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST",
    "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY",
    "UNEXPECTED_TOOL_CALL", "IMAGE_PROHIBITED_CONTENT", "NO_IMAGE", "IMAGE_RECITATION",
    "IMAGE_OTHER", "FINISH_REASON_UNSPECIFIED", "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE", "ESCALATION", "PUP_LIMITED_DISABLED",
    "CONTINUATION", "MODEL_ARMOR",
)  # fmt: skip


def _parts(
    turn: ScriptTurn, ids: Ids, model: str
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The room renderer's scripted parts for ``turn``, and its (call key, name) pairs."""
    respond, split = turn.respond, turn.splitter()
    parts: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning") or {}
    signature = reasoning.get("signature") or None
    signed = signature is None and signs(respond, model)
    if reasoning.get("summary"):
        summary = reasoning["summary"]
        parts.append({"text": summary, "deltas": split(summary) or [summary], "thought": True})
    parts += hosted.code_parts(respond)
    text = hosted.answer_text(respond)  # cited text: its markers removed
    if text:
        parts.append({"text": text, "deltas": split(text) or [text]})
    calls: list[tuple[str, str]] = []
    for n, spec in enumerate(respond.get("calls", [])):
        call: dict[str, Any] = {"name": spec["name"]}
        if "id" in spec:
            call["id"] = spec["id"]
        call["args"] = json.loads(arguments(spec, as_object=True) or "{}")
        part: dict[str, Any] = {"function_call": call}
        if signature is not None and n == 0:
            part["signature"] = signature
        parts.append(part)
        # The mock's key for an id-less call (never sent: the wire has no id there).
        calls.append((spec.get("id") or ids("gc-", "call", n, size=16), spec["name"]))
    if not parts or (signature is not None and not calls):
        parts.append({"text": "", **({"signature": signature} if signature else {})})
    if signed:
        place_signature(parts, ids("", "thought_signature", size=32))
    return parts, calls


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    respond = turn.respond
    response_id = ids("", "response", size=22)
    parts, calls = _parts(turn, ids, model)
    finish = respond.get("status", "STOP")
    counts = usage(respond.get("usage"), "promptTokenCount", "candidatesTokenCount")
    counts["totalTokenCount"] = counts["promptTokenCount"] + counts["candidatesTokenCount"]
    tool_tokens = hosted.tool_tokens(respond)
    if tool_tokens is not None:  # hosted tool results are metered as prompt tokens
        counts["toolUsePromptTokenCount"] = tool_tokens
        counts["totalTokenCount"] += tool_tokens
    texts = [n for n, p in enumerate(parts) if "text" in p and not p.get("thought")]
    found = hosted.metadata(respond, texts[0] if texts else 0)
    token = None
    if finish == "CONTINUATION":
        token = base64.b64encode(ids("", "continuation", size=24).encode()).decode()
    common: dict[str, Any] = {
        "parts": parts,
        "finish_reason": finish,
        "usage": counts,
        "response_id": response_id,
        "model_version": model,
    }
    if not stream:
        extra = found if token is None else {**found, "continuationToken": token}
        body = _render.render_body(**common, candidate_extra=extra)
        return RenderedTurn(response_id, tuple(calls), [], body)
    events = _render.render_events(
        **common,
        chunk_plan=respond.get("chunk_plan"),
        continuation_token=token,
        candidate_extra=found,
        first_extra=hosted.first_chunk(respond),
    )
    return RenderedTurn(response_id, tuple(calls), events, None)


def _dummy_ids(prefix: str, kind: str, n: int = 0, size: int = 24) -> str:
    return prefix + "0" * size


def _object_text(raw: Any) -> bool:
    try:
        return isinstance(raw, str) and isinstance(loads_strict(raw), dict)
    except CallgateError:
        return False


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """Why a ``respond`` block the engine accepted cannot be sent on this wire, or ``None``:
    the turn is rendered once, both ways, when the script is loaded (never a 500 later)."""
    problem = hosted.check(respond)
    if problem is not None:
        return problem
    for n, spec in enumerate(respond.get("calls") or ()):
        if isinstance(spec, Mapping) and "raw" in spec and not _object_text(spec["raw"]):
            return (
                f"calls[{n}].raw: generateContent sends a call's args whole, as a JSON "
                "object; raw text that is no JSON object cannot be carried (script a "
                "MAX_TOKENS status or a stream fault instead)"
            )
    if type(respond.get("thought_signatures", False)) is not bool:
        return "thought_signatures is true or false (default: by the model name)"
    plan = respond.get("chunk_plan")
    if plan is not None and (
        not isinstance(plan, list) or not all(type(n) is int and n >= 0 for n in plan)
    ):
        return "chunk_plan is a list of part counts (ints >= 0), one per chunk"
    turn = ScriptTurn(_PROTOCOL, {}, respond, "")
    try:
        for stream in (True, False):
            render(turn, _dummy_ids, stream, "gemini-3", True, "2026-11")
    except UsageError as exc:
        return f"cannot be rendered as generateContent: {exc.message}"
    return None
