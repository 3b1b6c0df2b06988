"""Stored state: OpenAI responses and Gemini interactions that later requests reference.

The app calls :func:`precheck` before script matching (a ``previous_response_id`` /
``previous_interaction_id`` must resolve to a stored object) and :func:`record` after a
turn is served; :func:`state_routes` adds the GET/DELETE/cancel/resume routes. Every
object belongs to the session (``x-callgate-test-id``) that created it.

OpenAI: a response is stored unless its request said ``store: false``.
``GET /openai/v1/responses/{id}`` (and the Azure route) returns the Response object a
non-streaming create returned (for a streamed turn: the terminal event's ``response``);
streaming retrieval (``?stream=true``) is refused with a 400. ``DELETE`` answers
``{"id", "object": "response", "deleted": true}`` and the id stops resolving. Nothing is
inherited through ``previous_response_id``: a script's ``expect`` sees only what the
request itself sent.

Gemini: an interaction is stored unless ``store: false``. ``GET /gemini/{v}/interactions/{id}``
returns it with its whole timeline: for every hop of its ``previous_interaction_id`` chain,
oldest first, the hop's input steps (a string input becomes one ``user_input`` step) and
then its model steps -- so the body starts with ``user_input`` and pairs every call with its
result, which is what a GET snapshot must hold to be replayed without supplementing
(``callgate.gemini_interactions.parse_interaction(source="get")``). ``?include_input=true``
also echoes the request's ``input``. ``?stream=true`` re-sends the interaction's complete
event stream, and with ``last_event_id=E`` only the events after ``E`` (event ids are
``<interaction id>:<n>``; an unknown ``E`` is a 400). ``POST .../{id}/cancel`` turns an
interaction waiting in ``requires_action`` into ``cancelled`` (its pending calls are
abandoned and it can no longer be continued); any other status is a 400
``FAILED_PRECONDITION``, since the mock never has one still running. ``DELETE`` answers
``{}`` and the id stops resolving (404 for GET, cancel and ``previous_interaction_id``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import _app
from ._respond import Reply, error_body
from ._state import MockState, Served, Session
from ._store_state import Record, final_object, full_stream
from ._validate import enabled
from ._validate_errors import gemini_error, openai_error

__all__ = ["precheck", "record", "state_routes"]

_OPENAI = "openai_responses"
_GEMINI = "gemini_interactions"
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
# A list input of these is content for one user_input step, not a list of steps.
_CONTENT_TYPES = frozenset({"text", "image", "audio", "document", "video"})


# -- the pipeline hooks -------------------------------------------------------------------


def precheck(
    state: MockState, session: Session, protocol: str, body: dict[str, Any]
) -> Reply | None:
    """The provider's error when the request references state that does not exist."""
    with state.lock:
        if protocol == _OPENAI:
            return _openai_precheck(state, session, body)
        if protocol == _GEMINI:
            return _gemini_precheck(state, session, body)
    return None


