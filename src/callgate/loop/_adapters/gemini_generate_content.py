"""The host loop's adapter for Gemini generateContent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._protocols import room
from ..._results import ToolResult
from .._model import ToolSpec
from ._base import Adapter, Config, kind_unless, text_request

# the loop records ``{"model": "models/<m>", "body": {...}}`` (what the room's builder
# returns) and posts the body to ``/v1/<model>:streamGenerateContent?alt=sse``.


def _tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    declarations = [
        {"name": s.name, "description": s.description, "parametersJsonSchema": dict(s.parameters)}
        for s in specs
    ]
    return ({"functionDeclarations": declarations},) if declarations else ()


def _first(request: Any, cfg: Config) -> dict[str, Any]:
    body = text_request(request, "contents", lambda t: [{"role": "user", "parts": [{"text": t}]}])
    body["tools"] = list(cfg.tools)
    if cfg.instructions is not None:
        body["systemInstruction"] = {"parts": [{"text": cfg.instructions}]}
    return {"model": f"models/{cfg.model}", "body": body}


def _next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    body = prev["body"]
    built: dict[str, Any] = room("gemini_generate_content").build_continuation(
        turn,
        results,
        history=body["contents"],
        model=cfg.model,
        tools=list(cfg.tools),
        tool_config=body.get("toolConfig"),
        system_instruction=cfg.instructions,
        generation_config=body.get("generationConfig"),
        safety_settings=body.get("safetySettings"),
    )
    return built


def _route(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return f"/v1/{request['model']}:streamGenerateContent?alt=sse", request["body"]


def _id(event: Mapping[str, Any]) -> Any:
    return event.get("responseId")


def _kind(turn: Any) -> str:
    refused = None if turn.finish_reason == "STOP" else f"finishReason {turn.finish_reason!r}"
    return kind_unless(turn, refused, "gemini_generate_content")


ADAPTER = Adapter(
    protocol="gemini_generate_content",
    path="/v1/models",
    headers=lambda key: {"x-goog-api-key": key},
    declare=_tools,
    first=_first,
    next=_next,
    event_turn_id=_id,
    kind=_kind,
    retrieve=None,
    route=_route,
)
