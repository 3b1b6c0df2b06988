"""The mock's HTTP/1.1 connection: an ASGI protocol for uvicorn's server, built on httptools.

uvicorn still owns the sockets, the lifecycle and shutdown (``uvicorn.Config(http=...)``
takes a protocol class); this replaces only its per-request machinery, which cost more
than the whole mock pipeline. A request with a small declared body is dispatched once
the body is in (others as soon as their headers are, to stream the body to the app). A
complete provider POST goes to :meth:`MockApp.direct`: the same pipeline (journal,
session, faults, checks, match, store), called without ASGI messages or a task; a plain
answer then leaves in one write, while a paced or held stream (a ``StreamingResponse``)
and every other route run as ASGI tasks (:mod:`._http1_exchange`). The scope is built
from the raw request target, without a URL parse.

What it keeps of uvicorn's contract: connections and tasks are registered in the
``ServerState`` (shutdown waits for them, :class:`MockServer` cancels them), ``shutdown()``
closes an idle connection and ends a busy one after its response, the date/server default
headers, keep-alive with its idle timeout, pipelined requests answered in order, read and
write flow control, ``Expect: 100-continue``, HTTP/1.0 clients (no chunking, closed after
the response) and ASGI 2.3 ``http.disconnect``. A WebSocket upgrade request (``Upgrade:
websocket``) hands the connection to uvicorn's WebSocket protocol (``Config(ws=...)``,
:data:`WS`), as uvicorn's own HTTP protocols do; without one it is refused with a 400.
Without httptools, :data:`PROTOCOL` is ``"auto"`` (uvicorn's own choice).
"""

from __future__ import annotations

import asyncio
import collections
import urllib.parse
from typing import Any

from starlette.responses import StreamingResponse

from ._http1_exchange import LOG, Exchange, header_bytes

__all__ = ["PROTOCOL", "WS"]

_HIGH_WATER = 64 * 1024  # request bytes buffered before reading pauses
_ASGI = {"version": "3.0", "spec_version": "2.3"}
_MAX_HEAD = 256 * 1024  # bytes of request line and headers


