"""The loop's WebSocket transport for OpenAI Responses (``HostLoop(transport="websocket")``
and ``AsyncHostLoop(transport="websocket")``, the ``websocket`` extra: ``websockets``).

One socket per run (opened at the run's first request, closed when ``run``/``resume``
returns); each recorded request goes out as a ``response.create`` frame (without the
HTTP-only ``stream``) and the socket's frames go through the room's
:class:`~callgate.openai_responses.Connection` before the loop sees them: the transport
yields the current response's events, in order, up to its terminal, then stops. What the
socket says is mapped to what the loop already handles
(docs/contracts/openai-responses-websocket.md):

- an ``error`` event before any ``response.created`` (a request error: the HTTP status is
  on the event) is a :class:`~callgate.loop.ProviderHTTPError`, as the HTTP answer is;
- a socket that closes or times out mid-response, or cannot be opened, is a
  :class:`SocketDroppedError` (a connection-level failure: nothing of the cut response is
  released, and the loop reconciles by the HTTP rules: GET a stored response, or send the
  recorded request again on a new socket; the connection-local cache is gone with it);
- any protocol error of the connection refuses the turn, and the socket is dropped.

This module holds that mapping once, without I/O (:func:`socket_url`, :func:`create_frame`,
:func:`open_failed`, :class:`SocketFrames`), and the sync transport on ``websockets.sync``;
:mod:`callgate.loop._asocket` is the same on ``websockets.asyncio``. GETs of stored
responses go over HTTP (``httpx``), as the HTTP transport does them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator, Iterator
from typing import Any

from .._errors import UsageError
from .._json import loads_strict
from .._protocols import room
from ._model import ProviderHTTPError, SocketDroppedError
from ._transport import HTTPTransport, refusal

__all__ = [
    "SocketDroppedError",
    "SocketFrames",
    "WebSocketTransport",
    "create_frame",
    "open_failed",
    "socket_url",
    "websockets_client",
]

# Fields a response.create frame must not carry ("stream is implicit over WebSocket";
# background is not supported there).
_HTTP_ONLY = ("stream", "background")


def websockets_client(flavour: str) -> Any:
    """``websockets.sync.client`` or ``websockets.asyncio.client``."""
    try:
        if flavour == "sync":
            import websockets.sync.client as client
        else:
            import websockets.asyncio.client as client  # type: ignore[no-redef]
    except ImportError:  # pragma: no cover - the extra is missing
        raise UsageError(
            "the host loop's WebSocket transport needs: pip install 'callgate[websocket]'"
        ) from None
    return client


def socket_url(base_url: str, path: str) -> str:
    """``http(s)://host/v1`` + ``/responses`` -> ``ws(s)://host/v1/responses``."""
    return "ws" + base_url.removeprefix("http") + path


