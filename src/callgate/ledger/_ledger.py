"""The ledger: runs, model requests, turns and effects, each state change one transaction.

The loop drives it in this order (rules R1-R5 of docs/ledger.md)::

    req = ledger.record_request(run_id, provider=..., request_digest=..., body=...)
    ledger.mark_sent(req.request_id)                       # just before the bytes leave
    ledger.identify(req.request_id, provider_turn_id)      # first event naming the turn
    effects = ledger.record_turn(req.request_id, turn)     # R1: turn + one effect per call
    for effect in effects: ledger.execute(effect.effect_id, worker_id=...)
    results = ledger.results(run_id, turn_seq)             # None while anything is open
    next_req = ledger.record_request(..., carries_turn=turn_seq)   # identify() delivers them

Every state write goes through ``_transitions.move`` (one table per machine). The methods
here are thin: recording a turn's effects is ``_record``, an attempt (claim, settle)
``_attempts``, recovery (lose, recover, verify) ``_recovery``, a person's decisions
(approve, deny, resolve) ``_decisions``, the outbox ``_outbox``; each takes the
transaction or the store, never the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._errors import UsageError
from .._results import ToolResult
from . import _attempts, _decisions, _outbox, _record, _recovery
from ._decisions import DEFAULT_PENDING, Approval
from ._leases import LeaseKeeper
from ._model import (
    AuditEvent,
    Claim,
    EffectClass,
    EffectFailed,
    EffectRecord,
    EffectState,
    FencedError,
    RecoveryReport,
    RunLease,
    Tool,
    ToolContext,
    TurnInput,
)
from ._outbox import OutboxMessage
from ._record import UNKNOWN_OUTCOME
from ._requests import RunsAndRequests
from ._rows import EVENT_COLUMNS, event_from_row, load, one_effect, select_effects
from ._store import Store, Tx
from ._transitions import EffectEvent, move

__all__ = ["UNKNOWN_OUTCOME", "Ledger"]

FaultHook = Callable[[str], None]


def _no_fault(point: str) -> None:
    """The default fault hook: nothing happens at a fault point."""


class Ledger(RunsAndRequests):
    """A durable execution ledger over one store (see :func:`open_ledger`).

    Not thread-safe: use one ``Ledger`` per thread or process (they share the database).
    Every method raises :class:`LedgerError` subclasses for refused operations and
    :class:`UsageError` for bad arguments; the ledger stays usable after either.
    """

    def __init__(
        self,
        store: Store,
        *,
        tools: Iterable[Tool] = (),
        scope: str = "default",
        policy_version: str = "1",
        fault: FaultHook | None = None,
    ) -> None:
        if type(scope) is not str or not scope:
            raise UsageError("scope must be a non-empty str")
        self._store = store
        self.scope = scope
        self.policy_version = policy_version
        self._tools: dict[str, Tool] = {}
        self._fault = fault or _no_fault
        for tool in tools:
            self.register(tool)

    # -- plumbing -------------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        return self._store.dialect

    def transaction(self) -> Any:
        """A raw transaction on the store (for tests and tools that need one)."""
        return self._store.transaction()

    def reading(self) -> Any:
        """A read-only view of the store (no write lock)."""
        return self._store.read()

    def reopen(self) -> Ledger:
        """Another handle on the same database and scope, over a connection of its own
        (for another thread, e.g. a :class:`LeaseKeeper`'s). It has no tools and no fault
        hook; close it when done."""
        return Ledger(self._store.reopen(), scope=self.scope, policy_version=self.policy_version)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def register(self, tool: Tool) -> None:
        if not isinstance(tool, Tool):
            raise UsageError("register() takes a Tool")
        self._tools[tool.name] = tool

    def tool(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def fault(self, point: str) -> None:
        """Call the fault hook at a named point (the crash tests kill the process here)."""
        self._fault(point)

    # -- turns (R1) -----------------------------------------------------------------------

    def record_turn(
        self,
        request_id: str,
        turn: TurnInput,
        *,
        lease: RunLease | None = None,
        claim_as: str | None = None,
        lease_seconds: float = 30.0,
    ) -> tuple[EffectRecord, ...]:
        """Persist the terminal turn and one effect per released call, in one transaction.

        With ``claim_as`` (a worker id) the turn's ready effects are claimed in that same
        transaction, saving a commit per call; :meth:`held_claim` gives their claims.
        Re-recording the same turn returns the recorded effects (claiming nothing); the same
        provider turn id with another digest, or a call with other arguments, raises
        :class:`ConflictError`.
        """
        digests = _record.check_turn(turn)
        with self._store.transaction() as tx:
            req = self._request(tx, request_id, lock=True)
            self._check_lease(tx, req.run_id, lease)
            return _record.record_turn(
                tx,
                self.scope,
                self._tools,
                req,
                turn,
                digests,
                claim_as=claim_as,
                lease_seconds=lease_seconds,
            )

    def turn_snapshot(self, run_id: str, turn_seq: int) -> Any:
        with self._store.read() as tx:
            row = tx.one(
                "SELECT snapshot FROM ledger_turns WHERE scope = ? AND run_id = ? AND turn_seq = ?",
                (self.scope, run_id, turn_seq),
            )
        if row is None:
            raise UsageError(f"no turn {turn_seq} in run {run_id!r}")
        return load(row[0])

    # -- effects --------------------------------------------------------------------------

    def effect(self, effect_id: str) -> EffectRecord:
        with self._store.read() as tx:
            return one_effect(tx, effect_id)

    def effects(self, run_id: str) -> tuple[EffectRecord, ...]:
        """The run's effects in turn and call order."""
        with self._store.read() as tx:
            return tuple(
                select_effects(
                    tx,
                    "scope = ? AND run_id = ? ORDER BY turn_seq, position",
                    (self.scope, run_id),
                )
            )

    def transition(
        self,
        tx: Tx,
        effect: EffectRecord,
        event: str,
        *,
        actor: str,
        sets: dict[str, Any] | None = None,
        fence_epoch: int | None = None,
        detail: Any = None,
    ) -> EffectRecord | None:
        """Apply one table transition if the effect is still in ``effect.state`` (and, when
        ``fence_epoch`` is given, still at that epoch); audit it. None if it moved on."""
        fence = None if fence_epoch is None else {"epoch": fence_epoch}
        return move(
            tx, effect, EffectEvent(event), actor=actor, sets=sets, fence=fence, detail=detail
        )

    def claim(self, effect_id: str, *, worker_id: str, lease_seconds: float = 30.0) -> Claim | None:
        """Claim a ``ready`` effect for one attempt under a fenced lease; None if it is not
        ready (someone else claimed it, or it is settled). Consumes the approval in the same
        transaction when the tool needs one; raises :class:`ApprovalError` (and moves the
        effect back to ``awaiting_approval``) when none is valid."""
        return self._claim("effect_id = ?", (effect_id,), worker_id, lease_seconds)

    def claim_next(
        self, *, worker_id: str, run_id: str | None = None, lease_seconds: float = 30.0
    ) -> Claim | None:
        """Claim the oldest ready effect of the scope (or run), skipping locked rows."""
        where, params = "scope = ? AND state = 'ready'", [self.scope]
        if run_id is not None:
            where += " AND run_id = ?"
            params.append(run_id)
        inner = (
            f"effect_id = (SELECT effect_id FROM ledger_effects WHERE {where} "  # noqa: S608
            "ORDER BY created_at, turn_seq, position LIMIT 1 {skip_locked})"
        )
        return self._claim(inner, params, worker_id, lease_seconds)

    def _claim(self, where: str, params: Any, worker_id: str, lease_seconds: float) -> Claim | None:
        return _attempts.claim_where(
            self._store,
            where,
            params,
            worker_id,
            lease_seconds,
            tools=self._tools,
            policy_version=self.policy_version,
        )

    def held_claim(self, effect: EffectRecord) -> Claim:
        """The claim an ``executing`` record stands for (e.g. from ``record_turn(claim_as=)``).

        Raises :class:`UsageError` if the record is not executing under a lease."""
        if effect.state is not EffectState.EXECUTING or effect.lease_owner is None:
            raise UsageError(f"effect {effect.effect_id!r} is {effect.state.value}, not claimed")
        return Claim(
            effect_id=effect.effect_id,
            epoch=effect.epoch,
            attempt=effect.attempt,
            worker_id=effect.lease_owner,
            tool=effect.tool,
            arguments=effect.arguments,
            idempotency_token=effect.idempotency_token,
        )

    def heartbeat(self, claim: Claim, *, lease_seconds: float = 30.0) -> None:
        """Extend the claim's lease to ``lease_seconds`` from now (database clock); raises
        :class:`FencedError` if the claim is no longer current: settled, or recovered
        after its lease ran out (both move the epoch or the state). Like :meth:`settle`,
        fenced by the epoch: a lease that ran out while nobody recovered it is extended."""
        _attempts.heartbeat(self._store, claim, lease_seconds)

    def settle(
        self, claim: Claim, output: Any, *, is_error: bool = False, applied: bool = True
    ) -> EffectRecord:
        """Record the attempt's result, fenced by the claim's epoch: ``committed`` (the
        effect applied, ``output`` is what the model sees) or, with ``applied=False``,
        ``failed`` (definitely not applied; an error result). A fenced write is kept in
        ``late_results`` and raises :class:`FencedError`; nothing is overwritten.

        ``output`` is a str or JSON value, or a :class:`~callgate.ToolResult` / tuple of
        :class:`~callgate.TextPart` and :class:`~callgate.MediaPart` (a tool may return
        either): inline media are stored once per digest in the same transaction, and
        :meth:`results` gives them back byte for byte."""
        return _attempts.settle(
            self._store, claim, output, is_error=is_error, applied=applied, fault=self._fault
        )

    def late_results(self, effect_id: str) -> tuple[tuple[int, str, Any], ...]:
        """Results that arrived after their claim was fenced: (epoch, worker, result)."""
        with self._store.read() as tx:
            return _attempts.late_results(tx, effect_id)

    def execute(
        self,
        effect_id: str,
        *,
        worker_id: str,
        lease_seconds: float = 30.0,
        keeper: LeaseKeeper | None = None,
    ) -> EffectRecord:
        """Claim, run and settle one effect; return its record (unchanged if not ready).
        With ``keeper``, the claim's lease is renewed while the tool runs (a tool may then
        run longer than ``lease_seconds``; give the keeper the same ``lease_seconds``)."""
        current = self.effect(effect_id)
        tool = self._tools.get(current.tool)
        if tool is None:
            raise UsageError(f"tool {current.tool!r} is not registered on this ledger")
        claim = self.claim(effect_id, worker_id=worker_id, lease_seconds=lease_seconds)
        if claim is None:
            return self.effect(effect_id)
        if keeper is None:
            return self.run_claim(claim, tool)
        with keeper.holding(claim):
            return self.run_claim(claim, tool)

    def run_claim(self, claim: Claim, tool: Tool) -> EffectRecord:
        """Run one claimed attempt and settle it (see the effect classes in docs/ledger.md)."""
        self._fault("after_claim")
        ctx = ToolContext(claim.effect_id, claim.idempotency_token, claim.attempt, tool.name)
        if tool.effect is EffectClass.LOCAL_TX:
            return _outbox.run_local(self._store, claim, tool, ctx, self._fault)
        try:
            output = tool.run(claim.arguments, ctx)
        except EffectFailed as exc:
            return self._settle_quietly(claim, exc.output, applied=False)
        except Exception as exc:  # the effect may have applied: in doubt
            if tool.effect is EffectClass.READ:
                return self._settle_quietly(claim, f"error: {exc}", applied=False)
            with self._store.transaction() as tx:
                return _recovery.lose(tx, claim, detail=f"{type(exc).__name__}: {exc}")
        self._fault("after_return")
        record = self._settle_quietly(claim, output, applied=True)
        self._fault("after_commit")
        return record

    def _settle_quietly(self, claim: Claim, output: Any, *, applied: bool) -> EffectRecord:
        try:
            return self.settle(claim, output, is_error=not applied, applied=applied)
        except FencedError:
            return self.effect(claim.effect_id)

    # -- results and delivery (R4) --------------------------------------------------------

    def results(self, run_id: str, turn_seq: int) -> tuple[ToolResult, ...] | None:
        """The turn's results in call order, for the continuation; None while any effect is
        still open (or unresolved under the run's ``hold`` policy)."""
        with self._store.read() as tx:
            return _record.results(tx, self.scope, run_id, turn_seq)

    def audit(self, effect_id: str) -> tuple[AuditEvent, ...]:
        with self._store.read() as tx:
            rows = tx.rows(
                f"SELECT {EVENT_COLUMNS} FROM ledger_events WHERE effect_id = ? ORDER BY seq",  # noqa: S608
                (effect_id,),
            )
        return tuple(event_from_row(row) for row in rows)

    # -- a person's decisions (_decisions) ------------------------------------------------

    def approve(
        self,
        effect_id: str,
        *,
        actor: str,
        reason: str = "",
        expires_in: float = 3600.0,
        approval_id: str | None = None,
    ) -> EffectRecord:
        """Grant one single-use approval (bound to the effect's digests and the ledger's policy
        version) and move ``awaiting_approval`` -> ``ready``. Raises ConflictError otherwise."""
        with self._store.transaction() as tx:
            return _decisions.approve(
                tx,
                effect_id,
                actor=actor,
                reason=reason,
                expires_in=expires_in,
                approval_id=approval_id,
                policy_version=self.policy_version,
            )

    def deny(self, effect_id: str, *, actor: str, reason: str) -> EffectRecord:
        """Deny the call: ``rejected`` with an error result the model will see."""
        with self._store.transaction() as tx:
            return _decisions.deny(tx, effect_id, actor=actor, reason=reason)

    def approvals(self, effect_id: str) -> tuple[Approval, ...]:
        """(approval_id, actor, consumed_epoch or None, expired) per approval, oldest first."""
        with self._store.read() as tx:
            return _decisions.approvals(tx, effect_id)

    def resolve(
        self,
        effect_id: str,
        *,
        expected_version: int,
        decision_id: str,
        action: str,
        result: Any = None,
        reason: str,
        actor: str,
    ) -> EffectRecord:
        """An operator's decision on an ``unknown`` / ``needs_operator`` effect: ``commit``
        (it applied; ``result`` is what the model sees), ``fail`` (it did not; an error
        result) or ``retry`` (run it again; a new approval where the tool needs one).
        Idempotent per ``decision_id``; a stale ``expected_version`` or a reused id raises
        ConflictError."""
        _decisions.check_resolve(action, result)
        with self._store.transaction() as tx:
            return _decisions.resolve(
                tx,
                effect_id,
                expected_version=expected_version,
                decision_id=decision_id,
                action=action,
                result=result,
                reason=reason,
                actor=actor,
            )

    def pending(
        self,
        states: Iterable[EffectState | str] = DEFAULT_PENDING,
        *,
        run_id: str | None = None,
    ) -> tuple[EffectRecord, ...]:
        """Effects of the scope in ``states``; by default the ones that wait: for an
        approval, an operator, a verifier, or a worker's lease (``executing``: the record's
        ``lease_owner`` and ``lease_until`` say whose, and until when on the database clock).
        :func:`~callgate.ledger.waits_for` says it in words."""
        with self._store.read() as tx:
            return _decisions.pending(tx, self.scope, states, run_id)

    # -- recovery (_recovery) and the outbox (_outbox) ------------------------------------

    def verify(
        self, effect_id: str, *, worker_id: str = "verifier", lease_seconds: float = 30.0
    ) -> EffectRecord:
        """Ask a VERIFIABLE tool whether an ``unknown`` effect applied, and settle accordingly:
        Applied -> committed, NotApplied -> ready (or awaiting_approval), Inconclusive ->
        unknown, not asked again before its ``settle_seconds`` have passed. Returns the record
        unchanged when it is not ``unknown`` or not yet due."""
        effect = self.effect(effect_id)
        tool = self._tools.get(effect.tool)
        return _recovery.verify(
            self._store, effect, tool, worker_id=worker_id, lease_seconds=lease_seconds
        )

    def recover(self, worker_id: str) -> RecoveryReport:
        """Move expired leases to ``unknown`` and apply each class's policy; report the model
        requests left before ``turn_persisted`` (R5) and the runs that can be resumed."""
        with self._store.transaction() as tx:
            return _recovery.recover(tx, self.scope, worker_id)

    def relay(
        self,
        send: Callable[[OutboxMessage], None],
        *,
        worker_id: str,
        lease_seconds: float = 30.0,
        limit: int = 100,
    ) -> int:
        """Send up to ``limit`` pending outbox rows (and ones whose sending lease expired);
        return how many were sent. If ``send`` raises, the row goes back to pending and the
        exception propagates."""
        return _outbox.relay(
            self._store,
            send,
            worker_id=worker_id,
            lease_seconds=lease_seconds,
            limit=limit,
            fault=self._fault,
        )
