"""The synchronous host loop (see :mod:`callgate.loop._core` for the state machine)."""

from __future__ import annotations

import time
from typing import Any

from ..ledger import LeaseLostError, RequestRecord, RunLease
from ._core import LoopCore, Outcome, _Do, _side
from ._model import LoopError, LoopResult
from ._socket import WebSocketTransport
from ._transport import HTTPTransport

__all__ = ["HostLoop"]


class HostLoop(LoopCore):
    """Drive one protocol's tool loop over a :class:`~callgate.ledger.Ledger`.

    ``protocol`` is a room name (``openai_responses``, ``anthropic_messages``,
    ``gemini_interactions``, ``gemini_generate_content``: stateless, the model in the
    path; ``openai_chat_completions``: stateless, the whole history replayed);
    ``store`` picks stateful (``previous_*_id``) or stateless (full replay,
    ``store: false``) continuations where the protocol has both;
    ``threads=True`` makes Anthropic continue in a server-held message thread (beta
    ``message-threads-2026-08-12``; a lost thread is replayed in a new one: see
    :mod:`callgate.loop._threads`), where the default replays the history. The bytes
    go over ``httpx`` to ``base_url`` with ``api_key``, or through ``send(body, headers)``
    (your own client, e.g. an official SDK; see :mod:`callgate.loop.sdk`). ``headers`` are
    added to every request. ``max_retries`` is the loop's whole retry budget per ``run``/``resume``
    (HTTP 408/409/429/5xx and connection failures before any event); give SDK clients
    ``max_retries=0`` so their retries never multiply it. ``provider_side_effects=True``
    declares that the requests carry provider-executed tools with side effects: a request
    in doubt is then held for an operator instead of re-sent (R5). ``hosted_tools`` are
    provider-native declarations of hosted tools (``{"type": "web_search"}``, ...) sent
    after the function tools; the provider runs them, their calls never reach the ledger,
    and continuations replay what they produced (see :mod:`callgate.loop._hosted`).
    ``unresolved`` is the run's policy for an unresolved effect (``hold`` or ``report``).
    ``lease_seconds`` is the lease on the run and on each tool attempt; a keeper thread
    renews both every third of it while the model or a tool takes its time
    (:class:`~callgate.ledger.LeaseKeeper`), so neither has to be faster than the lease.
    ``transport="websocket"`` (OpenAI Responses, with ``base_url``; the ``websocket``
    extra) sends each request as a ``response.create`` frame on one socket per
    ``run``/``resume``, through the room's connection parser; a dropped socket is
    reconciled by the HTTP rules (see :mod:`callgate.loop._socket`).
    """

    def _make_transport(self, base_url: str, timeout: float, client: Any) -> Any:
        if self._transport_kind == "websocket":
            return WebSocketTransport(base_url, timeout=timeout, client=client)
        return HTTPTransport(base_url, timeout=timeout, client=client)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def __enter__(self) -> HostLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, run_id: str, request: Any) -> LoopResult:
        """Start the run with ``request`` (the user's text, or a mapping of the protocol's
        request fields such as ``input``/``messages``) and drive it to a final answer, a
        refusal, or a wait for a decision. A run the ledger already knows is resumed.

        The run lease (and a running tool's claim) is renewed from a thread while the
        model or a tool takes its time; a lease another worker took is the result
        ``lease_lost``, never an exception (see :class:`LoopResult`)."""
        if self._ledger.requests(run_id):
            return self.resume(run_id)
        self._start(run_id, request)
        return self._drive(run_id)

    def resume(self, run_id: str) -> LoopResult:
        """Go on from what the ledger recorded (after a restart, a decision or an approval):
        expired attempts become ``unknown`` (recover), verifiers are asked, ready effects
        run, and the model side is reconciled by R5 before anything is sent again."""
        if not self._ledger.requests(run_id):
            raise LoopError(f"run {run_id!r} has no model request yet; call run()")
        self._ledger.recover(self._worker)
        return self._drive(run_id)

    def _drive(self, run_id: str) -> LoopResult:
        self._retries = 0
        lease = self._open(run_id)
        if isinstance(lease, LoopResult):
            return lease
        try:
            for _ in range(self._step_budget()):
                self._check(lease)
                outcome = self._step(run_id, lease)
                if outcome is not None:
                    return outcome
                if self._sleep_for:
                    time.sleep(self._sleep_for)
                    self._sleep_for = 0.0
        except LeaseLostError as lost:
            return self._lost(run_id, lost)
        finally:
            self._close(lease)
            if isinstance(self._transport, WebSocketTransport):
                self._transport.disconnect()  # one socket per run: its cache ends here
        raise LoopError(f"run {run_id!r} reached no final answer within {self._max_turns} turns")

    def _step(self, run_id: str, lease: RunLease) -> Outcome:
        action = self._plan(run_id, lease)
        if not isinstance(action, _Do):
            return action
        got = self._fetch(action.req, lease) if action.fetch else self._post(action.req, lease)
        return self._land(run_id, lease, action.req, got)

    def _post(
        self, req: RequestRecord, lease: RunLease
    ) -> tuple[Any, Any, str] | LoopResult | None:
        """Send the recorded request once; None: the next step goes on from the ledger."""
        self._ledger.mark_sent(req.request_id, lease=lease)
        try:
            return self._stream(req, lease)
        except Exception as exc:
            return self._post_failed(req, lease, exc)

    def _stream(self, req: RequestRecord, lease: RunLease) -> tuple[Any, Any, str]:
        feed = self._feed(req, lease)
        if self._transport is not None:
            path, payload = self._adapter.post(req.body)
            with self._transport.post_stream(path, payload, self._headers) as it:
                self._ledger.fault(f"after_{_side(req)}_sent")
                for chunk in it:
                    self._check(lease)
                    feed.add(chunk)
        else:
            if self._send is None:  # pragma: no cover - the constructor requires one
                raise LoopError("no transport and no send()")
            items = self._send(req.body, dict(self._headers))
            self._ledger.fault(f"after_{_side(req)}_sent")
            for item in items:
                self._check(lease)
                feed.add(item)
        return self._finish(req, lease, feed)

    def _fetch(
        self, req: RequestRecord, lease: RunLease
    ) -> tuple[Any, Any, str] | LoopResult | None:
        """R5: the provider stored the turn: GET it back instead of asking again."""
        if self._transport is None or self._adapter.retrieve is None:  # pragma: no cover
            raise LoopError("the turn is not retrievable")
        path, kind = self._adapter.retrieve(req.provider_turn_id or "")
        try:
            return self._fetched(req, self._transport.get(path, self._headers), kind)
        except Exception as exc:
            return self._fetch_failed(req, lease, exc)
