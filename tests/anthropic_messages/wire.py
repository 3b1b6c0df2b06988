"""Shared helpers for the anthropic_messages tests: SSE frame builders and fixture access.

A uniquely named module (not ``conftest``) so ``from anthropic_wire import ...`` cannot
collide with another directory's helpers under pytest's rootdir-based imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callgate.anthropic_messages import Turn
from callgate.contracts import Fixture, load_fixtures

from .. import wire as shared

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic_messages"


def all_fixtures() -> tuple[Fixture, ...]:
    return load_fixtures(FIXTURE_DIR)


def wire_fixtures() -> list[Fixture]:
    return [f for f in all_fixtures() if f.layer == "wire-sse"]


def frame(obj: Any, name: str | None = "auto") -> bytes:
    """One SSE frame; ``name="auto"`` uses the object's type, ``None`` omits the line."""
    return shared.frame(obj, obj["type"] if name == "auto" else name)


def sse(*events: Any) -> bytes:
    return b"".join(frame(e) for e in events)


def message_start(mid: str = "m-1", **usage: int) -> dict[str, Any]:
    u = {"input_tokens": 3, "output_tokens": 1}
    u.update(usage)
    return {
        "type": "message_start",
        "message": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": "model-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": u,
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, d: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def text_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, {"type": "text_delta", "text": text})


def json_delta(index: int, fragment: str) -> dict[str, Any]:
    return delta(index, {"type": "input_json_delta", "partial_json": fragment})


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str | None, out: int = 10, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"stop_reason": reason, "stop_sequence": None}
    d.update(extra)
    return {"type": "message_delta", "delta": d, "usage": {"output_tokens": out}}


MESSAGE_STOP = {"type": "message_stop"}
PING = {"type": "ping"}


def tool_block(
    index: int, call_id: str, name: str, fragments: list[str], start_input: Any = None
) -> list[dict[str, Any]]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": start_input or {}}
    return [
        block_start(index, block),
        *(json_delta(index, f) for f in fragments),
        block_stop(index),
    ]


def text_block(index: int, *parts: str) -> list[dict[str, Any]]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(text_delta(index, p) for p in parts),
        block_stop(index),
    ]


def tool_turn_events(*tools: tuple[str, str, list[str]], reason: str = "tool_use") -> list[Any]:
    events: list[Any] = [message_start()]
    for index, (call_id, name, fragments) in enumerate(tools):
        events += tool_block(index, call_id, name, fragments)
    return [*events, message_delta(reason), MESSAGE_STOP]


def check_expected(turn: Turn, expected: dict[str, Any]) -> None:
    assert turn.complete
    assert turn.stop_reason == expected["stop_reason"]
    assert [[c.call_id, c.name, c.arguments, c.index] for c in turn.calls] == expected["calls"]
    assert [[r.call_id, r.reason, r.partial_input] for r in turn.recovery_calls] == expected[
        "recovery"
    ]
    assert [b["type"] for b in turn.content] == expected["content_types"]
    for index, text in expected.get("texts", {}).items():
        assert turn.content[int(index)]["text"] == text
    assert turn.send_back_unchanged is expected.get("send_back_unchanged", False)


# A non-streamed Message of a programmatic tool call in a code-execution container, whose
# `container.expires_at` the anthropic SDK holds as a datetime.
CONTAINER_BODY: dict[str, Any] = {
    "id": "msg_container_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-model",
    "content": [
        {"type": "server_tool_use", "id": "srvtoolu_9", "name": "code_execution", "input": {}},
        {
            "type": "tool_use",
            "id": "toolu_9",
            "name": "lookup",
            "input": {"q": "a"},
            "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_9"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 20},
    "container": {"id": "container_9", "expires_at": "2026-12-01T10:30:00Z"},
}
