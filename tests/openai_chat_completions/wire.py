"""Hand-built Chat Completions wire pieces for the room's tests (shapes of the contract §1.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .make_fixtures import HEAD, USAGE, args, chunk, d, first, sse

__all__ = [
    "BODY",
    "FIXTURES",
    "HEAD",
    "USAGE",
    "args",
    "body",
    "chunk",
    "d",
    "first",
    "sse",
    "two_calls",
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai_chat_completions"
ROLE = chunk({"role": "assistant", "content": None})


def two_calls(finish: str | None = "tool_calls") -> list[dict[str, Any]]:
    """Role, two interleaved calls, a finish chunk (none when ``finish`` is None)."""
    out = [
        ROLE,
        first(0, "call_a", "get"),
        args(0, '{"a":'),
        first(1, "call_b", "put"),
        args(1, '{"b":2}'),
        args(0, "1}"),
    ]
    if finish is not None:
        out.append(chunk({}, finish))
    return out


def body(message: dict[str, Any], finish: Any = "tool_calls", **top: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", **message},
        "logprobs": None,
    }
    if finish is not None:
        choice["finish_reason"] = finish
    return {
        "id": "chatcmpl-b",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
        **top,
    }


BODY = body(
    {
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get", "arguments": '{"a":1}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "put", "arguments": '{"b":2}'},
            },
        ],
    }
)