def _openai_precheck(state: MockState, session: Session, body: dict[str, Any]) -> Reply | None:
    previous = body.get("previous_response_id")
    if previous is None or not enabled(state, "openai_previous_response_found"):
        return None
    if session.store.referable(_OPENAI, previous) is None:
        return openai_error(
            400,
            f"Previous response with id '{previous}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    return None


def _gemini_precheck(state: MockState, session: Session, body: dict[str, Any]) -> Reply | None:
    previous = body.get("previous_interaction_id")
    if previous is None:
        return None
    found = session.store.get(_GEMINI, previous)
    if found is None or found.deleted:
        if enabled(state, "gemini_previous_interaction_found"):
            return _gemini_not_found(previous)
        return None
    if not found.stored and enabled(state, "gemini_previous_interaction_stored"):
        return gemini_error(
            400,
            f"previous_interaction_id {previous!r} names an interaction created with "
            "store=false; only stored interactions can be continued by id.",
            "INVALID_ARGUMENT",
        )
    if found.cancelled and enabled(state, "gemini_previous_interaction_active"):
        return gemini_error(
            400,
            f"previous_interaction_id {previous!r} names a cancelled interaction; it cannot "
            "be continued.",
            "FAILED_PRECONDITION",
        )
    return None


def record(state: MockState, session: Session, protocol: str, served: Served) -> None:
    """Remember what was served (``store: false`` makes it unreferable, not forgotten)."""
    body = served.request
    key = "previous_interaction_id" if protocol == _GEMINI else "previous_response_id"
    previous = body.get(key)
    entry = Record(
        id=served.rendered.response_id,
        protocol=protocol,
        served=served,
        stored=body.get("store") is not False,
        previous=previous if isinstance(previous, str) else None,
    )
    with state.lock:
        session.store.add(entry)


# -- OpenAI routes ------------------------------------------------------------------------


def _openai_not_found(response_id: str) -> Reply:
    return openai_error(404, f"No response found with id '{response_id}'.")


def _openai_route(auth: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        state, session = _app.session_of(request)
        entry = _app.begin_entry(request, state, _OPENAI)
        refused = auth(request)
        if refused is not None:
            return _app.reply_response(entry, refused, "rejected")
        response_id = request.path_params["response_id"]
        with state.lock:
            found = session.store.referable(_OPENAI, response_id)
            if found is None:
                reply = _openai_not_found(response_id)
            elif request.method == "DELETE":
                found.deleted = True
                reply = Reply(200, {"id": response_id, "object": "response", "deleted": True})
            elif request.query_params.get("stream", "false").lower() == "true":
                reply = openai_error(
                    400,
                    "callgate mock: streaming retrieval (stream=true) is not served; retrieve "
                    "the Response object without it.",
                    param="stream",
                )
            else:
                reply = Reply(200, final_object(state, found))
        return _app.reply_response(entry, reply, "state")

    return endpoint


# -- Gemini routes ------------------------------------------------------------------------


def _gemini_not_found(interaction_id: Any) -> Reply:
    return gemini_error(404, f"Interaction {interaction_id!r} was not found.", "NOT_FOUND")


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


def _interaction(state: MockState, session: Session, found: Record, *, echo: bool) -> Any:
    body = dict(final_object(state, found))
    timeline: list[Any] = []
    for hop in reversed(list(session.store.chain(found))):
        timeline.extend(_input_steps(hop.served.request.get("input")))
        timeline.extend(final_object(state, hop).get("steps", ()))
    body["steps"] = timeline
    if found.previous is not None:
        body["previous_interaction_id"] = found.previous
    if found.cancelled:
        body["status"] = "cancelled"
    if echo and "input" in found.served.request:
        body["input"] = found.served.request["input"]
    return body


def _resume(state: MockState, found: Record, last_event_id: str | None) -> Reply | bytes:
    full = full_stream(state, found)
    start = 0
    if last_event_id is not None:
        ids = [event.get("event_id") for event in full.events]
        if last_event_id not in ids:
            return gemini_error(
                400,
                f"last_event_id {last_event_id!r} is not an event of interaction {found.id!r}.",
                "INVALID_ARGUMENT",
            )
        start = ids.index(last_event_id) + 1
    return b"".join(full.frames[start:])


def _gemini_route(action: str) -> Any:
    async def endpoint(request: Request) -> Response:
        state, session = _app.session_of(request)
        entry = _app.begin_entry(request, state, _GEMINI)
        if request.path_params["version"] not in ("v1", "v1beta"):
            reply = Reply(404, error_body(_GEMINI, 404, "unknown API version"))
            return _app.reply_response(entry, reply, "rejected")
        refused = _app._auth_gemini(request)
        if refused is not None:
            return _app.reply_response(entry, refused, "rejected")
        interaction_id = request.path_params["interaction_id"]
        query = request.query_params
        sent: Reply | bytes
        with state.lock:
            found = session.store.referable(_GEMINI, interaction_id)
            if found is None:
                sent = _gemini_not_found(interaction_id)
            elif action == "delete":
                found.deleted = True
                sent = Reply(200, {})
            elif action == "cancel":
                sent = _cancel(state, session, found)
            elif query.get("stream", "false").lower() == "true":
                sent = _resume(state, found, query.get("last_event_id"))
            else:
                echo = query.get("include_input", "false").lower() == "true"
                sent = Reply(200, _interaction(state, session, found, echo=echo))
        if isinstance(sent, Reply):
            return _app.reply_response(entry, sent, "state")
        entry.close(200, sent.decode("utf-8", "replace"), "state")
        return Response(sent, media_type="text/event-stream", headers=_SSE_HEADERS)

    return endpoint


def _cancel(state: MockState, session: Session, found: Record) -> Reply:
    status = "cancelled" if found.cancelled else final_object(state, found).get("status")
    if status != "requires_action":
        return gemini_error(
            400,
            f"Interaction {found.id!r} is {status}; only an interaction in progress or "
            "waiting in requires_action can be cancelled.",
            "FAILED_PRECONDITION",
        )
    found.cancelled = True
    return Reply(200, _interaction(state, session, found, echo=False))


def state_routes() -> list[Route]:
    """GET/DELETE of OpenAI responses (plain and Azure); GET (JSON or resumed SSE),
    DELETE and cancel of Gemini interactions (``v1`` and ``v1beta``)."""
    interaction = "/gemini/{version:str}/interactions/{interaction_id:str}"
    return [
        Route(
            "/openai/v1/responses/{response_id:str}",
            _openai_route(_app._auth_openai),
            methods=["GET", "DELETE"],
        ),
        Route(
            "/azure-openai/openai/v1/responses/{response_id:str}",
            _openai_route(_app._auth_azure),
            methods=["GET", "DELETE"],
        ),
        Route(interaction, _gemini_route("get"), methods=["GET"]),
        Route(interaction, _gemini_route("delete"), methods=["DELETE"]),
        Route(f"{interaction}/cancel", _gemini_route("cancel"), methods=["POST"]),
    ]
