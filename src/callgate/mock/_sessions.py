"""Registered sessions: one server, each test with a script of its own, and the status.

A test (the pytest plugin, or a suite in any language) *registers* a session under a test
id with its script; every request carrying that ``x-callgate-test-id`` is then served from
that script, with its own cursors, journal, stored objects and faults, until the session
is *dropped*. Registered sessions are never evicted; at most ``max_sessions`` may be
registered at once. Unregistered test ids keep working as before: a session over the
server's own script.

In-process: :func:`register`, :func:`drop`, :func:`status` (also ``MockServer.register``,
``.drop``, ``.status``). Over HTTP:

- ``POST /_callgate/sessions/{test_id}`` with the script JSON as the body registers it:
  ``201`` and the session's status object (below); ``400`` for a body that is not a valid
  script (the message names the location), ``409`` when the id is already registered,
  ``429`` when ``max_sessions`` sessions are registered.
- ``DELETE /_callgate/sessions/{test_id}`` drops it, with its journal entries and
  mismatches: ``200`` and its final status object; ``404`` when it is not registered.
- ``GET /_callgate/status[?test_id=]``: ``{"done": bool, "sessions": [status, ...]}``
  over every kept session (or the one asked for).

These three routes are not journaled (the journal is what the sessions received).

A status object is ``{"test_id", "registered", "done", "served", "left", "mismatches",
"conversations": {name: {"served", "left", "done"}}, "verdicts": [...]}``: turns served and
left in all, the mismatches recorded for the test id, ``done`` when no turn is left and
nothing mismatched, and the verdicts on what the test's client did (docs/verdicts.md; they
do not change ``done``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._errors import CallgateError, UsageError
from .._json import loads_strict
from . import _faults, _validate
from ._http import own_error
from ._script import MAX_SCRIPT_BYTES, Script, ScriptError
from ._state import MockState, Session

__all__ = ["SessionExistsError", "drop", "register", "routes", "status"]


class SessionExistsError(UsageError):
    """The test id is already registered (drop it first)."""


def register(state: MockState, test_id: str, script: Script) -> dict[str, Any]:
    """Serve ``script`` to every request with ``test_id``, from a fresh session (what the
    id did before is forgotten). Returns the session's status object.

    Raises :class:`~callgate.mock.ScriptError` for a script the server could not serve,
    :class:`SessionExistsError` when ``test_id`` is registered, and ``UsageError`` when
    ``max_sessions`` sessions are registered already."""
    _validate.check_switches(script)
    _faults.check_faults(script)
    with state.lock:
        if test_id in state.registered:
            raise SessionExistsError(f"test id {test_id!r} is already registered")
        if len(state.registered) >= state.max_sessions:
            raise UsageError(
                f"{state.max_sessions} sessions are registered already: drop one first"
            )
        state.reset(test_id)
        session = state.registered[test_id] = Session(test_id, script)
        answer = _status_of(state, session, registered=True)
    _tell(state, "registered", answer)
    return answer


def drop(state: MockState, test_id: str) -> dict[str, Any]:
    """Unregister ``test_id`` and forget its session, journal entries and mismatches.
    Returns its final status object. Raises ``UsageError`` when it is not registered."""
    with state.lock:
        session = state.registered.get(test_id)
        if session is None:
            raise UsageError(f"test id {test_id!r} is not registered")
        final = _status_of(state, session, registered=True)
        del state.registered[test_id]
        state.reset(test_id)
        if state.default_test_id == test_id:
            state.default_test_id = "default"
    _tell(state, "dropped", final)
    return final


def _tell(state: MockState, event: str, answer: dict[str, Any]) -> None:
    """The state's session observer, called outside the lock."""
    observer = state.session_observer
    if observer is not None:
        observer(event, answer)


def status(state: MockState, test_id: str | None = None) -> dict[str, Any]:
    """``{"done", "sessions"}``: the status of every registered and kept session and of
    ``"default"`` (the server's own script) even before it is used; or of ``test_id``'s
    alone (a fresh session over the server's script if the id sent nothing yet)."""
    with state.lock:
        if test_id is None:
            names = [*state.registered, *state._sessions]
            names += [] if "default" in names else ["default"]
        else:
            names = [test_id]
        registered = state.registered
        sessions = [_status_of(state, _kept(state, n), registered=n in registered) for n in names]
    return {"done": all(s["done"] for s in sessions), "sessions": sessions}


def _kept(state: MockState, test_id: str) -> Session:
    """The session of ``test_id`` as it stands, without creating (or refreshing) one."""
    found = state.registered.get(test_id) or state._sessions.get(test_id)
    return found if found is not None else Session(test_id, state.script)


def _status_of(state: MockState, session: Session, *, registered: bool) -> dict[str, Any]:
    conversations = {}
    for name, turns in session.script.conversations.items():
        conv = session.conversations.get(name)
        served = conv.cursor if conv is not None else 0
        left = len(turns) - served
        conversations[name] = {"served": served, "left": left, "done": left == 0}
    mismatched = sum(1 for m in state.mismatches if m.test_id == session.test_id)
    served = sum(c["served"] for c in conversations.values())
    left = sum(c["left"] for c in conversations.values())
    return {
        "test_id": session.test_id,
        "registered": registered,
        "done": left == 0 and mismatched == 0,
        "served": served,
        "left": left,
        "mismatches": mismatched,
        "conversations": conversations,
        "verdicts": [v.to_dict() for v in state.verdicts.list(session.test_id)],
    }


# -- HTTP ----------------------------------------------------------------------------------


def _fail(status_code: int, message: str) -> Response:
    return JSONResponse(own_error(status_code, message), status_code=status_code)


async def _register(request: Request) -> Response:
    state: MockState = request.app.state.callgate
    test_id = request.path_params["test_id"]
    raw = await _bounded_body(request, MAX_SCRIPT_BYTES)
    if raw is None:
        return _fail(413, f"a script is at most {MAX_SCRIPT_BYTES} bytes")
    try:
        script = Script.from_dict(loads_strict(raw))
        answer = register(state, test_id, script)
    except SessionExistsError as exc:
        return _fail(409, str(exc))
    except ScriptError as exc:
        return _fail(400, f"not a valid script: {exc}")
    except UsageError as exc:
        return _fail(429, str(exc))
    except CallgateError as exc:  # not strict JSON
        return _fail(400, f"the body must be a script as strict JSON: {exc}")
    return JSONResponse(answer, status_code=201)


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The body, or ``None`` as soon as it is over ``limit`` bytes (never buffered whole)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def _drop(request: Request) -> Response:
    state: MockState = request.app.state.callgate
    try:
        return JSONResponse(drop(state, request.path_params["test_id"]))
    except UsageError as exc:
        return _fail(404, str(exc))


async def _status(request: Request) -> Response:
    state: MockState = request.app.state.callgate
    return JSONResponse(status(state, request.query_params.get("test_id")))


def routes() -> list[Route]:
    return [
        Route("/_callgate/sessions/{test_id:path}", _register, methods=["POST"]),
        Route("/_callgate/sessions/{test_id:path}", _drop, methods=["DELETE"]),
        Route("/_callgate/status", _status, methods=["GET"]),
    ]
