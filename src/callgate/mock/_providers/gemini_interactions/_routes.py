"""Gemini Interactions in the mock:
credentials, error bodies, paths and the stored-object routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from .._gemini_common import VERSIONS, error_body
from .._kit import Host, Reply, Stored, StoredAnswer
from . import _errors as errors

if TYPE_CHECKING:
    from ..._store_state import Record


_PROTOCOL = "gemini_interactions"


_VERSIONS = VERSIONS


# A list input of these is content for one user_input step, not a list of steps.
_CONTENT_TYPES = frozenset({"text", "image", "audio", "document", "video"})


def _unknown_version(request: Request) -> Reply | None:
    if request.path_params["version"] in _VERSIONS:
        return None
    return Reply(404, error_body(404, "unknown API version"))


def _input_steps(value: Any) -> list[Any]:
    """A create request's ``input`` as the steps a GET timeline shows for it."""
    if isinstance(value, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": value}]}]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    if value and all(isinstance(v, dict) and v.get("type") in _CONTENT_TYPES for v in value):
        return [{"type": "user_input", "content": list(value)}]
    return list(value)


def _interaction(call: Stored, found: Record, *, echo: bool) -> Any:
    body = dict(call.final_object(found))
    timeline: list[Any] = []
    for hop in reversed(list(call.store.chain(found))):
        timeline.extend(_input_steps(hop.served.request.get("input")))
        timeline.extend(call.final_object(hop).get("steps", ()))
    body["steps"] = timeline
    if found.previous is not None:
        body["previous_interaction_id"] = found.previous
    if found.cancelled:
        body["status"] = "cancelled"
    if echo and "input" in found.served.request:
        body["input"] = found.served.request["input"]
    return body


def _resume(call: Stored, found: Record, last_event_id: str | None) -> Reply | bytes:
    full = call.full_stream(found)
    start = 0
    if last_event_id is not None:
        ids = [event.get("event_id") for event in full.events]
        if last_event_id not in ids:
            return errors.gemini_error(
                400,
                f"last_event_id {last_event_id!r} is not an event of interaction {found.id!r}.",
            )
        start = ids.index(last_event_id) + 1
    return b"".join(full.frames[start:])


def _cancel(call: Stored, found: Record) -> Reply:
    status = "cancelled" if found.cancelled else call.final_object(found).get("status")
    if status != "requires_action":
        return errors.gemini_error(
            400,
            f"Interaction {found.id!r} is {status}; only an interaction in progress or "
            "waiting in requires_action can be cancelled.",
            "failed_precondition",
        )
    found.cancelled = True
    return Reply(200, _interaction(call, found, echo=False))


def _stored_auth(request: Request) -> Reply | None:
    return _unknown_version(request) or errors.auth(request)


def _stored(action: str) -> StoredAnswer:
    def answer(call: Stored) -> Reply | bytes:
        interaction_id = call.request.path_params["interaction_id"]
        query = call.request.query_params
        found = call.store.referable(_PROTOCOL, interaction_id)
        if found is None:
            return errors.not_found(interaction_id)
        if action == "delete":
            found.deleted = True
            return Reply(200, {})
        if action == "cancel":
            return _cancel(call, found)
        if query.get("stream", "false").lower() == "true":
            return _resume(call, found, query.get("last_event_id"))
        echo = query.get("include_input", "false").lower() == "true"
        return Reply(200, _interaction(call, found, echo=echo))

    return answer


def state_routes(host: Host) -> list[Route]:
    """GET (JSON or resumed SSE), DELETE and cancel of stored interactions."""
    interaction = "/gemini/{version:str}/interactions/{interaction_id:str}"

    def make(action: str) -> Any:
        return host.stored(_PROTOCOL, _stored_auth, _stored(action), "state")

    return [
        Route(interaction, make("get"), methods=["GET"]),
        Route(interaction, make("delete"), methods=["DELETE"]),
        Route(f"{interaction}/cancel", make("cancel"), methods=["POST"]),
    ]
