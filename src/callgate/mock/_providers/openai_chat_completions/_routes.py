"""OpenAI Chat Completions in the mock: credentials, error bodies and paths (OpenAI's,
shared with Responses), what a ``respond`` block may hold on this wire, and the stored
completions' routes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from starlette.routing import Route

from .._kit import Host, Reply, Stored, list_of, texts
from .._openai_common import auth, auth_azure, error_body, http_error, openai_error
from ._choices import check_choices
from ._quirks import check_profile
from ._rendering import STATUSES

__all__ = [
    "AZURE_PATH",
    "PATH",
    "PROTOCOL",
    "RESPOND_KEYS",
    "auth",
    "auth_azure",
    "check_respond",
    "error_body",
    "http_error",
    "state_routes",
]

PROTOCOL: Final = "openai_chat_completions"
PATH: Final = "/openai/v1/chat/completions"
AZURE_PATH: Final = "/azure-openai/openai/v1/chat/completions"
RESPOND_KEYS: Final = frozenset({"refusal", "choices", "profile"})


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """``refusal`` is text; ``choices`` the answers of ``n > 1``; ``profile`` a serving
    profile; reasoning and hosted tools have no place on this wire."""
    if "refusal" in respond and not isinstance(respond["refusal"], str):
        return "refusal is the refusal text (a string)"
    for key in ("reasoning", "hosted"):
        if key in respond:
            return f"openai_chat_completions carries no {key} (use openai_responses)"
    return check_choices(respond, STATUSES) or check_profile(respond)


# -- stored completions (``store: true``) -----------------------------------------------------


def _not_found(completion_id: str) -> Reply:
    # callgate's wording: no public thread shows OpenAI's 404 text for this route.
    return openai_error(404, f"No chat completion found with id '{completion_id}'.")


def _message(completion_id: str, n: int, message: Any) -> dict[str, Any]:
    """A request message as ``ChatCompletionStoreMessage``: an id, role and content (text
    parts joined; the parts themselves in ``content_parts``)."""
    sent = message if isinstance(message, dict) else {}
    content = sent.get("content")
    parts = content if isinstance(content, list) else None
    text = "".join(texts(content)) if parts is not None else content
    return {"id": f"{completion_id}-{n}", "role": sent.get("role"), "content": text,
            "content_parts": parts}  # fmt: skip


def _stored(call: Stored) -> Reply:
    completion_id = call.request.path_params["completion_id"]
    found = call.store.referable(PROTOCOL, completion_id)
    if found is None:
        return _not_found(completion_id)
    if call.request.method == "DELETE":
        found.deleted = True
        deleted = {"id": completion_id, "object": "chat.completion.deleted", "deleted": True}
        return Reply(200, deleted)
    return Reply(200, call.final_object(found))


def _messages(call: Stored) -> Reply:
    completion_id = call.request.path_params["completion_id"]
    found = call.store.referable(PROTOCOL, completion_id)
    if found is None:
        return _not_found(completion_id)
    sent = list_of(found.served.request.get("messages"))
    data = [_message(completion_id, n, m) for n, m in enumerate(sent)]
    page = {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None, "has_more": False}  # fmt: skip
    return Reply(200, page)


def state_routes(host: Host) -> list[Route]:
    """GET/DELETE ``/chat/completions/{id}`` and GET ``.../{id}/messages`` (plain and
    Azure's v1 route): the completions created with ``store: true``."""
    routes = []
    for path, check in ((PATH, auth), (AZURE_PATH, auth_azure)):
        routes += [
            Route(f"{path}/{{completion_id:str}}", host.stored(PROTOCOL, check, _stored, "state"),
                  methods=["GET", "DELETE"]),
            Route(f"{path}/{{completion_id:str}}/messages",
                  host.stored(PROTOCOL, check, _messages, "state"), methods=["GET"]),
        ]  # fmt: skip
    return routes
