"""Builders of generateContent chunks and SSE bytes for the tests (synthetic ids)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from callgate.gemini_generate_content import Turn

from .. import wire as shared

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini_generate_content"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def sse(*chunks: Any) -> bytes:
    return shared.sse(chunks)


def chunk(*parts: Any, finish: str | None = None, **candidate: Any) -> dict[str, Any]:
    cand: dict[str, Any] = {}
    if parts:
        cand["content"] = {"role": "model", "parts": list(parts)}
    if finish is not None:
        cand["finishReason"] = finish
    cand.update(candidate)
    return {"candidates": [cand], "responseId": "r-1"}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"text": value, **extra}


def call(
    name: str, args: dict[str, Any] | None = None, call_id: str | None = None
) -> dict[str, Any]:
    fc: dict[str, Any] = {"name": name, "args": args if args is not None else {}}
    if call_id is not None:
        fc["id"] = call_id
    return {"functionCall": fc}


def stream_with_finish(reason: str, *parts: Any) -> bytes:
    """A short stream: a text delta, then the parts and ``reason`` on the last chunk."""
    return sse(chunk(text("Hi")), chunk(*(parts or (text("."),)), finish=reason))


def summary(turn: Turn) -> dict[str, Any]:
    """What a fixture's ``expected`` pins (local ids shown as None)."""
    out: dict[str, Any] = {
        "finish_reason": turn.finish_reason,
        "calls": [[c.provider_id, c.name, c.arguments] for c in turn.calls],
        "text": turn.text,
        "n_parts": len(turn.parts),
        "usage": turn.usage,
    }
    sigs = [p["thoughtSignature"] for p in turn.parts if "thoughtSignature" in p]
    if sigs:
        out["signatures"] = sigs
    if turn.continuation_token is not None:
        out["continuation_token"] = turn.continuation_token
    if turn.hosted_calls:
        out["hosted"] = [[c.tool, c.id, c.status] for c in turn.hosted_calls]
    if turn.citations:
        out["citations"] = [[c.kind, c.source, c.start, c.end] for c in turn.citations]
    return out
