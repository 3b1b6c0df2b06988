"""The host loop's adapter for Gemini Interactions v1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._protocols import room
from ..._results import ToolResult
from ._base import Adapter, Config, function_declarations, kind_unless, stream, text_request


def _first(request: Any, cfg: Config) -> dict[str, Any]:
    body = text_request(
        request,
        "input",
        lambda t: [{"type": "user_input", "content": [{"type": "text", "text": t}]}],
    )
    body.update(model=cfg.model, tools=list(cfg.tools), store=cfg.store)
    if cfg.instructions is not None:
        body["system_instruction"] = cfg.instructions
    return stream(body)


def _next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    gi = room("gemini_interactions")
    common: dict[str, Any] = {
        "model": cfg.model,
        "tools": list(cfg.tools),
        "system_instruction": cfg.instructions,
    }
    if cfg.store:
        body = gi.build_stateful_continuation(
            turn, results, previous_interaction_was_stored=True, store=True, **common
        )
    else:
        body = gi.build_stateless_continuation(
            turn,
            results,
            snapshot_source=turn.origin,
            prior_input_steps=prev.get("input"),
            **common,
        )
    return stream(body)


def _id(event: Mapping[str, Any]) -> Any:
    if event.get("event_type") == "interaction.created":
        interaction = event.get("interaction")
        return interaction.get("id") if isinstance(interaction, Mapping) else None
    return None


def _kind(turn: Any) -> str:
    refused = None if turn.status == "completed" else f"interaction status {turn.status!r}"
    return kind_unless(turn, refused, "gemini_interactions")


ADAPTER = Adapter(
    protocol="gemini_interactions",
    path="/v1/interactions",
    headers=lambda key: {"x-goog-api-key": key},
    declare=function_declarations,  # the same declaration shape as OpenAI Responses
    first=_first,
    next=_next,
    event_turn_id=_id,
    kind=_kind,
    retrieve=lambda turn_id: (f"/v1/interactions/{turn_id}?stream=true", "sse"),
)