def connect_options(headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """What both clients are opened with: no compression, no message size limit (as the
    SDK opens its socket), the request headers on the upgrade."""
    return {
        "additional_headers": headers,
        "max_size": None,
        "compression": None,
        "open_timeout": timeout,
    }


def create_frame(body: dict[str, Any]) -> str:
    """The recorded request body as a ``response.create`` frame."""
    frame = {"type": "response.create"}
    frame.update((k, v) for k, v in body.items() if k not in _HTTP_ONLY)
    return json.dumps(frame, separators=(",", ":"))


def open_failed(url: str, exc: Exception) -> Exception:
    """What a failed connect means: the upgrade's HTTP answer is a refusal with its status
    (as over HTTP); anything else (refused, reset, DNS, timeout, a broken handshake) is a
    :class:`SocketDroppedError`."""
    if isinstance(exc, OSError):  # TimeoutError is an OSError
        return SocketDroppedError(f"the WebSocket to {url} could not be opened: {exc}")
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if type(status) is int:
        body = getattr(response, "body", b"") or b""
        return refusal(status, body.decode("utf-8", "replace"))
    return SocketDroppedError(f"the WebSocket handshake with {url} failed: {exc}")


def sent_failed(exc: Exception) -> SocketDroppedError:
    return SocketDroppedError(f"the WebSocket closed before the request: {exc}")


class SocketFrames:
    """One socket's frames, without I/O: the room's connection parser, and whether the
    socket can carry the next request (``sound``: the server answered the current one
    to its end, with a terminal event or a request error)."""

    def __init__(self) -> None:
        self._conn = room("openai_responses").Connection()
        self.sound = True

    def sending(self) -> None:
        """A request goes out: until its answer ends, the socket carries its frames."""
        self.sound = False

    def take(self, frame: str | bytes) -> tuple[dict[str, Any], bool]:
        """One frame: its event and whether it ended the response. A request error (an
        ``error`` event before any ``response.created``) raises its
        :class:`ProviderHTTPError`; a protocol error raises the parser's error."""
        ended = self._conn.feed_message(frame)
        event = loads_strict(frame)
        if ended:
            self.sound = True  # the server answered the request: the socket is sound
            if ended[0].response_id is None:
                raise _request_error(event)
        return event, bool(ended)

    def dropped(self, exc: BaseException) -> SocketDroppedError:
        """The socket closed or timed out mid-response: the connection parser's truncation
        rule is the cause (nothing of the running response is released)."""
        received = getattr(exc, "rcvd", None)
        code = getattr(received, "code", None)
        try:
            self._conn.close(code if type(code) is int else None)
        except Exception as cut:
            return SocketDroppedError(f"the WebSocket dropped mid-response: {cut}")
        return SocketDroppedError(f"the WebSocket dropped: {exc}")


class WebSocketTransport:
    """One ``websockets`` sync connection at a time to ``base_url`` (ws scheme) + path."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, client: Any = None) -> None:
        self._http = HTTPTransport(base_url, timeout=timeout, client=client)
        self._connect = websockets_client("sync").connect
        self.base_url = self._http.base_url
        self._timeout = timeout
        self._ws: Any = None
        self._frames = SocketFrames()

    def close(self) -> None:
        self.disconnect()
        self._http.close()

    def disconnect(self) -> None:
        """Close the socket, if one is open (the end of a run, or a dropped socket)."""
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.close()

    def get(self, path: str, headers: dict[str, str]) -> bytes:
        return self._http.get(path, headers)

    def _open(self, path: str, headers: dict[str, str]) -> None:
        url = socket_url(self.base_url, path)
        try:
            self._ws = self._connect(url, **connect_options(headers, self._timeout))
        except Exception as exc:
            raise open_failed(url, exc) from exc
        self._frames = SocketFrames()

    @contextlib.contextmanager
    def post_stream(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Iterator[Iterator[dict[str, Any]]]:
        """Send ``body`` as a ``response.create`` frame; the context yields the iterator
        of its response's events (dicts), which ends at the response's terminal."""
        if self._ws is None:
            self._open(path, headers)
        frames = self._frames
        frames.sending()
        try:
            try:
                self._ws.send(create_frame(body))
            except Exception as exc:
                raise sent_failed(exc) from exc
            events = self._events(frames)
            with contextlib.closing(events):
                yield events
        finally:
            # Anything but a whole answer (a protocol error, a drop, the loop stopping
            # mid-response) leaves frames unread: the socket cannot carry the next one.
            if not frames.sound:
                self.disconnect()

    def _events(self, frames: SocketFrames) -> Generator[dict[str, Any], None, None]:
        ws = self._ws
        while True:
            try:
                frame: str | bytes = ws.recv(timeout=self._timeout)
            except Exception as exc:  # ConnectionClosed, TimeoutError
                raise frames.dropped(exc) from exc
            event, ended = frames.take(frame)
            yield event
            if ended:
                return


def _request_error(event: dict[str, Any]) -> ProviderHTTPError:
    status = event.get("status")
    error = event.get("error")
    return refusal(
        status if type(status) is int else 400,
        json.dumps(error if isinstance(error, dict) else event),
    )
