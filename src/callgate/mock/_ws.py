"""The WebSocket route of a provider with a socket wire (``Provider.socket``): OpenAI
Responses on its create paths (``/openai/v1/responses``, Azure's v1 path).

The upgrade request carries what an HTTP request carries: credentials (checked once, a
refusal is the HTTP answer to the upgrade), the test id and the conversation headers.
Then each client message is served in arrival order, one at a time:

- a ``create`` runs the provider's HTTP pipeline (:meth:`Endpoint.direct`: journal,
  session, faults, request validation, native checks, script match, store) with the body
  the message stands for, and the events of the stream it answers leave one JSON text
  frame each; an HTTP refusal becomes the wire's error event. A stream that ends without
  its terminal event (a ``disconnect`` fault) closes the socket with the fault's
  ``close_code`` (1011 by default); pacing paces the frames.
- the connection-local cache: a response created here with ``store: false`` is
  referable by id from this connection only (``_store_state.LIVE``); a request that
  continues it and fails evicts it.
- a ``steer`` is answered as the running turn's ``respond.steer`` says (:mod:`._ws_steer`).

Every message gets a journal entry (``method: "WS"``, ``connection``: the connection's
id); an automatic successor gets its own.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .._errors import CallgateError
from .._json import loads_strict
from ._http import CONNECTION_KEY, ENTRY_KEY, WholeStream, begin_entry
from ._journal import JournalEntry
from ._pipeline import Endpoint
from ._providers import provider
from ._providers._kit import Event, Socket
from ._store_state import LIVE
from ._ws_steer import Stream, unscripted

__all__ = ["refuse", "serve"]

_IDS = itertools.count(1)


async def refuse(scope: Any, send: Any, status: int, body: Any) -> None:
    """Answer an upgrade with an HTTP error (a plain close, a 403, without the extension)."""
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": data})


async def serve(endpoint: Endpoint, scope: Any, receive: Any, send: Any) -> None:
    """One WebSocket connection on ``endpoint``'s path."""
    first = await receive()
    if first["type"] != "websocket.connect":
        return
    wire = provider(endpoint.protocol).socket
    refused = endpoint.auth(Request({**scope, "type": "http", "method": "GET"}))
    if wire is None or refused is not None:
        status, body = (404, {}) if refused is None else (refused.status, refused.body)
        entry = begin_entry(Request({**scope, "type": "http", "method": "GET"}),
                            endpoint.state, endpoint.protocol)  # fmt: skip
        entry.close(status, body, "rejected")
        await refuse(scope, send, status, body)
        return
    await send({"type": "websocket.accept"})
    await Connection(endpoint, wire, scope, receive, send).run()


