"""The asyncio host loop: the same state machine as :class:`~callgate.loop.HostLoop`, with
the model I/O awaited (``httpx.AsyncClient``, or an async ``send``).

The ledger and the tools still run inline: a ledger commit or a tool that blocks blocks
the event loop for that long (a SQLite commit with ``synchronous=FULL`` is one fsync).
For that reason the lease keeper is a thread here too, not a task: a task could not renew
the run lease or a tool's claim while a blocking tool holds the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any

from ..ledger import LeaseLostError, RequestRecord, RunLease
from ._asocket import AsyncWebSocketTransport
from ._core import Got, LoopCore, Outcome, _Do, _side
from ._model import LoopError, LoopResult
from ._transport import AsyncHTTPTransport

__all__ = ["AsyncHostLoop", "AsyncSend"]

# (request body, headers) -> an async iterable of SSE byte chunks or event objects (or an
# awaitable of one, as ``await client.responses.create(..., stream=True)`` gives).
AsyncSend = Callable[[dict[str, Any], dict[str, str]], Awaitable[Any] | AsyncIterable[Any]]


class AsyncHostLoop(LoopCore):
    """:class:`~callgate.loop.HostLoop` for asyncio: ``await loop.run(run_id, request)``,
    ``await loop.resume(run_id)``, ``async with``. Takes the same keywords; ``send`` is an
    :data:`AsyncSend` and ``client`` an ``httpx.AsyncClient``; ``transport="websocket"``
    is the sync loop's WebSocket mode on ``websockets.asyncio`` (one socket per
    ``run``/``resume``, see :mod:`callgate.loop._asocket`)."""

    def _make_transport(self, base_url: str, timeout: float, client: Any) -> Any:
        if self._transport_kind == "websocket":
            return AsyncWebSocketTransport(base_url, timeout=timeout, client=client)
        return AsyncHTTPTransport(base_url, timeout=timeout, client=client)

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    async def __aenter__(self) -> AsyncHostLoop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(self, run_id: str, request: Any) -> LoopResult:
        """As :meth:`HostLoop.run`."""
        if self._ledger.requests(run_id):
            return await self.resume(run_id)
        self._start(run_id, request)
        return await self._drive(run_id)

    async def resume(self, run_id: str) -> LoopResult:
        """As :meth:`HostLoop.resume`."""
        if not self._ledger.requests(run_id):
            raise LoopError(f"run {run_id!r} has no model request yet; call run()")
        self._ledger.recover(self._worker)
        return await self._drive(run_id)

    async def _drive(self, run_id: str) -> LoopResult:
        self._retries = 0
        lease = self._open(run_id)
        if isinstance(lease, LoopResult):
            return lease
        try:
            for _ in range(self._step_budget()):
                self._check(lease)
                outcome = await self._step(run_id, lease)
                if outcome is not None:
                    return outcome
                if self._sleep_for:
                    await asyncio.sleep(self._sleep_for)
                    self._sleep_for = 0.0
        except LeaseLostError as lost:
            return self._lost(run_id, lost)
        finally:
            self._close(lease)
            if isinstance(self._transport, AsyncWebSocketTransport):
                await self._transport.disconnect()  # one socket per run: its cache ends here
        raise LoopError(f"run {run_id!r} reached no final answer within {self._max_turns} turns")

    async def _step(self, run_id: str, lease: RunLease) -> Outcome:
        action = self._plan(run_id, lease)
        if not isinstance(action, _Do):
            return action
        if action.fetch:
            got = await self._fetch(action.req, lease)
        else:
            got = await self._post(action.req, lease)
        return self._land(run_id, lease, action.req, got)

    async def _post(self, req: RequestRecord, lease: RunLease) -> Got:
        self._ledger.mark_sent(req.request_id, lease=lease)
        try:
            return await self._stream(req, lease)
        except Exception as exc:
            return self._post_failed(req, lease, exc)

    async def _stream(self, req: RequestRecord, lease: RunLease) -> tuple[Any, Any, str]:
        feed = self._feed(req, lease)
        if self._transport is not None:
            path, payload = self._adapter.post(req.body)
            opened = self._transport.post_stream(path, payload, self._headers)
            async with opened as chunks:
                self._ledger.fault(f"after_{_side(req)}_sent")
                async for chunk in chunks:
                    self._check(lease)
                    feed.add(chunk)
        else:
            if self._send is None:  # pragma: no cover - the constructor requires one
                raise LoopError("no transport and no send()")
            items: Any = self._send(req.body, dict(self._headers))
            if inspect.isawaitable(items):
                items = await items
            self._ledger.fault(f"after_{_side(req)}_sent")
            async for item in items:
                self._check(lease)
                feed.add(item)
        return self._finish(req, lease, feed)

    async def _fetch(self, req: RequestRecord, lease: RunLease) -> Got:
        if self._transport is None or self._adapter.retrieve is None:  # pragma: no cover
            raise LoopError("the turn is not retrievable")
        path, kind = self._adapter.retrieve(req.provider_turn_id or "")
        try:
            return self._fetched(req, await self._transport.get(path, self._headers), kind)
        except Exception as exc:
            return self._fetch_failed(req, lease, exc)
