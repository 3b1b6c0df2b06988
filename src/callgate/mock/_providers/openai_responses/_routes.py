"""OpenAI Responses in the mock: credentials, error bodies, paths and the stored-object routes."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from .._kit import Host, Reply, Stored, bearer, header
from ._checks import openai_error

_PROTOCOL = "openai_responses"


def auth(request: Request) -> Reply | None:
    if bearer(request):
        return None
    message = "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
    return Reply(401, error_body(401, message))


def auth_azure(request: Request) -> Reply | None:
    if header(request, b"api-key") or bearer(request):
        return None
    message = "Access denied due to missing subscription key or Bearer token."
    return Reply(401, error_body(401, message))


_TYPES = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}


_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}


def error_body(status: int, message: str, *, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error; a 429 carries ``x-ratelimit-*`` headers."""
    headers: dict[str, str] = {}
    if retry is not None:
        headers["retry-after"] = str(retry)
    if status == 429:
        reset = f"{retry if retry is not None else 1}s"
        headers |= {
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": reset,
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": reset,
        }
    return Reply(status, error_body(status, message, code=_CODES.get(status)), headers)


def _not_found(response_id: str) -> Reply:
    return openai_error(404, f"No response found with id '{response_id}'.")


def _stored(call: Stored) -> Reply:
    response_id = call.request.path_params["response_id"]
    found = call.store.referable(_PROTOCOL, response_id)
    if found is None:
        return _not_found(response_id)
    if call.request.method == "DELETE":
        found.deleted = True
        return Reply(200, {"id": response_id, "object": "response", "deleted": True})
    if call.request.query_params.get("stream", "false").lower() == "true":
        return openai_error(
            400,
            "callgate mock: streaming retrieval (stream=true) is not served; retrieve "
            "the Response object without it.",
            param="stream",
        )
    return Reply(200, call.final_object(found))


def state_routes(host: Host) -> list[Route]:
    """GET/DELETE of stored responses (plain and Azure)."""
    methods = ["GET", "DELETE"]
    return [
        Route(
            "/openai/v1/responses/{response_id:str}",
            host.stored(_PROTOCOL, auth, _stored, "state"),
            methods=methods,
        ),
        Route(
            "/azure-openai/openai/v1/responses/{response_id:str}",
            host.stored(_PROTOCOL, auth_azure, _stored, "state"),
            methods=methods,
        ),
    ]
