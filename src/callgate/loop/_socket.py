"""The loop's WebSocket transport for OpenAI Responses (``HostLoop(transport="websocket")``,
the ``websocket`` extra: ``websockets``).

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

GETs of stored responses go over HTTP (``httpx``), as the HTTP transport does them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from .._errors import UsageError
from .._json import loads_strict
from .._protocols import room
from ._model import ProviderHTTPError, SocketDroppedError
from ._transport import HTTPTransport, refusal

__all__ = ["SocketDroppedError", "WebSocketTransport"]

# Fields a response.create frame must not carry ("stream is implicit over WebSocket";
# background is not supported there).
_HTTP_ONLY = ("stream", "background")


def _websockets() -> Any:
    try:
        from websockets.sync import client
    except ImportError:  # pragma: no cover - the extra is missing
        raise UsageError(
            "the host loop's WebSocket transport needs: pip install 'callgate[websocket]'"
        ) from None
    return client


class WebSocketTransport:
    """One ``websockets`` sync connection at a time to ``base_url`` (ws scheme) + path."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, client: Any = None) -> None:
        self._http = HTTPTransport(base_url, timeout=timeout, client=client)
        self._connect = _websockets().connect
        self.base_url = self._http.base_url
        self._timeout = timeout
        self._ws: Any = None
        self._conn: Any = None

    def close(self) -> None:
        self.disconnect()
        self._http.close()

    def disconnect(self) -> None:
        """Close the socket, if one is open (the end of a run, or a dropped socket)."""
        ws, self._ws, self._conn = self._ws, None, None
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.close()

    def get(self, path: str, headers: dict[str, str]) -> bytes:
        return self._http.get(path, headers)

    def _open(self, path: str, headers: dict[str, str]) -> None:
        url = "ws" + self.base_url.removeprefix("http") + path
        try:
            self._ws = self._connect(
                url,
                additional_headers=headers,
                max_size=None,
                compression=None,
                open_timeout=self._timeout,
            )
        except OSError as exc:  # refused, reset, DNS, timeout (TimeoutError is an OSError)
            raise SocketDroppedError(f"the WebSocket to {url} could not be opened: {exc}") from exc
        except Exception as exc:  # the upgrade's HTTP answer, or a broken handshake
            response = getattr(exc, "response", None)
            status = getattr(response, "status_code", None)
            if type(status) is int:
                body = getattr(response, "body", b"") or b""
                raise refusal(status, body.decode("utf-8", "replace")) from exc
            raise SocketDroppedError(f"the WebSocket handshake with {url} failed: {exc}") from exc
        self._conn = room("openai_responses").Connection()

    @contextlib.contextmanager
    def post_stream(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Iterator[Iterator[dict[str, Any]]]:
        """Send ``body`` as a ``response.create`` frame; the context yields the iterator
        of its response's events (dicts), which ends at the response's terminal."""
        if self._ws is None:
            self._open(path, headers)
        frame = {"type": "response.create"}
        frame.update((k, v) for k, v in body.items() if k not in _HTTP_ONLY)
        try:
            self._ws.send(json.dumps(frame, separators=(",", ":")))
        except Exception as exc:
            self.disconnect()
            raise SocketDroppedError(f"the WebSocket closed before the request: {exc}") from exc
        yield self._events()

    def _events(self) -> Iterator[dict[str, Any]]:
        ws, conn = self._ws, self._conn
        done = False
        try:
            while True:
                frame = self._recv(ws, conn)
                ended = conn.feed_message(frame)
                event = loads_strict(frame)
                if ended and ended[0].response_id is None:  # a request error: no response
                    done = True  # the socket is sound: the server answered the request
                    raise _request_error(event)
                yield event
                if ended:
                    done = True
                    return
        finally:
            # Anything else (a protocol error, a drop, the loop stopping mid-response)
            # leaves frames of this response unread: the socket cannot carry the next one.
            if not done:
                self.disconnect()

    def _recv(self, ws: Any, conn: Any) -> str | bytes:
        try:
            frame: str | bytes = ws.recv(timeout=self._timeout)
        except Exception as exc:  # ConnectionClosed, TimeoutError
            received = getattr(exc, "rcvd", None)
            code = getattr(received, "code", None)
            # The connection parser's truncation rule, kept as the cause: nothing of the
            # running response is released.
            try:
                conn.close(code if type(code) is int else None)
            except Exception as cut:
                raise SocketDroppedError(f"the WebSocket dropped mid-response: {cut}") from exc
            raise SocketDroppedError(f"the WebSocket dropped: {exc}") from exc
        return frame


def _request_error(event: dict[str, Any]) -> ProviderHTTPError:
    status = event.get("status")
    error = event.get("error")
    return refusal(
        status if type(status) is int else 400,
        json.dumps(error if isinstance(error, dict) else event),
    )
