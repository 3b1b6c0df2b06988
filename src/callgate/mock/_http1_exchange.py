"""One request and its response on the mock's HTTP/1.1 connection (``mock._http1``): the
ASGI ``receive`` and ``send`` of one exchange, and the response head it writes.

A response's head waits for its first body message and leaves with it in one write; a
``call_soon`` sends it alone if no body follows in the same step (a held or paced stream
still shows its status at once). A whole response (:meth:`Exchange.reply`, or
:meth:`Exchange.whole` with prebuilt header lines) is one write.
"""

from __future__ import annotations

import asyncio
import http
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._http1 import Http1

__all__ = ["LOG", "Exchange", "header_bytes"]

LOG = logging.getLogger("uvicorn.error")
_DISCONNECT = {"type": "http.disconnect"}
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# RFC 9110 token characters: a header name made of anything else is refused.
_TOKEN = b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _status_line(code: int) -> bytes:
    try:
        phrase = http.HTTPStatus(code).phrase
    except ValueError:
        phrase = ""
    return f"HTTP/1.1 {code} {phrase}\r\n".encode("latin-1")


_STATUS = {code: _status_line(code) for code in range(100, 600)}
_SERVER_ERROR = (
    b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 21\r\nconnection: close\r\n\r\nInternal Server Error"
)


def header_bytes(headers: Any) -> bytes:
    """Response header lines; a name or value that could split the head is refused."""
    names = b"".join([name for name, _ in headers])
    values = b"".join([value for _, value in headers])
    if (
        names.translate(None, _TOKEN)
        or b"\r" in values
        or b"\n" in values
        or not all(name for name, _ in headers)
    ):
        raise RuntimeError(f"invalid HTTP response header among {[n for n, _ in headers]}")
    return b"".join([b"%b: %b\r\n" % pair for pair in headers])


