"""The mock provider as a small ASGI app (Starlette), composed from plain functions.

Each provider route (its provider's :class:`~._providers.Endpoint`) runs one pipeline:
journal → runtime faults → credentials → body → then the stages of ``_STAGES``: scripted
HTTP faults → native checks (stored-object references first, then the provider's
continuation rules) → script match, render, store and stream (with stream faults) →
journal. Every request consumes
the next turn of its conversation in its session; a request that matches no turn gets
HTTP 400 in the provider's own error shape naming each mismatch, and it is recorded.
The pipeline is synchronous once the body is read: :meth:`MockApp.direct` runs it for a
request whose body is already in hand (the mock's HTTP/1.1 connection does so), with no
ASGI round trip.

Before any route runs, :class:`MockApp` refuses (journaled, as JSON) a ``Host`` that is
not a loopback name or an allowed one (403: a web page using DNS rebinding could
otherwise read the journal) and a request with two ``x-callgate-test-id`` headers (400).
Bodies over ``max_body_bytes`` get HTTP 413 without being buffered whole; unknown paths
and methods get a JSON 404/405 naming the routes served, all in the provider's shape.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._errors import CallgateError
from .._json import loads_strict
from . import _control, _faults, _store, _validate
from ._guard import (
    BodyTooLargeError,
    HostCheck,
    error,
    host_is_loopback,
    read_body,
    route_names,
)
from ._http import (
    SSE_HEADERS,
    TEST_ID_HEADER,
    Reply,
    WholeStream,
    begin_entry,
    reply_response,
)
from ._journal import JournalEntry
from ._providers import PROTOCOLS, protocol_of, provider
from ._script import Script, ScriptTurn
from ._state import Mismatch, MockState, Session

__all__ = ["MAX_BODY_BYTES", "MockApp", "create_app", "host_is_loopback"]

MAX_BODY_BYTES = 32 * 1024 * 1024


def too_large(protocol: str | None, entry: JournalEntry, limit: int) -> Response:
    """The journaled 413 for an oversized body (the connection is closed after it)."""
    message = f"Request payload size exceeds the limit: {limit} bytes (got {entry.body_size})."
    reply = Reply(413, error(protocol, 413, message), {"connection": "close"})
    return reply_response(entry, reply, "rejected")


def parse_json(raw: bytes, entry: JournalEntry) -> Any:
    """``raw`` as strict JSON, journaled; raises ``CallgateError``."""
    try:
        body = loads_strict(raw)
    except CallgateError:
        entry.body = raw.decode("utf-8", "replace")
        raise
    # A shallow copy: a provider may rewrite top-level fields of the body it validates
    # (an Anthropic thread ``continue`` becomes the whole history); the journal keeps the wire.
    entry.body = dict(body) if isinstance(body, dict) else body
    return body


@dataclasses.dataclass(slots=True)
class _Call:
    """One provider request on its way through the pipeline."""

    request: Request
    state: MockState
    protocol: str
    entry: JournalEntry
    session: Session
    conversation: str
    body: dict[str, Any]
    turn: ScriptTurn | None = None


Stage = Callable[[_Call], Response | None]
"""A pipeline stage: a response ends the request, ``None`` passes it on."""


def _runtime_fault(call: _Call) -> Response | None:
    """A runtime ``http_error`` armed for this test id answers before anything else."""
    reply = _faults.before_request(call.state, call.session, call.protocol)
    return None if reply is None else reply_response(call.entry, reply, "fault")


def _scripted_fault(call: _Call) -> Response | None:
    """The next turn's scripted ``http_error`` (the turn is not consumed)."""
    call.turn = turn = call.state.next_turn(call.session, call.conversation)
    reply = _faults.turn_http_error(
        call.state, call.session, call.conversation, turn, call.protocol
    )
    return None if reply is None else reply_response(call.entry, reply, "fault")


def _native_checks(call: _Call) -> Response | None:
    """Stored-object references and the provider's own continuation rules."""
    reply = _validate.check(call.state, call.session, call.protocol, call.body)
    return None if reply is None else reply_response(call.entry, reply, "rejected")


