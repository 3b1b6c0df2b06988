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

from ... import _aux
from ..._http import Reply

__all__ = ["FAMILY", "routes"]

FAMILY = "openai"
PROTOCOLS = ("openai_responses",)
DEFAULTS = ("gpt-4.1",)


def model_object(entry: _aux.ModelEntry) -> dict[str, Any]:
    return {"id": entry.id, "object": "model", "created": 0, "owned_by": "callgate", **entry.fields}


def routes(
    auth: Callable[[Request], Reply | None],
    auth_azure: Callable[[Request], Reply | None],
    error_body: Callable[..., dict[str, Any]],
) -> list[Route]:
    def served(call: _aux.AuxRequest) -> list[_aux.ModelEntry]:
        return _aux.served_models(call.script, FAMILY, DEFAULTS, PROTOCOLS)

    def get(call: _aux.AuxRequest) -> Reply:
        name = call.request.path_params["model"]
        for entry in served(call):
            if entry.id == name:
                return Reply(200, model_object(entry))
        body = error_body(404, f"The model '{name}' does not exist", code="model_not_found")
        body["error"]["param"] = "model"
        return Reply(404, body)

    def listing(call: _aux.AuxRequest) -> Reply:
        return Reply(200, {"object": "list", "data": [model_object(m) for m in served(call)]})

    found: list[Route] = []
    for base, check in (("/openai/v1", auth), ("/azure-openai/openai/v1", auth_azure)):
        found += [
            Route(f"{base}/models", _aux.route("openai_responses", check, listing, error_body),
                  methods=["GET"]),
            Route(f"{base}/models/{{model:str}}",
                  _aux.route("openai_responses", check, get, error_body), methods=["GET"]),
        ]  # fmt: skip
    return found
