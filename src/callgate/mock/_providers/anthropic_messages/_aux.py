"""Anthropic auxiliary routes: ``GET /anthropic/v1/models`` (``limit``, ``after_id``,
``before_id``), ``GET /anthropic/v1/models/{model_id}`` and
``POST /anthropic/v1/messages/count_tokens``, shaped as the SDK types of both generations
read them (``ModelInfo``; its ``lifecycle`` is required from anthropic 2.x on;
``MessageTokensCount``). Which models and which count: :mod:`callgate.mock._aux`.

A model object: ``type: "model"``, ``id``, ``display_name``, ``created_at`` (the epoch, as
the SDK documents for an unknown release date), ``lifecycle: "active"``,
``max_input_tokens``, ``max_tokens``; the script's ``fields`` replace any of them. A count
request must name a served ``model`` (else the 404 a retrieve gets) and carry
``messages``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from .._kit import Answer, AuxRequest, Host, ModelEntry, Reply

__all__ = ["FAMILY", "routes"]

FAMILY = "anthropic"
PROTOCOLS = ("anthropic_messages",)
DEFAULTS = ("claude-sonnet-4-5",)


def model_object(entry: ModelEntry) -> dict[str, Any]:
    return {
        "type": "model",
        "id": entry.id,
        "display_name": entry.id,
        "created_at": "1970-01-01T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 200000,
        "max_tokens": 64000,
        **entry.fields,
    }


def routes(
    host: Host,
    auth: Callable[[Request], Reply | None],
    error_body: Callable[[int, str], dict[str, Any]],
) -> list[Route]:
    def served(call: AuxRequest) -> list[ModelEntry]:
        return call.served_models(FAMILY, DEFAULTS, PROTOCOLS)

    def found(call: AuxRequest, name: Any) -> ModelEntry | Reply:
        for entry in served(call):
            if entry.id == name:
                return entry
        return Reply(404, error_body(404, f"model: {name}"))

    def get(call: AuxRequest) -> Reply:
        entry = found(call, call.request.path_params["model_id"])
        return entry if isinstance(entry, Reply) else Reply(200, model_object(entry))

    def listing(call: AuxRequest) -> Reply:
        params = call.request.query_params
        limit = params.get("limit", "20")
        if not limit.isdigit() or not 1 <= int(limit) <= 1000:
            return Reply(400, error_body(400, "limit: Input should be between 1 and 1000"))
        models, size = served(call), int(limit)
        ids = [m.id for m in models]
        after, before = params.get("after_id"), params.get("before_id")
        if after in ids:
            window = models[ids.index(after) + 1 :]
            page = window[:size]
        elif before in ids:
            window = models[: ids.index(before)]
            page = window[-size:]
        else:
            window = models
            page = window[:size]
        return Reply(200, {
            "data": [model_object(m) for m in page],
            "has_more": len(window) > size,
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
        })  # fmt: skip

    def count(call: AuxRequest) -> Reply:
        body = call.body
        if not isinstance(body.get("model"), str):
            return Reply(400, error_body(400, "model: Field required"))
        if not isinstance(body.get("messages"), list):
            return Reply(400, error_body(400, "messages: Field required"))
        entry = found(call, body["model"])
        if isinstance(entry, Reply):
            return entry
        return Reply(200, {"input_tokens": call.count_tokens(body)})

    def make(answer: Answer) -> Any:
        return host.aux("anthropic_messages", auth, answer, error_body)

    return [
        Route("/anthropic/v1/models", make(listing), methods=["GET"]),
        Route("/anthropic/v1/models/{model_id:str}", make(get), methods=["GET"]),
        Route("/anthropic/v1/messages/count_tokens", make(count), methods=["POST"]),
    ]
