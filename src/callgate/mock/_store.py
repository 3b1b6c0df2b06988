"""Stored state: what a served turn leaves behind, and the complete objects it stands for.

The app calls :func:`record` after a turn is served (every object belongs to the session,
``x-callgate-test-id``, that created it). The providers' stored-object routes (GET,
DELETE, cancel, resume: see each ``_providers`` module) read it back through
:func:`final_object` and :func:`full_stream`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

from ._http import begin_entry, reply_response, session_of, sse_response
from ._providers import provider
from ._providers._kit import Auth, EndpointFn, Rendered, Reply, Stored, StoredAnswer, is_stored
from ._render_turn import render
from ._state import MockState, Served, Session
from ._store_state import Record

__all__ = ["final_object", "full_stream", "record", "stored_endpoint"]


def record(state: MockState, session: Session, protocol: str, served: Served) -> Record:
    """Remember what was served (``store: false`` makes it unreferable, not forgotten)."""
    body = served.request
    key = provider(protocol).previous_key
    previous = body.get(key) if key is not None else None
    entry = Record(
        id=served.rendered.response_id,
        protocol=protocol,
        served=served,
        stored=is_stored(provider(protocol), body),
        previous=previous if isinstance(previous, str) else None,
    )
    with state.lock:
        session.store.add(entry)
    return entry


def _rerender(state: MockState, served: Served, *, stream: bool) -> Rendered:
    turn = served.turn
    if "disconnect_after" in turn.respond:
        respond = {k: v for k, v in turn.respond.items() if k != "disconnect_after"}
        turn = dataclasses.replace(turn, respond=respond)
    model = served.request.get("model")
    script = state.session(served.test_id).script  # the script that served it
    return render(
        turn,
        seed=script.seed,
        conversation=served.conversation,
        turn_number=served.turn_number,
        stream=stream,
        baseline=script.baseline,
        model=model if isinstance(model, str) else None,
        stored=is_stored(provider(turn.protocol), served.request),
        serial=served.serial,
    )


def final_object(state: MockState, found: Record) -> dict[str, Any]:
    """The complete object as a non-streaming create returns it (cached).

    What the stream itself carried when it holds the whole object (OpenAI's terminal
    ``response``); otherwise the turn rendered again from the script (ids are
    deterministic, so they are the same ids).
    """
    if found.final is None:
        rendered = found.served.rendered
        carried = rendered.body
        if carried is None:
            carried = provider(found.protocol).final_from_stream(rendered)
        if carried is None:
            carried = _rerender(state, found.served, stream=False).body
            assert carried is not None  # render(stream=False) always gives a body
        found.final = carried
    return found.final


def full_stream(state: MockState, found: Record) -> Rendered:
    """The complete stream of the turn, as if it had been streamed without faults (cached)."""
    if found.full is None:
        rendered = found.served.rendered
        untouched = rendered.body is None and "disconnect_after" not in found.served.turn.respond
        found.full = rendered if untouched else _rerender(state, found.served, stream=True)
    return found.full


def stored_endpoint(
    protocol: str | None, auth: Auth | None, answer: StoredAnswer, outcome: str
) -> EndpointFn:
    """A provider's stored-object route as a Starlette endpoint (``Host.stored``): the
    request journaled under ``protocol``, ``auth`` first, then ``answer`` under the
    session's lock; a :class:`Reply` is sent as JSON, bytes as a finished event stream."""

    async def endpoint(request: Request) -> Response:
        state, session = session_of(request)
        entry = begin_entry(request, state, protocol)
        refused = auth(request) if auth is not None else None
        if refused is not None:
            return reply_response(entry, refused, "rejected")
        with state.lock:
            sent = answer(
                Stored(
                    request,
                    session.store,
                    lambda found: final_object(state, found),
                    lambda found: full_stream(state, found),
                )
            )
        if isinstance(sent, Reply):
            return reply_response(entry, sent, outcome)
        return sse_response(entry, sent, outcome)

    return endpoint