class Connection:
    """One accepted socket: its inbox, its cache and what its responses left."""

    def __init__(self, endpoint: Endpoint, wire: Socket, scope: Any, receive: Any, send: Any):
        self.endpoint = endpoint
        self.state = endpoint.state
        self.wire = wire
        self.scope = scope
        self.receive = receive
        self.send_message = send
        self.id = f"ws_{next(_IDS)}"
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.deferred: collections.deque[str | None] = collections.deque()
        self.cache: set[str] = set()  # unstored responses created here
        self.done: set[str] = set()  # responses that ended here
        self.queued: dict[str, list[Any]] = {}  # parent id -> accepted steering input
        self.steers = itertools.count(1)
        self.closed = False

    async def run(self) -> None:
        reader = asyncio.create_task(self._read())
        try:
            while not self.closed:
                text = self.deferred.popleft() if self.deferred else await self.inbox.get()
                if text is None:
                    break
                await self.message(text)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _read(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "websocket.disconnect":
                self.inbox.put_nowait(None)
                return
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            self.inbox.put_nowait(text)

    async def next_message(self) -> str | None:
        """The next message from the client (None once it left)."""
        return await self.inbox.get()

    # -- sending ------------------------------------------------------------------------

    async def send(self, event: Event | str) -> None:
        text = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
        if self.closed:
            return
        try:
            await self.send_message({"type": "websocket.send", "text": text})
        except OSError:  # the client left (uvicorn's ClientDisconnected)
            self.closed = True

    async def close(self, code: int, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError, RuntimeError):
                await self.send_message({"type": "websocket.close", "code": code, "reason": reason})

    # -- messages -----------------------------------------------------------------------

    def entry(self, body: Any) -> JournalEntry:
        """A journal entry for a message that takes no pipeline (a steer, a refusal)."""
        scope = {**self.scope, "type": "http", "method": "WS", CONNECTION_KEY: self.id}
        entry = begin_entry(Request(scope), self.state, self.endpoint.protocol)
        entry.body = body
        return entry

    def parse(self, text: str) -> tuple[Any, Event | None]:
        """The message as JSON, or the error event refusing it."""
        try:
            return loads_strict(text), None
        except CallgateError as exc:
            error = {"type": "invalid_request_error", "code": "invalid_json",
                     "message": f"Invalid JSON: {exc}", "param": None}  # fmt: skip
            return text, {"type": "error", "status": 400, "error": error}

    async def message(self, text: str) -> None:
        parsed, problem = self.parse(text)
        read = self.wire.read(parsed) if problem is None else None
        if read is not None and read.kind == "create" and read.body is not None:
            await self.create(read.body, read.lane, parsed)
            return
        if read is not None and read.kind == "steer":
            await unscripted(self, parsed, read.target, read.input)
            return
        event = problem if read is None else read.error
        if event is None:  # pragma: no cover - read() gives an error for anything else
            return
        self.entry(parsed).close(int(event.get("status") or 400), event, "rejected")
        await self.send(event)

    async def create(self, body: dict[str, Any], lane: str | None, original: Any) -> None:
        """Serve one response: the pipeline's answer, as frames."""
        previous = body.get("previous_response_id")
        queued = self.queued.pop(previous, None) if isinstance(previous, str) else None
        if queued:  # accepted steering input goes first (pending steer, explicit create)
            given = body.get("input")
            rest = self.wire.steer_input(given) if given else []
            body = {**body, "input": [*queued, *rest]}
        scope = {**self.scope, "type": "http", "method": "WS", CONNECTION_KEY: self.id}
        token = LIVE.set(frozenset(self.cache))
        try:
            response = self.endpoint.direct(Request(scope), json.dumps(body).encode())
        finally:
            LIVE.reset(token)
        entry: JournalEntry | None = scope.get(ENTRY_KEY)
        if entry is not None and original is not None:
            entry.body = original
        if response.status_code != 200 or not isinstance(
            response, (WholeStream, StreamingResponse)
        ):
            if isinstance(previous, str):
                self.cache.discard(previous)  # a failed continuation evicts its parent
            await self.send(_error_event(self.wire, response, lane))
            return
        stream = Stream(self, body, lane, entry)
        await stream.run(_payloads(response))


def _error_event(wire: Socket, response: Response, lane: str | None) -> Event:
    try:
        body = json.loads(bytes(response.body))
    except ValueError:
        body = None
    keep = {"retry-after"}
    headers = {
        k: v for k, v in response.headers.items() if k in keep or k.startswith("x-ratelimit-")
    }
    return wire.http_error(response.status_code, body, headers, lane)


async def _payloads(response: Response) -> AsyncIterator[str]:
    """The ``data`` of each SSE event the response sends, as it is sent."""
    buffer = b""
    chunks: Any  # an async iterable of bytes or str
    if isinstance(response, StreamingResponse):
        chunks = response.body_iterator
    else:
        chunks = _once(bytes(response.body))
    try:
        async for chunk in chunks:
            buffer += chunk if isinstance(chunk, bytes) else str(chunk).encode()
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                data = _data(block)
                if data is not None:
                    yield data
    finally:
        closing = getattr(chunks, "aclose", None)
        if closing is not None:
            await closing()
    if buffer.strip():
        data = _data(buffer)
        if data is not None:
            yield data


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


def _data(block: bytes) -> str | None:
    lines = [line[5:] for line in block.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    text = b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines)
    return text.decode("utf-8", "replace")
