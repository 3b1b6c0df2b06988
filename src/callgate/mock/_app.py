"""The mock provider as a small ASGI app (Starlette), composed from plain functions.

Each provider route (its provider's :class:`~._providers.Endpoint`) runs the pipeline of
:mod:`._pipeline`. :meth:`MockApp.direct` answers a provider POST whose body is already
in hand (the mock's HTTP/1.1 connection calls it) without ASGI messages: an exact path
goes straight to its endpoint, a path with parameters (generateContent's
``/gemini/{version}/models/{target}``) is matched by its own Starlette route (once per
path: the answer is remembered), so both paths route alike, and its path check runs first.

Before any route runs, :class:`MockApp` refuses (journaled, as JSON) a ``Host`` that is
not a loopback name or an allowed one (403: a web page using DNS rebinding could
otherwise read the journal) and a request with two ``x-callgate-test-id`` headers (400).
Bodies over ``max_body_bytes`` get HTTP 413 without being buffered whole; unknown paths
and methods get a JSON 404/405 naming the routes served, all in the provider's shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from . import _aux, _control, _faults, _store, _validate, _ws
from ._guard import HostCheck, error, host_is_loopback, route_names
from ._http import TEST_ID_HEADER, Reply, begin_entry, reply_response
from ._pipeline import Endpoint
from ._providers import PROTOCOLS, protocol_of, provider
from ._providers._kit import Host
from ._script import Script
from ._state import MockState

__all__ = ["MAX_BODY_BYTES", "MockApp", "create_app", "host_is_loopback"]

MAX_BODY_BYTES = 32 * 1024 * 1024
# What the engine lends the providers' own routes (auxiliary and stored-object endpoints).
HOST = Host(aux=_aux.route, stored=_store.stored_endpoint)


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
        fast: dict[str, Endpoint],
        *,
        max_body_bytes: int,
        allowed_hosts: Iterable[str] | None,
        patterned: Iterable[tuple[Route, Endpoint | None]] = (),
        sockets: dict[str, Endpoint] | None = None,
    ) -> None:
        self.inner = inner
        self.state = inner.state
        self.max_body_bytes = max_body_bytes
        self._fast = fast
        self._sockets = sockets or {}  # WebSocket routes (a provider's socket wire)
        # Provider routes with path parameters and no exact paths, with their endpoints,
        # and what matching them gave per path (a pure function of the path: a memo).
        self._patterned = tuple(patterned)
        self._matched: dict[tuple[str, str], tuple[Endpoint | None, Any]] = {}
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
        if scope["method"] != "POST" or len(body) > self.max_body_bytes:
            return None
        endpoint = self._fast.get(scope["path"])
        routed = endpoint is None
        if routed:
            endpoint = self._route(scope)
        if endpoint is None or self._foreign(scope) is not False:
            return None
        scope["app"] = self.inner
        request = Request(scope)
        refused = endpoint.refusal(request) if routed else None
        return refused if refused is not None else endpoint.direct(request, body)

    def _route(self, scope: Any) -> Endpoint | None:
        """The endpoint of a path with parameters, matched as its Starlette route matches
        it (the path parameters go into ``scope`` as the router puts them)."""
        key = (scope.get("root_path", ""), scope["path"])
        found = self._matched.get(key) or self._match(key, scope)
        if found is None:
            return None
        endpoint, child = found
        if endpoint is None:
            return None  # an auxiliary route: the ASGI path serves it
        scope["endpoint"] = child["endpoint"]
        scope["path_params"] = dict(child["path_params"])  # each request its own dict
        return endpoint

    def _match(self, key: tuple[str, str], scope: Any) -> tuple[Endpoint | None, Any] | None:
        for route, endpoint in self._patterned:
            match, child = route.matches(scope)
            if match is Match.FULL:
                if len(self._matched) >= 256:
                    self._matched.clear()  # paths name models: keep the memo bounded
                found = self._matched[key] = (endpoint, child)
                return found
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            endpoint = self._sockets.get(scope["path"])
            if endpoint is None or self._foreign(scope) is not False:
                await _ws.refuse(scope, send, 403 if endpoint else 404, {"error": {
                    "type": "callgate_mock_error",
                    "message": "callgate mock: no WebSocket route here, or a refused Host",
                }})  # fmt: skip
                return
            await _ws.serve(endpoint, scope, receive, send)
            return
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
    fast: dict[str, Endpoint] = {}
    sockets: dict[str, Endpoint] = {}
    patterned: list[tuple[Route, Endpoint | None]] = []
    mock_state = state if state is not None else MockState(script)
    for protocol in PROTOCOLS:
        # Auxiliary routes first: generateContent's countTokens lies inside its create
        # route's path pattern. A POST among them is matched before the create routes by
        # direct() too, and then takes the ASGI path (no endpoint: None).
        for route in provider(protocol).aux_routes(HOST):
            routes.append(route)
            if "POST" in (route.methods or ()) and "{" in route.path:
                patterned.append((route, None))
    for protocol in PROTOCOLS:
        for spec in provider(protocol).endpoints:
            endpoint = Endpoint(mock_state, protocol, spec, max_body_bytes)
            # The router also reaches the path's other spellings: check those first.
            # (a bound method: Starlette wraps functions and methods as request handlers)
            handler = endpoint.__call__ if spec.refuse is None else endpoint.checked
            route = Route(spec.path, handler, methods=["POST"])
            routes.append(route)
            fast |= dict.fromkeys(spec.fast, endpoint)
            if provider(protocol).socket is not None:
                sockets |= dict.fromkeys(spec.fast, endpoint)
            if not spec.fast:
                patterned.append((route, endpoint))
    routes += [
        *_control.routes(),
    ]
    for protocol in PROTOCOLS:
        routes += provider(protocol).state_routes(HOST)
    routes += _faults.control_routes()
    inner = Starlette(routes=routes, exception_handlers={404: _unrouted, 405: _unrouted})
    inner.state.callgate = mock_state
    inner.state.routes = route_names(routes)
    return MockApp(
        inner, fast, max_body_bytes=max_body_bytes, allowed_hosts=allowed_hosts,
        patterned=patterned, sockets=sockets,
    )  # fmt: skip