class Http1(asyncio.Protocol):
    """One client connection (the protocol class handed to ``uvicorn.Config(http=...)``)."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        import httptools

        if not config.loaded:
            config.load()
        self.app = config.loaded_app
        # The mock's own shortcut for complete provider requests (MockApp.direct); it
        # skips uvicorn's proxy-headers middleware, whose client/scheme the routes never read.
        self.direct = getattr(config.app, "direct", None)
        self.ws_protocol: Any = config.ws_protocol_class
        self.config = config
        self.upgrading: bytes | None = None  # the head of a WebSocket upgrade request
        self.loop = _loop or asyncio.get_event_loop()
        self.state = server_state
        self.app_state = app_state
        self.root_path: str = config.root_path
        self.keep_alive_s: float = config.timeout_keep_alive
        self.parser = httptools.HttpRequestParser(self)
        self.parse_url = httptools.parse_url
        self.parser_errors = (httptools.HttpParserError, httptools.HttpParserUpgrade)
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.server: Any = None
        self.client: Any = None
        self.scheme = "http"
        self.reading: Exchange | None = None  # the request whose bytes are arriving
        self.active: Exchange | None = None  # the request being answered
        self.queue: collections.deque[Exchange] = collections.deque()  # pipelined
        self.read_paused = False
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None
        self.idle: asyncio.TimerHandle | None = None
        self.idle_since: float | None = None  # loop time the connection went idle
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.expect = False
        self.length = -1
        self.head_size = 0
        self._defaults: tuple[Any, bytes] = (None, b"")

    def default_headers(self) -> bytes:
        """uvicorn's date/server headers (it replaces the list every second)."""
        current = self.state.default_headers
        if self._defaults[0] is not current:
            self._defaults = (current, header_bytes(current))
        return self._defaults[1]

    # -- asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.state.connections.add(self)
        self.transport = transport  # type: ignore[assignment]
        self.server = _address(transport.get_extra_info("sockname"))
        self.client = _address(transport.get_extra_info("peername"))
        if transport.get_extra_info("sslcontext") is not None:
            self.scheme = "https"

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.connections.discard(self)
        self._stop_idle()
        for exchange in (self.active, self.reading, *self.queue):
            if exchange is not None and not exchange.complete:
                exchange.disconnected = True
                exchange.wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.idle_since = None
        try:
            self.parser.feed_data(data)
        except self.parser_errors as exc:
            if self.upgrading is not None and self.active is None and exc.args:
                offset = exc.args[0]
                self._upgrade(data[offset:] if isinstance(offset, int) else b"")
                return
            if self.active is None or not self.active.started:
                message = b"Invalid HTTP request received."
                self.transport.write(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%b" % (len(message), message)
                )
            self.transport.close()
            return
        active = self.active
        if active is not None and not active.dispatched and not active.small:
            self._start(active, self.app)  # headers are in, a large body is still coming

    def eof_received(self) -> bool | None:
        return None

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    async def drain(self) -> None:
        if self.drained is None or self.drained.done():
            self.drained = self.loop.create_future()
        await self.drained

    # -- httptools callbacks -----------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.url = b""
        self.headers = []
        self.expect = False
        self.length = -1
        self.head_size = 0

    def on_url(self, url: bytes) -> None:
        self.url += url
        if len(self.url) > _MAX_HEAD:
            raise ValueError("request target too long")  # httptools answers it as a parse error

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value)
        if self.head_size > _MAX_HEAD:
            raise ValueError("request headers too large")
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect = True
        elif name == b"content-length" and value.isdigit():
            self.length = int(value)
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        parser = self.parser
        version = parser.get_http_version()
        target = self.url
        if (
            self.ws_protocol is not None
            and parser.should_upgrade()
            and any(k == b"upgrade" and v.lower() == b"websocket" for k, v in self.headers)
        ):
            head = [parser.get_method(), b" ", target, b" HTTP/1.1\r\n"]
            head += [b"%b: %b\r\n" % pair for pair in self.headers]
            self.upgrading = b"".join(head) + b"\r\n"
            return  # handed over once the parser reports the upgrade
        if target[:1] == b"/":
            raw_path, _, query = target.partition(b"?")
        else:  # absolute-form or asterisk-form
            parsed = self.parse_url(target)
            raw_path, query = parsed.path or b"/", parsed.query or b""
        path = raw_path.decode("latin-1")
        if "%" in path:
            path = urllib.parse.unquote(path)
        scope = {
            "type": "http",
            "asgi": _ASGI,
            "http_version": version,
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "method": parser.get_method().decode("ascii"),
            "root_path": self.root_path,
            "path": self.root_path + path,
            "raw_path": raw_path,
            "query_string": query,
            "headers": self.headers,
            "state": self.app_state.copy(),
        }
        keep_alive = version != "1.0" and parser.should_keep_alive()
        self.reading = exchange = Exchange(self, scope, keep_alive, self.expect)
        # A small declared body is awaited before the app runs (it is on its way, and the
        # app then answers in one step); a large, chunked or 100-continue one is streamed.
        exchange.small = 0 <= self.length <= _HIGH_WATER and not self.expect
        if self.active is None:
            self.active = exchange
        else:
            self.queue.append(exchange)
            self._pause_reading()

    def on_body(self, body: bytes) -> None:
        exchange = self.reading
        if exchange is None or exchange.complete:
            return  # an answered request's unread body is skipped
        exchange.chunks.append(body)
        exchange.buffered += len(body)
        if exchange.buffered > _HIGH_WATER:
            self._pause_reading()
        exchange.wake()

    def on_message_complete(self) -> None:
        exchange, self.reading = self.reading, None
        if exchange is None:
            return
        exchange.more = False
        exchange.wake()
        if exchange is self.active and not exchange.dispatched:
            self._dispatch(exchange)

    # -- requests -------------------------------------------------------------------------------

    def _dispatch(self, exchange: Exchange) -> None:
        """Answer a request: straight from :data:`direct` when its body is complete and the
        answer is a plain response (one write, no task), else as an ASGI task."""
        if self.direct is None or exchange.more:
            self._start(exchange, self.app)
            return
        exchange.dispatched = True
        body = b"".join(exchange.chunks)
        try:
            response = self.direct(exchange.scope, body)
        except Exception as exc:
            LOG.error("Exception in ASGI application\n", exc_info=exc)
            exchange.fail()
            return
        if response is None:
            self._start(exchange, self.app)
            return
        exchange.chunks.clear()
        exchange.delivered = True
        if isinstance(response, StreamingResponse) or response.background is not None:
            self._start(exchange, response)  # paced or held: it needs its task
            return
        try:
            lines = getattr(response, "head_lines", None)
            if lines is not None:
                exchange.whole(response.status_code, lines, response.body)
            else:
                exchange.reply(response.status_code, response.raw_headers, response.body)
        except Exception as exc:
            LOG.error("Exception in ASGI application\n", exc_info=exc)
            exchange.fail()

    def _upgrade(self, rest: bytes) -> None:
        """Hand the connection to the WebSocket protocol with the upgrade request (and
        whatever followed it), as uvicorn's HTTP protocols do."""
        head, self.upgrading = self.upgrading or b"", None
        self.state.connections.discard(self)
        self._stop_idle()
        protocol = self.ws_protocol(
            config=self.config, server_state=self.state, app_state=self.app_state
        )
        protocol.connection_made(self.transport)
        self.transport.set_protocol(protocol)
        protocol.data_received(head + rest)

    def _start(self, exchange: Exchange, app: Any) -> None:
        exchange.dispatched = True
        exchange.task = task = self.loop.create_task(exchange.run(app))
        tasks = self.state.tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def answered(self, exchange: Exchange) -> None:
        """``exchange``'s response is complete: close, or go on with the next request."""
        self.state.total_requests += 1
        if not exchange.keep_alive or self.transport.is_closing():
            self.transport.close()
            return
        self.active = None
        if self.queue:
            self.active = nxt = self.queue.popleft()
            self._dispatch(nxt)
        if not self.queue:
            self._resume_reading()
        if self.active is None and self.reading is None:
            self.idle_since = self.loop.time()
            if self.idle is None:  # one timer per connection, re-armed when it fires
                self.idle = self.loop.call_later(self.keep_alive_s, self._idle_timeout)

    def read_drained(self) -> None:
        if self.read_paused and not self.queue:
            self._resume_reading()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close when idle or when the request in progress
        has not reached the app yet (its body is still coming), else after its response."""
        active = self.active
        if active is None or active.complete or not active.dispatched:
            self.transport.close()
        else:
            active.keep_alive = False
            self.queue.clear()

    def _pause_reading(self) -> None:
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()

    def _stop_idle(self) -> None:
        if self.idle is not None:
            self.idle.cancel()
            self.idle = None

    def _idle_timeout(self) -> None:
        """Close a connection idle for the keep-alive timeout (busy: checked again once
        its response is sent; idle for less: the timer waits out the rest)."""
        self.idle = None
        since = self.idle_since
        if since is None:
            return
        left = since + self.keep_alive_s - self.loop.time()
        if left > 0:
            self.idle = self.loop.call_later(left, self._idle_timeout)
        elif not self.transport.is_closing():
            self.transport.close()


def _address(info: Any) -> tuple[str, int] | None:
    if isinstance(info, tuple) and len(info) >= 2:
        return (str(info[0]), int(info[1]))
    return None


def _protocol() -> type[asyncio.Protocol] | str:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "auto"
    return Http1


PROTOCOL: type[asyncio.Protocol] | str = _protocol()
"""What ``uvicorn.Config(http=...)`` gets: :class:`Http1`, or ``"auto"`` without httptools."""


def _ws() -> str:
    try:
        from uvicorn.protocols.websockets import websockets_sansio_impl  # noqa: F401
    except ImportError:
        return "none"
    return "websockets-sansio"


WS: str = _ws()
"""What ``uvicorn.Config(ws=...)`` gets: uvicorn's sans-I/O protocol on ``websockets``
(the OpenAI Responses WebSocket route), or ``"none"`` without it."""
