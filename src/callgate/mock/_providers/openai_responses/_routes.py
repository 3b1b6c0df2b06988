"""OpenAI Responses in the mock: credentials, error bodies, paths and the stored-object routes."""

from __future__ import annotations

from starlette.routing import Route

from .._kit import Host, Reply, Stored
from .._openai_common import auth, auth_azure, error_body, http_error, openai_error

__all__ = ["_PROTOCOL", "auth", "auth_azure", "error_body", "http_error", "state_routes"]

_PROTOCOL = "openai_responses"


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
