"""The host loop's adapter for OpenAI Responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._protocols import room
from ..._results import ToolResult
from ._base import Adapter, Config, function_declarations, stream, text_request


def _first(request: Any, cfg: Config) -> dict[str, Any]:
    body = text_request(request, "input", lambda t: [{"role": "user", "content": t}])
    body.update(model=cfg.model, tools=list(cfg.tools), store=cfg.store)
    if cfg.instructions is not None:
        body["instructions"] = cfg.instructions
    return stream(body)


def _next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    oai = room("openai_responses")
    common: dict[str, Any] = {
        "model": cfg.model,
        "instructions": cfg.instructions,
        "tools": cfg.tools,
        "request_controls": {"stream": True},
    }
    if cfg.store:
        return oai.build_stateful_continuation(
            turn, results, previous_response_was_stored=True, store=True, **common
        )
    prior = prev.get("input")
    if isinstance(prior, str):
        prior = [{"role": "user", "content": prior}]
    return oai.build_stateless_continuation(
        turn, results, prior_input_items=prior or [], store=False, **common
    )


def _id(event: Mapping[str, Any]) -> Any:
    if event.get("type") == "response.created":
        response = event.get("response")
        return response.get("id") if isinstance(response, Mapping) else None
    return None


def _kind(turn: Any) -> str:
    return "calls" if turn.calls else "final"


ADAPTER = Adapter(
    protocol="openai_responses",
    path="/responses",
    headers=lambda key: {"authorization": f"Bearer {key}"},
    declare=function_declarations,
    first=_first,
    next=_next,
    event_turn_id=_id,
    kind=_kind,
    retrieve=lambda turn_id: (f"/responses/{turn_id}", "body"),
    parser_takes_request=True,
)
