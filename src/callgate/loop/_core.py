"""The host tool loop: request -> stream -> strict parse -> gate -> ledger -> execute ->
continuation from the ledger's results -> repeat, durably (rules R1-R5 of docs/ledger.md).

Every step starts from what the ledger says about the run's last model request, so
:meth:`HostLoop.run` and :meth:`HostLoop.resume` are the same state machine: a process
killed anywhere picks up where the ledger stands, never re-running a tool to get a result
(R4) and never re-asking the model for a turn it recorded (R1). The named fault points
(``before_request_record`` ... ``after_continuation_identified``) go through the
ledger's fault hook; the crash matrix kills the process there.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from .._digest import canonical_digest
from .._errors import CallgateError, UsageError
from .._json import loads_strict
from ..ledger import (
    REQUEST_IN_DOUBT,
    ApprovalError,
    CallInput,
    EffectClass,
    EffectRecord,
    EffectState,
    LeaseKeeper,
    LeaseLostError,
    Ledger,
    RequestRecord,
    RequestState,
    RunBusyError,
    RunLease,
    TurnInput,
    waits_for,
)
from ._adapters import Adapter, Config, adapter_for
from ._failures import Failures, Got
from ._hosted import hosted_declarations
from ._model import LoopError, LoopResult, Send, ToolSpec, seconds, tool_specs
from ._threads import with_threads_beta
from ._wire import StreamFeed, TurnIdWatch, reparse

__all__ = ["MODEL_FAULT_POINTS", "Got", "LoopCore", "Outcome"]

# Where the crash matrix kills the host on the model side, in the order a run meets them.
MODEL_FAULT_POINTS = (
    "before_request_record",
    "after_request_record",
    "after_request_sent",
    "after_first_event",
    "before_turn_persist",
    "after_turn_persist",
    "after_continuation_record",
    "after_continuation_sent",
    "after_continuation_identified",
)
R = RequestState
# How requests reach the provider: HTTP (SSE), or one WebSocket per run (OpenAI Responses).
_TRANSPORTS = frozenset({"http", "websocket"})
_DONE = frozenset(
    {EffectState.COMMITTED, EffectState.FAILED, EffectState.REJECTED, EffectState.DELIVERED}
)


class LoopCore(Failures):
    """What the sync :class:`~callgate.loop.HostLoop` and the async loop share: the whole
    state machine except the model I/O (send a request, fetch a turn back)."""

    _retries = 0
    _sleep_for = 0.0
    _transport_kind = "http"

    def _make_transport(self, base_url: str, timeout: float, client: Any) -> Any:
        raise NotImplementedError

    def _start(self, run_id: str, request: Any) -> None:
        """Open the run and record its first request (nothing is sent yet)."""
        self._ledger.open_run(run_id, unresolved=self._unresolved)
        body = self._adapter.first(request, self._cfg)
        lease = self._acquire(run_id)
        try:
            self._record(run_id, lease, body, carries=None)
        finally:
            self._ledger.release_run(lease)

    def _step_budget(self) -> int:
        return 4 * self._max_turns + 2 * self._max_retries + 4

    def __init__(
        self,
        *,
        protocol: str,
        ledger: Ledger,
        tools: Sequence[ToolSpec],
        model: str,
        hosted_tools: Sequence[Mapping[str, Any]] | None = None,
        base_url: str | None = None,
        api_key: str = "",
        send: Send | None = None,
        store: bool = True,
        threads: bool = False,
        instructions: str | None = None,
        max_tokens: int = 1024,
        headers: Mapping[str, str] | None = None,
        client: Any = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_backoff: float = 0.25,
        max_turns: int = 16,
        worker_id: str = "host-loop",
        unresolved: str = "hold",
        provider_side_effects: bool = False,
        lease_seconds: float = 30.0,
        transport: str = "http",
    ) -> None:
        self._adapter: Adapter = adapter_for(protocol)
        if transport not in _TRANSPORTS:
            raise UsageError(f"transport must be one of {sorted(_TRANSPORTS)}")
        if transport != "http" and (protocol != "openai_responses" or base_url is None):
            raise UsageError(
                "transport='websocket' is OpenAI Responses' WebSocket mode: only for "
                "openai_responses, with base_url="
            )
        self._transport_kind = transport
        if not isinstance(ledger, Ledger):
            raise UsageError("ledger must be a callgate.ledger.Ledger")
        if (send is None) == (base_url is None):
            raise UsageError("give exactly one of base_url= (HTTP) and send= (your client)")
        if type(max_retries) is not int or max_retries < 0:
            raise UsageError("max_retries must be an int >= 0")
        if threads and protocol != "anthropic_messages":
            raise UsageError(
                "threads=True is Anthropic's message threads: only for anthropic_messages"
            )
        specs = tool_specs(tools)
        for spec in specs:
            ledger.register(spec.tool)
        self.protocol = protocol
        self._ledger = ledger
        self._send = send
        self._transport: Any = self._make_transport(base_url, timeout, client) if base_url else None
        auth = self._adapter.headers(api_key) if base_url else {}
        self._headers = {**auth, **dict(headers or {})}
        if threads:
            self._headers = with_threads_beta(self._headers)
        declared = self._adapter.declare(specs) + hosted_declarations(
            protocol, hosted_tools, (s.name for s in specs)
        )
        self._cfg = Config(model, declared, store, instructions, max_tokens, bool(threads))
        self._max_retries = max_retries
        self._backoff = retry_backoff
        self._max_turns = max_turns
        self._worker = worker_id
        self._unresolved = unresolved
        self._side_effects = bool(provider_side_effects)
        self._lease_seconds = seconds("lease_seconds", lease_seconds)
        self._keepers: dict[RunLease, LeaseKeeper] = {}

    def _plan(self, run_id: str, lease: RunLease) -> Outcome | _Do:
        """What the run's last request needs: an outcome, nothing more now (None), or a
        send or fetch (:class:`_Do`), the only steps that do model I/O."""
        requests = self._ledger.requests(run_id)
        req = requests[-1]
        if req.state is R.TURN_PERSISTED:
            seq = sum(1 for r in requests if r.state is R.TURN_PERSISTED)
            if seq > self._max_turns:
                raise LoopError(f"run {run_id!r} reached {self._max_turns} turns")
            return self._after_turn(run_id, lease, req, seq)
        if req.state is R.FAILED_DEFINITE:
            return self._result(run_id, "refused", detail=f"request {req.request_id} failed")
        if req.state in REQUEST_IN_DOUBT and req.provider_side_effects:
            return self._result(
                run_id,
                "held",
                detail=f"request {req.request_id} is {req.state.value} and declared "
                "provider-side effects: an operator decides (R5)",
            )
        if req.state is R.IDENTIFIED and self._retrievable(req):
            return _Do(req, fetch=True)
        if req.state in (R.IDENTIFIED, R.UNKNOWN):
            if req.state is R.IDENTIFIED:
                self._ledger.request_failed(
                    req.request_id,
                    definite=False,
                    reason="turn lost before it was persisted",
                    lease=lease,
                )
            self._record(run_id, lease, req.body, carries=req.carries_turn)  # re-send (R5)
            return None
        return _Do(req, fetch=False)

    def _open(self, run_id: str) -> RunLease | LoopResult:
        """Take the run lease for one ``run``/``resume`` and start renewing it; a run another
        worker advances right now is ``waiting`` (until its lease, named in ``detail``)."""
        try:
            lease = self._acquire(run_id)
        except RunBusyError as busy:
            return self._result(run_id, "waiting", detail=f"{busy}: resume after that")
        keeper = LeaseKeeper(self._ledger, lease, lease_seconds=self._lease_seconds)
        self._keepers[lease] = keeper.start()  # per lease: runs may overlap on one loop
        return lease

    def _close(self, lease: RunLease) -> None:
        keeper = self._keepers.pop(lease, None)
        if keeper is not None:
            keeper.stop()
        self._ledger.release_run(lease)  # fenced: a no-op once the lease is lost

    def _check(self, lease: RunLease) -> None:
        """Stop here if the lease keeper found the run taken by another worker."""
        keeper = self._keepers.get(lease)
        if keeper is not None:
            keeper.check()

    def _lost(self, run_id: str, lost: LeaseLostError) -> LoopResult:
        return self._result(run_id, "lease_lost", error=lost, detail=str(lost))

    def _land(self, run_id: str, lease: RunLease, req: RequestRecord, got: Got) -> Outcome:
        if got is None or isinstance(got, LoopResult):
            return got
        return self._persist(run_id, lease, req, *got)

    def _after_turn(
        self, run_id: str, lease: RunLease, req: RequestRecord, seq: int
    ) -> LoopResult | None:
        turn = reparse(self._adapter.room(), self._ledger.turn_snapshot(run_id, seq))
        if self._adapter.kind(turn) == "final":
            return self._result(run_id, "final", text=turn.text)
        for effect in self._turn_effects(run_id, seq):
            if (
                effect.state is EffectState.UNKNOWN
                and effect.effect_class is EffectClass.VERIFIABLE
            ):
                effect = self._ledger.verify(effect.effect_id)
            if effect.state is EffectState.READY:
                # An approval that lapsed moves it back to awaiting_approval: reported below.
                with contextlib.suppress(ApprovalError):
                    self._ledger.execute(
                        effect.effect_id,
                        worker_id=self._worker,
                        lease_seconds=self._lease_seconds,
                        keeper=self._keepers.get(lease),
                    )
        results = self._ledger.results(run_id, seq)
        if results is None:
            pending = tuple(e for e in self._turn_effects(run_id, seq) if e.state not in _DONE)
            detail = "; ".join(waits_for(e) for e in pending)
            return self._result(run_id, "waiting", pending=pending, detail=detail)
        body = self._adapter.next(turn, results, req.body, self._cfg)
        self._record(run_id, lease, body, carries=seq)
        return None

    def _persist(
        self, run_id: str, lease: RunLease, req: RequestRecord, turn: Any, snapshot: Any, tid: str
    ) -> LoopResult | None:
        try:
            self._adapter.kind(turn)
        except CallgateError as exc:
            return self._refuse(run_id, req, lease, exc)
        self._ledger.fault("before_turn_persist")
        calls = [CallInput(c.call_id, c.name, c.arguments) for c in turn.calls]
        self._ledger.record_turn(
            req.request_id,
            TurnInput(self.protocol, tid, turn.digest, snapshot, calls),
            lease=lease,
        )
        self._ledger.fault("after_turn_persist")
        return None

    def _record(
        self, run_id: str, lease: RunLease, body: dict[str, Any], *, carries: int | None
    ) -> None:
        point = "request" if carries is None else "continuation"
        self._ledger.fault(f"before_{point}_record")
        self._ledger.record_request(
            run_id,
            provider=self.protocol,
            request_digest=canonical_digest(body),
            body=body,
            carries_turn=carries,
            provider_side_effects=self._side_effects,
            lease=lease,
        )
        self._ledger.fault(f"after_{point}_record")

    def _feed(self, req: RequestRecord, lease: RunLease) -> StreamFeed:
        def found(turn_id: str) -> None:
            self._identify(req, lease, turn_id, _side(req))

        parser = self._adapter.parser(req.body)
        return StreamFeed(parser, TurnIdWatch(self._adapter.event_turn_id), found)

    def _finish(
        self, req: RequestRecord, lease: RunLease, feed: StreamFeed
    ) -> tuple[Any, Any, str]:
        snapshot = feed.snapshot()
        turn = feed.parser.finish()
        tid = feed.watch.turn_id or turn.id
        if tid is None:  # an unstored Gemini interaction has no id: a local one
            tid = f"local-{req.request_id[:24]}"
        if feed.watch.turn_id is None:
            self._identify(req, lease, tid, _side(req))
        return turn, snapshot, tid

    def _identify(self, req: RequestRecord, lease: RunLease, turn_id: str, point: str) -> None:
        self._check(lease)
        self._ledger.identify(req.request_id, turn_id, lease=lease)
        self._ledger.fault(
            "after_first_event" if point == "request" else f"after_{point}_identified"
        )

    def _retrievable(self, req: RequestRecord) -> bool:
        body = req.body if isinstance(req.body, Mapping) else {}
        return (
            self._transport is not None
            and self._adapter.retrieve is not None
            and body.get("store") is True
            and req.provider_turn_id is not None
        )

    def _fetched(self, req: RequestRecord, data: bytes, kind: str) -> tuple[Any, Any, str]:
        snapshot = {"body": loads_strict(data)} if kind == "body" else {"sse": data.decode()}
        return reparse(self._adapter.room(), snapshot), snapshot, req.provider_turn_id or ""

    def _turn_effects(self, run_id: str, seq: int) -> list[EffectRecord]:
        return [e for e in self._ledger.effects(run_id) if e.turn_seq == seq]

    def _result(
        self,
        run_id: str,
        status: str,
        *,
        text: str = "",
        pending: tuple[EffectRecord, ...] = (),
        error: CallgateError | None = None,
        detail: str = "",
    ) -> LoopResult:
        turns = sum(1 for r in self._ledger.requests(run_id) if r.state is R.TURN_PERSISTED)
        return LoopResult(
            status=status,
            text=text,
            turns=turns,
            effects=self._ledger.effects(run_id),
            pending=pending,
            error=error,
            detail=detail,
        )

    def _acquire(self, run_id: str) -> RunLease:
        return self._ledger.acquire_run(
            run_id, worker_id=self._worker, lease_seconds=self._lease_seconds
        )


Outcome = LoopResult | None


@dataclasses.dataclass(frozen=True, slots=True)
class _Do:
    """A step that needs model I/O: send ``req`` or fetch its stored turn back."""

    req: RequestRecord
    fetch: bool


def _side(req: RequestRecord) -> str:
    return "request" if req.carries_turn is None else "continuation"
