"""Serve ``recorded`` fixtures back, byte-exact, as the mock: ``MockServer.from_recordings``.

Every recording in the directory (``load_fixtures``; only the ``recorded`` layer) is one
answer. By default they are matched **strictly by conversation position**: the n-th request
of a conversation (``x-callgate-conversation``, per ``x-callgate-test-id`` session) gets
the n-th recording, and only if it goes to the same protocol with the same method and the
same JSON body as the recorded request. ``match="body"`` is order-free: a request gets the
first unserved recording of its protocol whose request body equals it. A request that
matches nothing gets HTTP 400 in the provider's error shape naming the recording it was
expected to match and where the bodies first differ; it is journaled as a ``mismatch``.

The answer is the recorded status, the kept headers and the recorded bytes unchanged;
``pacing=True`` sends them chunk by chunk at the recorded offsets from the request's
arrival. Other paths (the journal, reset, unknown routes) are the mock's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from .._errors import CallgateError, UsageError
from .._json import loads_strict
from ..contracts import Fixture, load_fixtures
from ..recording import protocol_of as path_protocol
from ._guard import BodyTooLargeError, HostCheck, error, protocol_of, read_body
from ._journal import JournalEntry
from ._providers._media_kit import elide_media
from ._script import Script
from ._state import CONVERSATION_HEADER, TEST_ID_HEADER, MockState
from ._verdicts import recorded_facts

if TYPE_CHECKING:
    from ._app import MockApp
    from ._server import MockServer

__all__ = ["Match", "ReplayApp", "load_recordings", "replay_server"]

Match = Literal["position", "body"]
_DROPPED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})


@dataclasses.dataclass(frozen=True, slots=True)
class Recording:
    """One recorded exchange, ready to serve."""

    name: str
    protocol: str
    method: str
    body: Any
    status: int
    headers: tuple[tuple[str, str], ...]
    data: bytes
    chunks: tuple[tuple[int, float], ...]

    @classmethod
    def of(cls, fixture: Fixture) -> Recording:
        rec = fixture.recording or {}
        request, response = rec["request"], rec["response"]
        headers = tuple((k, v) for k, v in response.get("headers", []) if k not in _DROPPED_HEADERS)
        chunks = tuple((int(n), float(t)) for n, t in response.get("chunks", []))
        return cls(
            name=fixture.name,
            protocol=fixture.api_family,
            method=request["method"].upper(),
            body=request.get("body"),
            status=response["status"],
            headers=headers,
            data=fixture.data,
            chunks=chunks,
        )


def load_recordings(directory: str | os.PathLike[str]) -> tuple[Recording, ...]:
    """The ``recorded`` fixtures of ``directory``, in file order (``ContractError`` if the
    folder has none or a fixture is invalid)."""
    fixtures = load_fixtures(directory, allow_local_source_urls=True)
    found = tuple(Recording.of(f) for f in fixtures if f.layer == "recorded")
    if not found:
        raise UsageError(f"{directory}: no recorded fixtures to replay")
    return found


def first_difference(expected: Any, got: Any, where: str = "$") -> str | None:
    """The JSON path where ``got`` first differs from ``expected``, or ``None``."""
    if type(expected) is not type(got):
        return where
    if type(expected) is dict:
        for key in sorted(set(expected) | set(got)):
            if key not in expected or key not in got:
                return f"{where}.{key}"
            found = first_difference(expected[key], got[key], f"{where}.{key}")
            if found:
                return found
        return None
    if type(expected) is list:
        if len(expected) != len(got):
            return f"{where} (length {len(expected)} != {len(got)})"
        for i, (a, b) in enumerate(zip(expected, got, strict=True)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if expected == got else where


class ReplayApp:
    """The ASGI app of a replaying :class:`MockServer`; ``fallback`` is the mock's own."""

    def __init__(
        self,
        recordings: tuple[Recording, ...],
        *,
        state: MockState,
        fallback: Any,
        allowed_hosts: list[str],
        match: Match = "position",
        pacing: bool = False,
        max_body_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        if match not in ("position", "body"):
            raise UsageError(f"match must be 'position' or 'body', not {match!r}")
        self.recordings = recordings
        self.state = state
        self.fallback = fallback
        self.match = match
        self.pacing = pacing
        self._hosts = HostCheck(allowed_hosts)
        self._lock = threading.Lock()
        self._cursor: dict[tuple[str, str], int] = {}  # (test id, conversation) -> position
        self._served: dict[str, set[int]] = {}  # test id -> recording indexes served

    def unserved(self, test_id: str = "default") -> list[str]:
        """The names of the recordings no request of ``test_id`` has been answered with."""
        with self._lock:
            done = self._served.get(test_id, set())
        return [r.name for i, r in enumerate(self.recordings) if i not in done]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        protocol = protocol_of(scope["path"]) if scope["type"] == "http" else None
        host = next((v for k, v in scope.get("headers", ()) if k == b"host"), None)
        if protocol is None or (host is not None and not self._hosts(host)):
            await self.fallback(scope, receive, send)  # the mock refuses or routes it
            return
        # The route's protocol by the recorded path's kind (``:generateContent`` under
        # /gemini/ is not Interactions), else by the mock's prefix.
        protocol = path_protocol(scope["path"]) or protocol
        response = await self._answer(Request(scope, receive), protocol)
        await response(scope, receive, send)

    async def _answer(self, request: Request, protocol: str) -> Response:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.scope["headers"]}
        entry = self.state.journal.begin(
            test_id=headers.get(TEST_ID_HEADER, "default"),
            conversation=headers.get(CONVERSATION_HEADER, "default"),
            protocol=protocol,
            method=request.method,
            path=request.scope["path"],
            query=request.scope["query_string"].decode("latin-1"),
            headers=headers,
            body=None,
        )
        try:
            raw = await read_body(request, entry, self.max_body_bytes)
        except BodyTooLargeError:
            message = f"request body is over {self.max_body_bytes} bytes"
            entry.close(413, error(protocol, 413, message), "rejected")
            return JSONResponse(error(protocol, 413, message), status_code=413,
                                headers={"connection": "close"})  # fmt: skip
        try:
            body = loads_strict(raw) if raw else None
        except CallgateError as exc:
            return self._refuse(entry, protocol, f"request body is not valid JSON: {exc}")
        entry.body = elide_media(body)  # a digest and size instead of inline media
        found, problem = self._take(entry, protocol, request.method, body)
        if found is None:
            return self._refuse(entry, protocol, problem, mismatch=True)
        recording = self.recordings[found]
        if self.state.verdicts.enabled:
            entry.facts = recorded_facts(
                protocol, recording.status, recording.headers, recording.data
            )
        entry.close(recording.status, recording.data.decode("utf-8", "replace"), "matched",
                    recording.name)  # fmt: skip
        if self.pacing and recording.chunks:
            return StreamingResponse(
                _paced(recording), status_code=recording.status, headers=dict(recording.headers)
            )
        return Response(recording.data, status_code=recording.status,
                        headers=dict(recording.headers))  # fmt: skip

    def _take(
        self, entry: JournalEntry, protocol: str, method: str, body: Any
    ) -> tuple[int | None, str]:
        key = (entry.test_id, entry.conversation or "default")
        with self._lock:
            served = self._served.setdefault(entry.test_id, set())
            if self.match == "body":
                for index, rec in enumerate(self.recordings):
                    if index not in served and _fits(rec, protocol, method, body) is None:
                        served.add(index)
                        return index, ""
                return None, "no unserved recording has this protocol, method and body"
            position = self._cursor.get(key, 0)
            if position >= len(self.recordings):
                return None, (
                    f"request {position + 1} of conversation {key[1]!r}: every one of the "
                    f"{len(self.recordings)} recordings was already served"
                )
            rec = self.recordings[position]
            problem = _fits(rec, protocol, method, body)
            if problem is not None:
                return None, (
                    f"request {position + 1} of conversation {key[1]!r} was expected to "
                    f"match recording {rec.name!r}, but {problem}"
                )
            self._cursor[key] = position + 1
            served.add(position)
            return position, ""

    def _refuse(
        self, entry: JournalEntry, protocol: str, message: str, *, mismatch: bool = False
    ) -> Response:
        text = f"callgate replay: {message}"
        body = error(protocol_of(entry.path) or protocol, 400, text)  # the route's shape
        if mismatch:
            entry.close(400, body, "mismatch", None, (message,))
        else:
            entry.close(400, body, "rejected")
        return JSONResponse(body, status_code=400)