def _match_and_send(call: _Call) -> Response:
    """Match the script's turn, render it, remember it and send it (with stream faults)."""
    state, session, entry = call.state, call.session, call.entry
    outcome = state.take(session, call.conversation, call.protocol, call.body)
    if isinstance(outcome, Mismatch):
        where = f" at {outcome.location}" if outcome.location else ""
        message = f"callgate mock: request does not match the script{where}: " + "; ".join(
            outcome.problems
        )
        body = provider(call.protocol).error_body(400, message)
        entry.close(400, body, "mismatch", outcome.location, outcome.problems)
        return JSONResponse(body, status_code=400)
    reply = _faults.fixture_http_error(outcome)
    if reply is not None:
        return reply_response(entry, reply, "fault")
    record = _store.record(state, session, call.protocol, outcome)
    rendered = outcome.rendered
    location = outcome.turn.location
    if rendered.body is not None:
        entry.close(200, rendered.body, "matched", location)
        return JSONResponse(rendered.body, headers={"request-id": rendered.response_id})
    plan = _faults.stream_plan(state, session, outcome)
    if plan.simple:
        # A finite, unpaced stream: one body message, no disconnect-listening task.
        entry.close(200, _text(plan.body), "matched", location)
        return WholeStream(plan.body, rendered.response_id)
    headers = {"request-id": rendered.response_id}

    record.in_flight = True  # until its last byte (a paced stream takes a while)

    async def stream() -> AsyncIterator[bytes]:
        sent: list[bytes] = []
        try:
            async for frame in _faults.send(state, plan):
                sent.append(frame)
                yield frame
        finally:
            with state.lock:
                record.in_flight = False
            text = b"".join(sent).decode("utf-8", "replace")
            entry.close(200, text, "matched", location)

    return _HeldStream(
        state, stream(), media_type="text/event-stream", headers={**SSE_HEADERS, **headers}
    )


# The stages after credentials and body, in order (the module docstring's list).
_STAGES: tuple[Stage, ...] = (_scripted_fault, _native_checks, _match_and_send)


class _Endpoint:
    """One provider route: ``await endpoint(request)`` reads the body as it arrives;
    :meth:`direct` answers a request whose whole body is already in hand (the same
    pipeline, no ASGI round trips)."""

    __slots__ = ("adapt", "auth", "error_body", "limit", "protocol", "state")

    def __init__(
        self, state: MockState, protocol: str, auth: Callable[[Request], Reply | None], limit: int
    ):
        self.state = state  # the app's ``state.callgate``, set once in create_app
        self.protocol = protocol
        self.auth = auth
        self.limit = limit
        self.error_body = provider(protocol).error_body
        self.adapt = provider(protocol).request_body

    async def __call__(self, request: Request) -> Response:
        call, response = self._before_body(request)
        if response is not None:
            return response
        try:
            raw = await read_body(request, call.entry, self.limit)
        except BodyTooLargeError:
            return too_large(self.protocol, call.entry, self.limit)
        return self._with_body(call, raw)

    def direct(self, request: Request, raw: bytes) -> Response:
        """Answer ``request`` whose body is ``raw`` (at most ``limit`` bytes)."""
        call, response = self._before_body(request)
        if response is not None:
            return response
        call.entry.body_size = len(raw)
        return self._with_body(call, raw)

    def _before_body(self, request: Request) -> tuple[_Call, Response | None]:
        state = self.state
        entry = begin_entry(request, state, self.protocol)
        call = _Call(
            request, state, self.protocol, entry, state.session(entry.test_id),
            entry.conversation or "default", {},
        )  # fmt: skip
        response = _runtime_fault(call)
        if response is None:
            reply = self.auth(request)
            if reply is not None:
                response = reply_response(entry, reply, "rejected")
        return call, response

    def _with_body(self, call: _Call, raw: bytes) -> Response:
        entry, error_body = call.entry, self.error_body
        try:
            body = parse_json(raw, entry)
        except CallgateError as exc:
            message = f"request body is not valid JSON: {exc}"
            return reply_response(entry, Reply(400, error_body(400, message)), "rejected")
        if not isinstance(body, dict):
            reply = Reply(400, error_body(400, "body must be a JSON object"))
            return reply_response(entry, reply, "rejected")
        adapted = body if self.adapt is None else self.adapt(call.request, body)
        if isinstance(adapted, Reply):
            return reply_response(entry, adapted, "rejected")
        call.body = adapted
        for stage in _STAGES:
            response = stage(call)
            if response is not None:
                return response
        raise AssertionError("the last stage always answers")  # pragma: no cover


