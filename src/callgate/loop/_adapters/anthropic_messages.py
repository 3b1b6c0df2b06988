"""The host loop's adapter for Anthropic Messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._protocols import room
from ..._results import ToolResult
from .._model import ToolSpec, TurnRefused
from ._base import Adapter, Config, stream, text_request


def _tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"name": s.name, "description": s.description, "input_schema": dict(s.parameters)}
        for s in specs
    )


def _first(request: Any, cfg: Config) -> dict[str, Any]:
    body = text_request(request, "messages", lambda t: [{"role": "user", "content": t}])
    body.update(model=cfg.model, tools=list(cfg.tools), max_tokens=cfg.max_tokens)
    if cfg.instructions is not None:
        body["system"] = cfg.instructions
    if cfg.threads:
        body["thread"] = {"type": "create"}
    return stream(body)


def _next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    if isinstance(prev.get("thread"), Mapping):  # the thread holds the conversation
        body = room("anthropic_messages").build_thread_continuation(
            turn,
            results,
            previous_message_id=turn.message_id,
            thread_request=prev,
            model=cfg.model,
            max_tokens=cfg.max_tokens,
            tools=cfg.tools,
            system=cfg.instructions,
        )
        return stream(body)
    body = room("anthropic_messages").build_continuation(
        turn,
        results,
        history=prev["messages"],
        model=cfg.model,
        max_tokens=cfg.max_tokens,
        tools=cfg.tools,
        system=cfg.instructions,
    )
    return stream(body)


def _id(event: Mapping[str, Any]) -> Any:
    if event.get("type") == "message_start":
        message = event.get("message")
        return message.get("id") if isinstance(message, Mapping) else None
    return None


_FINAL = frozenset({"end_turn", "stop_sequence"})


def _kind(turn: Any) -> str:
    if turn.calls:
        return "calls"
    if turn.recovery_calls or turn.stop_reason not in _FINAL:
        held = len(turn.recovery_calls)
        raise TurnRefused(
            f"stop_reason {turn.stop_reason!r} released no call ({held} held for recovery)",
            provider="anthropic_messages",
            turn=turn,
        )
    return "final"


ADAPTER = Adapter(
    protocol="anthropic_messages",
    path="/v1/messages",
    headers=lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
    declare=_tools,
    first=_first,
    next=_next,
    event_turn_id=_id,
    kind=_kind,
    retrieve=None,
)
