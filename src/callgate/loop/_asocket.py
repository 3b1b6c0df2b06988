"""The loop's WebSocket transport for asyncio (``AsyncHostLoop(transport="websocket")``):
:class:`~callgate.loop._socket.WebSocketTransport` on ``websockets.asyncio``. The frames,
the request errors, the drops and what they mean are the sync transport's
(:class:`~callgate.loop._socket.SocketFrames`); only the awaiting is this module's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ._socket import (
    SocketFrames,
    connect_options,
    create_frame,
    open_failed,
    sent_failed,
    socket_url,
    websockets_client,
)
from ._transport import AsyncHTTPTransport

__all__ = ["AsyncWebSocketTransport"]


class AsyncWebSocketTransport:
    """One ``websockets`` asyncio connection at a time to ``base_url`` (ws scheme) + path."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, client: Any = None) -> None:
        self._http = AsyncHTTPTransport(base_url, timeout=timeout, client=client)
        self._connect = websockets_client("asyncio").connect
        self.base_url = self._http.base_url
        self._timeout = timeout
        self._ws: Any = None
        self._frames = SocketFrames()

    async def aclose(self) -> None:
        await self.disconnect()
        await self._http.aclose()

    async def disconnect(self) -> None:
        """Close the socket, if one is open (the end of a run, or a dropped socket)."""
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()

    async def get(self, path: str, headers: dict[str, str]) -> bytes:
        return await self._http.get(path, headers)

    async def _open(self, path: str, headers: dict[str, str]) -> None:
        url = socket_url(self.base_url, path)
        try:
            self._ws = await self._connect(url, **connect_options(headers, self._timeout))
        except Exception as exc:
            raise open_failed(url, exc) from exc
        self._frames = SocketFrames()

    @contextlib.asynccontextmanager
    async def post_stream(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """As the sync transport's: the context yields the response's events."""
        if self._ws is None:
            await self._open(path, headers)
        frames = self._frames
        frames.sending()
        try:
            try:
                await self._ws.send(create_frame(body))
            except Exception as exc:
                raise sent_failed(exc) from exc
            events = self._events(frames)
            try:
                yield events
            finally:
                await events.aclose()
        finally:
            if not frames.sound:  # frames left unread: the socket cannot carry the next
                await self.disconnect()

    async def _events(self, frames: SocketFrames) -> AsyncGenerator[dict[str, Any], None]:
        ws = self._ws
        while True:
            try:
                frame: str | bytes = await asyncio.wait_for(ws.recv(), self._timeout)
            except Exception as exc:  # ConnectionClosed, TimeoutError
                raise frames.dropped(exc) from exc
            event, ended = frames.take(frame)
            yield event
            if ended:
                return
