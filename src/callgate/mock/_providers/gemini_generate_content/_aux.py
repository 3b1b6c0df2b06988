"""Gemini API auxiliary routes (served with generateContent; the Interactions API shares the
family): ``GET /gemini/{v1,v1beta}/models``, ``GET .../models/{model}`` and
``POST .../models/{model}:countTokens``, shaped as google-genai reads them
(``_Model_from_mldev``, ``_ListModelsResponse_from_mldev``, ``CountTokensResponse``; both
SDK generations alike). Which models and which count: :mod:`callgate.mock._aux`.

A model object: ``name`` (``models/<id>``), ``version``, ``displayName``, ``description``,
``inputTokenLimit``, ``outputTokenLimit``, ``supportedGenerationMethods``,
``temperature``, ``maxTemperature``, ``topP``, ``topK``, ``thinking``; the script's
``fields`` replace any of them. The list pages by ``pageSize`` (default 50, at most
1000) and ``pageToken`` (the ``nextPageToken`` of the page before).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from starlette.requests import Request
from starlette.routing import Match, Route

from .._kit import Answer, AuxRequest, Host, ModelEntry, Reply

__all__ = ["FAMILY", "routes"]

FAMILY = "gemini"
PROTOCOLS = ("gemini_interactions", "gemini_generate_content")
DEFAULTS = ("gemini-2.5-flash", "gemini-3-flash-preview")
_VERSIONS = ("v1", "v1beta")
_BASE = "/gemini/{version:str}/models"


def model_object(entry: ModelEntry) -> dict[str, Any]:
    return {
        "name": f"models/{entry.id}",
        "version": "callgate-mock",
        "displayName": entry.id,
        "description": "A model of the callgate mock server.",
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
        "temperature": 1.0,
        "maxTemperature": 2.0,
        "topP": 0.95,
        "topK": 64,
        "thinking": True,
        **entry.fields,
    }


class _ModelRoute(Route):
    """``.../models/{model}`` for a model name only: a path naming a method
    (``models/x:generateContent``) is left to the create route, whose 405 it is."""

    def matches(self, scope: Any) -> tuple[Match, MutableMapping[str, Any]]:
        match, child = super().matches(scope)
        if match is not Match.NONE and ":" in child["path_params"].get("model", ""):
            return Match.NONE, {}
        return match, child


def routes(
    host: Host,
    auth: Callable[[Request], Reply | None],
    error_body: Callable[[int, str], dict[str, Any]],
) -> list[Route]:
    def served(call: AuxRequest) -> list[ModelEntry]:
        return call.served_models(FAMILY, DEFAULTS, PROTOCOLS)

    def found(call: AuxRequest) -> ModelEntry | Reply:
        version = call.request.path_params["version"]
        if version not in _VERSIONS:
            return Reply(404, error_body(404, f"Method not found: {call.request.url.path}"))
        name = call.request.path_params["model"].removeprefix("models/")
        for entry in served(call):
            if entry.id == name:
                return entry
        message = (
            f"models/{name} is not found for API version {version}, or is not supported for "
            "this method. Call ListModels to see the list of available models and their "
            "supported methods."
        )
        return Reply(404, error_body(404, message))

    def get(call: AuxRequest) -> Reply:
        entry = found(call)
        return entry if isinstance(entry, Reply) else Reply(200, model_object(entry))

    def listing(call: AuxRequest) -> Reply:
        if call.request.path_params["version"] not in _VERSIONS:
            return Reply(404, error_body(404, f"Method not found: {call.request.url.path}"))
        params = call.request.query_params
        size, token = params.get("pageSize", "50"), params.get("pageToken", "0") or "0"
        if not size.isdigit() or not token.isdigit():
            return Reply(400, error_body(400, "pageSize and pageToken must be non-negative"))
        start, size_n = int(token), min(int(size) or 50, 1000)
        models = served(call)
        body: dict[str, Any] = {"models": [model_object(m) for m in models[start : start + size_n]]}
        if start + size_n < len(models):
            body["nextPageToken"] = str(start + size_n)
        return Reply(200, body)

    def count(call: AuxRequest) -> Reply:
        entry = found(call)
        if isinstance(entry, Reply):
            return entry
        total = call.count_tokens(call.body)
        details = [{"modality": "TEXT", "tokenCount": total}]
        return Reply(200, {"totalTokens": total, "promptTokensDetails": details})

    def make(answer: Answer) -> Any:
        return host.aux("gemini_generate_content", auth, answer, error_body)

    return [
        Route(_BASE, make(listing), methods=["GET"]),
        Route(_BASE + "/{model:str}:countTokens", make(count), methods=["POST"]),
        _ModelRoute(_BASE + "/{model:str}", make(get), methods=["GET"]),
    ]
