"""The mock provider as a small ASGI app (Starlette), composed from plain functions.

Each provider route runs one pipeline: journal → runtime faults → credentials → body →
scripted HTTP faults → stored-state references → provider-native validation → script
match → render → store → stream (with stream faults) → journal. Every request consumes
the next turn of its conversation in its session; a request that matches no turn gets
HTTP 400 in the provider's own error shape naming each mismatch, and it is recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._errors import CallgateError
from .._json import loads_strict
from . import _faults, _store, _validate
from ._journal import JournalEntry
from ._respond import Reply, error_body
from ._script import Script
from ._state import CONVERSATION_HEADER, TEST_ID_HEADER, Mismatch, MockState, Session

__all__ = ["MockApp", "create_app"]


# -- authentication, per provider -----------------------------------------------------------


def _bearer(request: Request) -> bool:
    value = request.headers.get("authorization", "")
    return value.startswith("Bearer ") and len(value) > len("Bearer ")


def _auth_openai(request: Request) -> Reply | None:
    if _bearer(request):
        return None
    message = "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
    return Reply(401, error_body("openai_responses", 401, message))


def _auth_azure(request: Request) -> Reply | None:
    if request.headers.get("api-key") or _bearer(request):
        return None
    message = "Access denied due to missing subscription key or Bearer token."
    return Reply(401, error_body("openai_responses", 401, message))


def _auth_anthropic(request: Request) -> Reply | None:
    if not (request.headers.get("x-api-key") or _bearer(request)):
        return Reply(401, error_body("anthropic_messages", 401, "x-api-key header is required"))
    if not request.headers.get("anthropic-version"):
        message = "anthropic-version: header is required"
        return Reply(400, error_body("anthropic_messages", 400, message))
    return None


def _auth_gemini(request: Request) -> Reply | None:
    if request.headers.get("x-goog-api-key") or request.query_params.get("key"):
        return None
    message = "Method doesn't allow unregistered callers. Please use an API key."
    return Reply(401, error_body("gemini_interactions", 401, message))


# -- the pipeline ------------------------------------------------------------------------------

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def reply_response(entry: JournalEntry, reply: Reply, outcome: str) -> Response:
    """Journal ``reply`` and turn it into a JSON response."""
    entry.close(reply.status, reply.body, outcome)
    return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)


def begin_entry(request: Request, state: MockState, protocol: str | None) -> JournalEntry:
    # Read the raw ASGI scope: building Starlette's URL object twice per request showed up
    # as the largest single cost of the journal.
    scope = request.scope
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    return state.journal.begin(
        test_id=headers.get(TEST_ID_HEADER, "default"),
        conversation=headers.get(CONVERSATION_HEADER, "default"),
        protocol=protocol,
        method=scope["method"],
        path=scope["path"],
        query=scope["query_string"].decode("latin-1"),
        headers=headers,
        body=None,
    )


async def read_json(request: Request, entry: JournalEntry) -> Any:
    """The request body as strict JSON (also journaled); raises ``CallgateError``."""
    raw = await request.body()
    try:
        body = loads_strict(raw)
    except CallgateError:
        entry.body = raw.decode("utf-8", "replace")
        raise
    entry.body = body
    return body


def _endpoint(protocol: str, auth: Callable[[Request], Reply | None]) -> Any:
    async def endpoint(request: Request) -> Response:
        state: MockState = request.app.state.callgate
        entry = begin_entry(request, state, protocol)
        session = state.session(entry.test_id)
        conversation = entry.conversation or "default"
        reply = _faults.before_request(state, session, protocol)
        if reply is not None:
            return reply_response(entry, reply, "fault")
        reply = auth(request)
        if reply is not None:
            return reply_response(entry, reply, "rejected")
        try:
            body = await read_json(request, entry)
        except CallgateError as exc:
            message = f"request body is not valid JSON: {exc}"
            return reply_response(entry, Reply(400, error_body(protocol, 400, message)), "rejected")
        if not isinstance(body, dict):
            reply = Reply(400, error_body(protocol, 400, "body must be a JSON object"))
            return reply_response(entry, reply, "rejected")
        turn = state.next_turn(session, conversation)
        reply = _faults.turn_http_error(state, session, conversation, turn, protocol)
        if reply is not None:
            return reply_response(entry, reply, "fault")
        reply = _store.precheck(state, session, protocol, body) or _validate.check(
            state, session, protocol, body
        )
        if reply is not None:
            return reply_response(entry, reply, "rejected")
        outcome = state.take(session, conversation, protocol, body)
        if isinstance(outcome, Mismatch):
            where = f" at {outcome.location}" if outcome.location else ""
            message = f"callgate mock: request does not match the script{where}: " + "; ".join(
                outcome.problems
            )
            reply = Reply(400, error_body(protocol, 400, message))
            entry.close(400, reply.body, "mismatch", outcome.location, outcome.problems)
            return JSONResponse(reply.body, status_code=400)
        _store.record(state, session, protocol, outcome)
        rendered = outcome.rendered
        location = outcome.turn.location
        headers = {"request-id": rendered.response_id}
        if rendered.body is not None:
            entry.close(200, rendered.body, "matched", location)
            return JSONResponse(rendered.body, headers=headers)

        plan = _faults.stream_plan(state, session, outcome)
        if plan.simple:
            # A finite, unpaced stream: one body message, no disconnect-listening task.
            entry.close(200, plan.body.decode("utf-8", "replace"), "matched", location)
            return Response(
                plan.body, media_type="text/event-stream", headers={**_SSE_HEADERS, **headers}
            )

        async def stream() -> AsyncIterator[bytes]:
            sent: list[bytes] = []
            try:
                async for frame in _faults.send(state, plan):
                    sent.append(frame)
                    yield frame
            finally:
                text = b"".join(sent).decode("utf-8", "replace")
                entry.close(200, text, "matched", location)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={**_SSE_HEADERS, **headers}
        )

    return endpoint


def _gemini_versioned(endpoint: Any) -> Any:
    async def versioned(request: Request) -> Response:
        if request.path_params["version"] not in ("v1", "v1beta"):
            body = error_body("gemini_interactions", 404, "unknown API version")
            return JSONResponse(body, status_code=404)
        response: Response = await endpoint(request)
        return response

    return versioned


async def _journal(request: Request) -> Response:
    state: MockState = request.app.state.callgate
    test_id = request.query_params.get("test_id")
    return JSONResponse([e.to_dict() for e in state.journal.entries(test_id=test_id)])


class MockApp:
    """The ASGI app: provider POST routes are dispatched straight to their endpoint (the
    hot path skips routing and middleware), everything else goes through Starlette.

    ``state.callgate`` is the :class:`MockState`, as on a Starlette app.
    """

    def __init__(self, inner: Starlette, fast: dict[str, Any]) -> None:
        self.inner = inner
        self.state = inner.state
        self._fast = fast

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self._fast.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self.inner
                response: Response = await endpoint(Request(scope, receive))
                await response(scope, receive, send)
                return
        await self.inner(scope, receive, send)


def create_app(script: Script, *, state: MockState | None = None) -> MockApp:
    """A plain ASGI app serving ``script``. ``app.state.callgate`` is its :class:`MockState`.

    Raises :class:`~callgate.mock.ScriptError` if the script's faults or validation
    switches are invalid.
    """
    _validate.check_script(script)
    _faults.check_script(script)
    openai = _endpoint("openai_responses", _auth_openai)
    azure = _endpoint("openai_responses", _auth_azure)
    anthropic = _endpoint("anthropic_messages", _auth_anthropic)
    gemini = _endpoint("gemini_interactions", _auth_gemini)
    routes = [
        Route("/openai/v1/responses", openai, methods=["POST"]),
        Route("/azure-openai/openai/v1/responses", azure, methods=["POST"]),
        Route("/anthropic/v1/messages", anthropic, methods=["POST"]),
        Route("/gemini/{version:str}/interactions", _gemini_versioned(gemini), methods=["POST"]),
        Route("/_callgate/journal", _journal, methods=["GET"]),
        *_store.state_routes(),
        *_faults.control_routes(),
    ]
    inner = Starlette(routes=routes)
    inner.state.callgate = state if state is not None else MockState(script)
    fast = {
        "/openai/v1/responses": openai,
        "/azure-openai/openai/v1/responses": azure,
        "/anthropic/v1/messages": anthropic,
        "/gemini/v1/interactions": gemini,
        "/gemini/v1beta/interactions": gemini,
    }
    return MockApp(inner, fast)


def session_of(request: Request) -> tuple[MockState, Session]:
    """The state and the caller's session (by ``x-callgate-test-id``)."""
    state: MockState = request.app.state.callgate
    return state, state.session(request.headers.get(TEST_ID_HEADER, "default"))
