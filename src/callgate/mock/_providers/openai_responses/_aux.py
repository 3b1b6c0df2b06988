"""OpenAI auxiliary routes: ``GET /openai/v1/models`` and ``GET /openai/v1/models/{model}``,
and the same under the Azure v1 base (``/azure-openai/openai/v1``), shaped as the SDK's
``Model`` of both generations (``id``, ``object: "model"``, ``created``, ``owned_by``)
and its ``SyncPage`` (``{"object": "list", "data": [...]}``). Which models:
:mod:`callgate.mock._aux`. ``created`` is 0 and ``owned_by`` ``"callgate"`` unless the
script's ``fields`` say otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from .._kit import AuxRequest, Host, ModelEntry, Reply

__all__ = ["FAMILY", "routes"]

FAMILY = "openai"
PROTOCOLS = ("openai_responses",)
DEFAULTS = ("gpt-4.1",)


def model_object(entry: ModelEntry) -> dict[str, Any]:
    return {"id": entry.id, "object": "model", "created": 0, "owned_by": "callgate", **entry.fields}


def routes(
    host: Host,
    auth: Callable[[Request], Reply | None],
    auth_azure: Callable[[Request], Reply | None],
    error_body: Callable[..., dict[str, Any]],
) -> list[Route]:
    def served(call: AuxRequest) -> list[ModelEntry]:
        return call.served_models(FAMILY, DEFAULTS, PROTOCOLS)

    def get(call: AuxRequest) -> Reply:
        name = call.request.path_params["model"]
        for entry in served(call):
            if entry.id == name:
                return Reply(200, model_object(entry))
        body = error_body(404, f"The model '{name}' does not exist", code="model_not_found")
        body["error"]["param"] = "model"
        return Reply(404, body)

    def listing(call: AuxRequest) -> Reply:
        return Reply(200, {"object": "list", "data": [model_object(m) for m in served(call)]})

    found: list[Route] = []
    for base, check in (("/openai/v1", auth), ("/azure-openai/openai/v1", auth_azure)):
        found += [
            Route(f"{base}/models", host.aux("openai_responses", check, listing, error_body),
                  methods=["GET"]),
            Route(f"{base}/models/{{model:str}}",
                  host.aux("openai_responses", check, get, error_body), methods=["GET"]),
        ]  # fmt: skip
    return found
