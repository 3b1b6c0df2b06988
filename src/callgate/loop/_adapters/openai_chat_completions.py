"""The host loop's adapter for OpenAI Chat Completions: stateless, the whole history
replayed on every request by the room's ``build_continuation`` (the API keeps nothing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._protocols import room
from ..._results import ToolResult
from .._model import ToolSpec
from ._base import Adapter, Config, kind_unless, stream, text_request

_PROTOCOL = "openai_chat_completions"


def _tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    """``{"type": "function", "function": {...}}`` with ``strict`` stated (the builder
    refuses a tool that leaves it implicit): not strict, as the schemas are the caller's."""
    return tuple(
        {
            "type": "function",
            "function": {
                "name": s.name,
                "description": s.description,
                "parameters": dict(s.parameters),
                "strict": False,
            },
        }
        for s in specs
    )


def _streamed(body: dict[str, Any]) -> dict[str, Any]:
    body["stream_options"] = {"include_usage": True}
    return stream(body)


def _first(request: Any, cfg: Config) -> dict[str, Any]:
    body = text_request(request, "messages", lambda t: [{"role": "user", "content": t}])
    if cfg.instructions is not None and isinstance(body.get("messages"), list):
        body["messages"] = [{"role": "system", "content": cfg.instructions}, *body["messages"]]
    body.update(model=cfg.model, tools=list(cfg.tools))
    return _streamed(body)


def _next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    body: dict[str, Any] = room(_PROTOCOL).build_continuation(
        turn,
        results,
        messages=prev["messages"],
        model=cfg.model,
        tools=list(cfg.tools),
        tool_choice=prev.get("tool_choice"),
        parallel_tool_calls=prev.get("parallel_tool_calls"),
        response_format=prev.get("response_format"),
        max_completion_tokens=prev.get("max_completion_tokens"),
    )
    return _streamed(body)


def _id(event: Mapping[str, Any]) -> Any:
    return event.get("id")  # every chunk carries the completion's id


def _kind(turn: Any) -> str:
    refused = None
    if turn.refusal is not None:
        refused = "a refusal (message.refusal)"
    elif turn.finish_reason != "stop":
        refused = f"finish_reason {turn.finish_reason!r}"
    return kind_unless(turn, refused, _PROTOCOL)


ADAPTER = Adapter(
    protocol=_PROTOCOL,
    path="/chat/completions",
    headers=lambda key: {"authorization": f"Bearer {key}"},
    declare=_tools,
    first=_first,
    next=_next,
    event_turn_id=_id,
    kind=_kind,
    retrieve=None,
)