class Exchange:
    """One request and its response on a connection: the ASGI ``receive`` and ``send``."""

    __slots__ = (
        "buffered",
        "chunked",
        "chunks",
        "complete",
        "conn",
        "continue_pending",
        "delivered",
        "disconnected",
        "dispatched",
        "head",
        "keep_alive",
        "more",
        "remaining",
        "scope",
        "small",
        "started",
        "task",
        "waiter",
    )

    def __init__(self, conn: Http1, scope: dict[str, Any], keep_alive: bool, expect: bool):
        self.conn = conn
        self.scope = scope
        self.keep_alive = keep_alive
        self.continue_pending = expect
        self.chunks: list[bytes] = []
        self.buffered = 0  # bytes in chunks
        self.more = True  # request body still arriving
        self.delivered = False  # the last body message was handed to the app
        self.disconnected = False
        self.started = False  # response head built
        self.complete = False  # response fully written
        self.head: bytes | None = None  # the head, until a body message takes it along
        self.chunked = False
        self.remaining = -1  # declared content-length left, -1 when undeclared
        self.small = False  # a small declared body: wait for it before dispatching
        self.dispatched = False  # handed to the app (directly or as an ASGI task)
        self.task: asyncio.Task[None] | None = None
        self.waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        self.waiter = self.conn.loop.create_future()
        await self.waiter
        self.waiter = None

    # -- ASGI ---------------------------------------------------------------------------------

    async def receive(self) -> dict[str, Any]:
        if self.continue_pending and self.more and not self.chunks:
            self.continue_pending = False
            if not self.started and not self.disconnected:
                self.conn.transport.write(_CONTINUE)
        while self.more and not self.chunks and not self.disconnected:
            await self._wait()
        if not self.disconnected and not self.delivered:
            body = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
            self.chunks.clear()
            self.buffered = 0
            self.delivered = not self.more
            self.conn.read_drained()
            return {"type": "http.request", "body": body, "more_body": self.more}
        while not (self.disconnected or self.complete):
            await self._wait()
        return _DISCONNECT

    async def send(self, message: dict[str, Any]) -> None:
        conn = self.conn
        if conn.write_paused and not self.disconnected:
            await conn.drain()
        if self.disconnected:
            return
        kind = message["type"]
        if not self.started:
            if kind != "http.response.start":
                raise RuntimeError(f"expected 'http.response.start', got {kind!r}")
            self._begin(message["status"], message.get("headers", ()))
            conn.loop.call_soon(self._flush_head)
            return
        if kind != "http.response.body" or self.complete:
            raise RuntimeError(f"unexpected ASGI message {kind!r} for this response")
        self._body(message.get("body", b""), message.get("more_body", False))

    def reply(self, status: int, headers: Any, body: bytes) -> None:
        """A whole response at once: one write."""
        self._begin(status, headers)
        self._body(body, False)

    def whole(self, status: int, lines: bytes, body: bytes) -> None:
        """A whole response whose header ``lines`` are prebuilt and checked (they declare
        its content-length and no connection option): one write."""
        self.started = True
        self.continue_pending = False
        extra = b"" if self.keep_alive else b"connection: close\r\n"
        if self.scope["method"] == "HEAD":
            body = b""
        self.complete = True
        conn = self.conn
        conn.transport.write(
            b"".join((_STATUS[status], conn.default_headers(), lines, extra, b"\r\n", body))
        )
        self.wake()
        conn.answered(self)

    def _body(self, body: bytes, more: bool) -> None:
        conn = self.conn
        if self.scope["method"] == "HEAD":
            body = b""
        elif self.chunked:
            body = (b"%x\r\n%b\r\n" % (len(body), body) if body else b"") + (
                b"" if more else b"0\r\n\r\n"
            )
        elif self.remaining >= 0:
            self.remaining -= len(body)
            if self.remaining < 0:
                raise RuntimeError("response content longer than its content-length")
            if not more and self.remaining:
                raise RuntimeError("response content shorter than its content-length")
        head, self.head = self.head, None
        data = body if head is None else head + body
        if data:
            conn.transport.write(data)
        if not more:
            self.complete = True
            self.wake()
            conn.answered(self)

    def _begin(self, status: int, headers: Any) -> None:
        self.started = True
        self.continue_pending = False
        method = self.scope["method"]
        declared = False
        close = False
        for name, value in headers:
            lower = name.lower()
            if lower == b"content-length":
                declared = True
                self.remaining = int(value)
            elif lower == b"transfer-encoding" and value.lower() == b"chunked":
                declared = self.chunked = True
            elif lower == b"connection" and b"close" in value.lower():
                close = True
        extra = b""
        if not declared and method != "HEAD" and status not in (204, 304):
            if self.scope["http_version"] == "1.0":
                self.keep_alive = False  # no chunking for 1.0: the close ends the body
            else:
                self.chunked = True
                extra = b"transfer-encoding: chunked\r\n"
        if close:
            self.keep_alive = False
        elif not self.keep_alive:
            extra += b"connection: close\r\n"
        if method == "HEAD":
            self.remaining = -1
        self.head = b"".join(
            (_STATUS[status], self.conn.default_headers(), header_bytes(headers), extra, b"\r\n")
        )

    def _flush_head(self) -> None:
        """A head still waiting for its body goes alone (a stream that holds or paces)."""
        head, self.head = self.head, None
        if head is not None and not self.disconnected:
            self.conn.transport.write(head)

    async def run(self, app: Any) -> None:
        try:
            await app(self.scope, self.receive, self.send)
        except asyncio.CancelledError:  # a shutdown cancelling open requests
            if not self.complete:
                self.conn.transport.close()
        except Exception as exc:
            LOG.error("Exception in ASGI application\n", exc_info=exc)
            self.fail()
        else:
            if not self.complete and not self.disconnected:
                LOG.error("ASGI callable returned without completing its response")
                self.fail()

    def fail(self) -> None:
        transport = self.conn.transport
        if not self.started and not self.disconnected:
            transport.write(_SERVER_ERROR)
        else:
            self._flush_head()
        self.complete = True
        transport.close()