def _fits(rec: Recording, protocol: str, method: str, body: Any) -> str | None:
    """Why a request does not fit ``rec`` (``None`` when it does)."""
    if rec.protocol != protocol:
        return f"it went to {protocol}, the recording to {rec.protocol}"
    if rec.method != method.upper():
        return f"its method is {method}, the recording's {rec.method}"
    where = first_difference(rec.body, body)
    if where is not None:
        return f"its body differs from the recorded request at {where}"
    return None


async def _paced(rec: Recording) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    offset = 0
    for size, at_ms in rec.chunks:
        delay = start + at_ms / 1000 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        yield rec.data[offset : offset + size]
        offset += size
    if offset < len(rec.data):
        yield rec.data[offset:]


def replay_server(
    cls: type[MockServer],
    directory: str | os.PathLike[str],
    *,
    match: Match = "position",
    pacing: bool = False,
    **kwargs: Any,
) -> MockServer:
    """A :class:`MockServer` whose provider routes answer with the recordings."""
    recordings = load_recordings(directory)
    hosts = [kwargs.get("host", "127.0.0.1"), *kwargs.get("allowed_hosts", ())]

    def replay(state: MockState, scripted: MockApp) -> ReplayApp:
        return ReplayApp(
            recordings,
            state=state,
            fallback=scripted,
            allowed_hosts=hosts,
            match=match,
            pacing=pacing,
            max_body_bytes=scripted.max_body_bytes,
        )

    server = cls(Script(conversations={}), app=replay, **kwargs)
    server.replay = server.app if isinstance(server.app, ReplayApp) else None
    return server