_TEXTS: dict[bytes, str] = {}


def _text(body: bytes) -> str:
    """``body`` decoded, shared by every entry that journals the same rendered stream."""
    found = _TEXTS.get(body)
    if found is None:
        if len(_TEXTS) >= 256:
            _TEXTS.clear()  # fault plans make new bodies: keep the memo bounded
        found = _TEXTS[body] = body.decode("utf-8", "replace")
    return found


class _HeldStream(StreamingResponse):
    """A paced or held stream that :meth:`MockServer.stop` may cancel: it then ends, cut,
    as a complete response rather than as an application error."""

    def __init__(self, state: MockState, content: AsyncIterator[bytes], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._closing = state.closing

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            if not self._closing.is_set():
                raise  # not a shutdown
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _refusing(endpoint: Any, refuse: Callable[[Request], Reply | None], protocol: str) -> Any:
    """``endpoint`` behind a check of the path itself (e.g. an unknown API version)."""

    async def checked(request: Request) -> Response:
        reply = refuse(request)
        if reply is not None:
            entry = begin_entry(request, request.app.state.callgate, protocol)
            return reply_response(entry, reply, "rejected")
        response: Response = await endpoint(request)
        return response

    return checked


# -- refusals before any route, and unknown routes -----------------------------------------


async def _unrouted(request: Request, exc: Exception) -> Response:
    """A journaled JSON 404/405 that names every route the mock serves."""
    status = exc.status_code if isinstance(exc, HTTPException) else 404
    state: MockState = request.app.state.callgate
    protocol = protocol_of(request.scope["path"])
    entry = begin_entry(request, state, protocol)
    served: list[str] = request.app.state.routes
    what = "method not allowed for" if status == 405 else "no route for"
    message = (
        f"callgate mock: {what} {request.method} {request.scope['path']}; "
        f"it serves: {', '.join(served)}"
    )
    body = error(protocol, status, message)
    if protocol is None:
        body["error"]["routes"] = served
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    return reply_response(entry, Reply(status, body, headers), "rejected")


class MockApp:
    """The ASGI app: provider POST routes are dispatched straight to their endpoint (the
    hot path skips routing and middleware), everything else goes through Starlette.

    ``state.callgate`` is the :class:`MockState`, as on a Starlette app.
    """

    def __init__(
        self,
        inner: Starlette,
        fast: dict[str, _Endpoint],
        *,
        max_body_bytes: int,
        allowed_hosts: Iterable[str] | None,
    ) -> None:
        self.inner = inner
        self.state = inner.state
        self.max_body_bytes = max_body_bytes
        self._fast = fast
        self._hosts = None if allowed_hosts is None else HostCheck(allowed_hosts)

    def _foreign(self, scope: Any) -> bool | None:
        """Whether the ``Host`` is refused (True) or the test id given twice (None)."""
        host, test_ids = None, 0
        for key, value in scope["headers"]:
            if key == b"host":
                host = value
            elif key == b"x-callgate-test-id":
                test_ids += 1
        if host is not None and self._hosts is not None and not self._hosts(host):
            return True
        return None if test_ids > 1 else False

    def direct(self, scope: Any, body: bytes) -> Response | None:
        """The response to a provider POST whose whole ``body`` has arrived, computed
        without ASGI messages (for the mock's own HTTP protocol); ``None`` when the request
        must take the ASGI path (another route, a refusal, a body over the limit)."""
        endpoint = self._fast.get(scope["path"]) if scope["method"] == "POST" else None
        if endpoint is None or len(body) > self.max_body_bytes or self._foreign(scope) is not False:
            return None
        scope["app"] = self.inner
        return endpoint.direct(Request(scope), body)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refused = self._foreign(scope)
            if refused is not False:
                await self._refuse(scope, receive, send, refused is True)
                return
            foreign = False
            if scope["method"] == "POST":
                endpoint = self._fast.get(scope["path"])
                if endpoint is not None:
                    scope["app"] = self.inner
                    response: Response = await endpoint(Request(scope, receive))
                    await response(scope, receive, send)
                    return
            # The other routes read small bodies whole: refuse a declared oversized one.
            length = next((v for k, v in scope["headers"] if k == b"content-length"), b"")
            if length.isdigit() and int(length) > self.max_body_bytes:
                await self._refuse(scope, receive, send, foreign, int(length))
                return
        await self.inner(scope, receive, send)

    async def _refuse(
        self, scope: Any, receive: Any, send: Any, bad_host: bool, size: int | None = None
    ) -> None:
        scope["app"] = self.inner
        request = Request(scope, receive)
        protocol = protocol_of(scope["path"])
        values = [v.decode("latin-1") for k, v in scope["headers"] if k == b"x-callgate-test-id"]
        state: MockState = self.state.callgate
        several = not bad_host and size is None
        entry = begin_entry(request, state, protocol, ", ".join(values) if several else None)
        if bad_host:
            status, message = 403, "callgate mock: requests must name a loopback Host"
        elif size is not None:
            entry.body_size = size
            status = 413
            message = f"Request payload size exceeds the limit: {self.max_body_bytes} bytes."
        else:
            status, message = 400, f"callgate mock: send one {TEST_ID_HEADER} header, not many"
        headers = {"connection": "close"} if size is not None else {}
        reply = Reply(status, error(protocol, status, message), headers)
        response = reply_response(entry, reply, "rejected")
        await response(scope, receive, send)


def create_app(
    script: Script,
    *,
    state: MockState | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    allowed_hosts: Iterable[str] | None = (),
) -> MockApp:
    """A plain ASGI app serving ``script``. ``app.state.callgate`` is its :class:`MockState`.

    Provider request bodies over ``max_body_bytes`` get HTTP 413. A request whose ``Host``
    header is neither a loopback name (``localhost``, ``127.0.0.0/8``, ``::1``) nor one
    of ``allowed_hosts`` gets HTTP 403; ``allowed_hosts=None`` turns that check off.
    Raises :class:`~callgate.mock.ScriptError` if the script's faults or validation
    switches are invalid.
    """
    _validate.check_switches(script)
    _faults.check_faults(script)
    routes: list[Route] = []
    fast: dict[str, _Endpoint] = {}
    mock_state = state if state is not None else MockState(script)
    for protocol in PROTOCOLS:
        for spec in provider(protocol).endpoints:
            endpoint = _Endpoint(mock_state, protocol, spec.auth, max_body_bytes)
            # The router also reaches the path's other spellings: check those first.
            # (a bound method: Starlette wraps functions and methods as request handlers)
            routed = (
                endpoint.__call__
                if spec.refuse is None
                else _refusing(endpoint.__call__, spec.refuse, protocol)
            )
            routes.append(Route(spec.path, routed, methods=["POST"]))
            fast |= dict.fromkeys(spec.fast, endpoint)
    routes += [
        *_control.routes(),
    ]
    for protocol in PROTOCOLS:
        routes += provider(protocol).state_routes()
    routes += _faults.control_routes()
    inner = Starlette(routes=routes, exception_handlers={404: _unrouted, 405: _unrouted})
    inner.state.callgate = mock_state
    inner.state.routes = route_names(routes)
    return MockApp(inner, fast, max_body_bytes=max_body_bytes, allowed_hosts=allowed_hosts)
