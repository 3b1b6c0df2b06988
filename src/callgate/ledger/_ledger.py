"""The ledger: runs, model requests, turns and effects, each state change one transaction.

The loop drives it in this order (rules R1-R5 of docs/ledger.md)::

    req = ledger.record_request(run_id, provider=..., request_digest=..., body=...)
    ledger.mark_sent(req.request_id)                       # just before the bytes leave
    ledger.identify(req.request_id, provider_turn_id)      # first event naming the turn
    effects = ledger.record_turn(req.request_id, turn)     # R1: turn + one effect per call
    for effect in effects: ledger.execute(effect.effect_id, worker_id=...)
    results = ledger.results(run_id, turn_seq)             # None while anything is open
    next_req = ledger.record_request(..., carries_turn=turn_seq)   # identify() delivers them

Operator and recovery functions (approve, deny, resolve, verify, pending, recover) live in
``_operator``; the outbox relay in ``_outbox``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._errors import UsageError
from .._results import ToolResult
from . import _operator, _outbox, _record
from ._leases import LeaseKeeper
from ._model import (
    SETTLED,
    UNRESOLVED,
    AuditEvent,
    Claim,
    ConflictError,
    EffectClass,
    EffectFailed,
    EffectRecord,
    EffectState,
    FencedError,
    RecoveryReport,
    RequestState,
    RunLease,
    Tool,
    ToolContext,
    TurnInput,
)
from ._requests import OPEN_REQUEST, RunsAndRequests
from ._rows import (
    EFFECT_COLUMNS,
    EVENT_COLUMNS,
    RawSQL,
    audit,
    dump,
    effect_from_row,
    event_from_row,
    load,
    model_output,
    result_json,
    select_effects,
)
from ._store import Store, Tx
from ._transitions import next_state

__all__ = ["UNKNOWN_OUTCOME", "Ledger"]

UNKNOWN_OUTCOME = "outcome unknown; do not retry this call"
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
            req = self._request(tx, request_id)
            tx.lock_run(self._run_key(req.run_id))
            self._check_lease(tx, req.run_id, lease)
            existing = tx.one(
                "SELECT turn_seq, turn_digest FROM ledger_turns "
                "WHERE scope = ? AND run_id = ? AND provider_turn_id = ?",
                (self.scope, req.run_id, turn.provider_turn_id),
            )
            if existing is not None:
                return self._same_turn(tx, req.run_id, int(existing[0]), existing[1], turn, digests)
            if req.state not in OPEN_REQUEST:
                raise ConflictError(f"request {request_id!r} is {req.state.value}")
            if req.provider_turn_id not in (None, turn.provider_turn_id):
                raise ConflictError(
                    f"request {request_id!r} was identified as {req.provider_turn_id!r}"
                )
            row = tx.one(
                "SELECT COALESCE(MAX(turn_seq), 0) FROM ledger_turns "
                "WHERE scope = ? AND run_id = ?",
                (self.scope, req.run_id),
            )
            turn_seq = int(row[0]) + 1 if row else 1
            tx.run(
                "INSERT INTO ledger_turns (scope, run_id, turn_seq, request_id, provider, "
                "provider_turn_id, turn_digest, snapshot, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, {now})",
                (
                    self.scope,
                    req.run_id,
                    turn_seq,
                    request_id,
                    turn.provider,
                    turn.provider_turn_id,
                    turn.digest,
                    dump(turn.snapshot),
                ),
            )
            self._move_request(
                tx,
                req,
                RequestState.TURN_PERSISTED,
                "record_turn",
                provider_turn_id=turn.provider_turn_id,
            )
            if req.carries_turn is not None:  # a turn answering it: the provider accepted it
                self._deliver(tx, req.run_id, req.carries_turn, request_id)
            _record.insert_effects(self, tx, req.run_id, turn_seq, turn, digests)
            if claim_as is not None:
                _record.claim_turn(self, tx, req.run_id, turn_seq, claim_as, lease_seconds)
            return tuple(
                select_effects(
                    tx,
                    "scope = ? AND run_id = ? AND turn_seq = ? ORDER BY position",
                    (self.scope, req.run_id, turn_seq),
                )
            )

    def _same_turn(
        self, tx: Tx, run_id: str, turn_seq: int, digest: str, turn: TurnInput, digests: list[str]
    ) -> tuple[EffectRecord, ...]:
        if digest != turn.digest:
            raise ConflictError(
                f"provider turn {turn.provider_turn_id!r} is recorded with another digest"
            )
        effects = select_effects(
            tx,
            "scope = ? AND run_id = ? AND turn_seq = ? ORDER BY position",
            (self.scope, run_id, turn_seq),
        )
        recorded = [(e.call_id, e.args_digest) for e in effects]
        offered = [(c.call_id, d) for c, d in zip(turn.calls, digests, strict=True)]
        if recorded != offered:
            raise ConflictError(
                f"provider turn {turn.provider_turn_id!r} is recorded with other calls/arguments"
            )
        return tuple(effects)

    def turn_snapshot(self, run_id: str, turn_seq: int) -> Any:
        with self._store.read() as tx:
            row = tx.one(
                "SELECT snapshot FROM ledger_turns WHERE scope = ? AND run_id = ? AND turn_seq = ?",
                (self.scope, run_id, turn_seq),
            )
        if row is None:
            raise UsageError(f"no turn {turn_seq} in run {run_id!r}")
        return _load_text(row[0])

    # -- effects --------------------------------------------------------------------------

    def effect(self, effect_id: str) -> EffectRecord:
        with self._store.read() as tx:
            return self._effect(tx, effect_id)

    def _effect(self, tx: Tx, effect_id: str) -> EffectRecord:
        found = select_effects(tx, "effect_id = ?", (effect_id,))
        if not found:
            raise UsageError(f"no effect {effect_id!r}")
        return found[0]

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
        target = next_state(effect.state, event)
        sets = sets or {}
        assignments = "".join(f", {column} = {value}" for column, value in _sql_sets(sets))
        params: list[Any] = [target.value, *_params(sets), effect.effect_id, effect.state.value]
        fence = ""
        if fence_epoch is not None:
            fence = " AND epoch = ?"
            params.append(fence_epoch)
        row = tx.one(
            f"UPDATE ledger_effects SET state = ?, version = version + 1, "  # noqa: S608
            f"updated_at = {{now}}{assignments} WHERE effect_id = ? AND state = ?{fence} "
            f"RETURNING {EFFECT_COLUMNS}",
            params,
        )
        if row is None:
            return None
        moved = effect_from_row(row)
        audit(
            tx,
            scope=moved.scope,
            run_id=moved.run_id,
            effect_id=moved.effect_id,
            from_state=effect.state.value,
            to_state=target.value,
            event=event,
            actor=actor,
            epoch=moved.epoch,
            detail=detail,
        )
        return moved

    def claim(self, effect_id: str, *, worker_id: str, lease_seconds: float = 30.0) -> Claim | None:
        """Claim a ``ready`` effect for one attempt under a fenced lease; None if it is not
        ready (someone else claimed it, or it is settled). Consumes the approval in the same
        transaction when the tool needs one; raises :class:`ApprovalError` (and moves the
        effect back to ``awaiting_approval``) when none is valid."""
        return _record.claim_where(self, "effect_id = ?", (effect_id,), worker_id, lease_seconds)

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
        return _record.claim_where(self, inner, params, worker_id, lease_seconds)

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
        with self._store.transaction() as tx:
            row = tx.one(
                "UPDATE ledger_effects SET lease_until = {now} + ? WHERE effect_id = ? "
                "AND state = 'executing' AND epoch = ? RETURNING epoch",
                (lease_seconds, claim.effect_id, claim.epoch),
            )
        if row is None:
            raise FencedError(f"claim epoch {claim.epoch} of {claim.effect_id!r} is fenced")

    def settle(
        self, claim: Claim, output: Any, *, is_error: bool = False, applied: bool = True
    ) -> EffectRecord:
        """Record the attempt's result, fenced by the claim's epoch: ``committed`` (the
        effect applied, ``output`` is what the model sees) or, with ``applied=False``,
        ``failed`` (definitely not applied; an error result). A fenced write is kept in
        ``late_results`` and raises :class:`FencedError`; nothing is overwritten."""
        event = "commit" if applied else "fail"
        text = result_json(model_output(output), is_error or not applied)
        with self._store.transaction() as tx:
            moved = self._settle_tx(tx, claim, event, text)
            if moved is not None:
                return moved
            tx.run(
                "INSERT INTO ledger_late_results (effect_id, epoch, worker_id, result, at) "
                "VALUES (?, ?, ?, ?, {now})",
                (claim.effect_id, claim.epoch, claim.worker_id, text),
            )
        raise FencedError(f"claim epoch {claim.epoch} of {claim.effect_id!r} is fenced")

    def _settle_tx(self, tx: Tx, claim: Claim, event: str, text: str) -> EffectRecord | None:
        current = self._effect(tx, claim.effect_id)
        if current.state is not EffectState.EXECUTING or current.epoch != claim.epoch:
            return None
        return self.transition(
            tx,
            current,
            event,
            actor=claim.worker_id,
            fence_epoch=claim.epoch,
            sets={"result": text, "lease_owner": None, "lease_until": None},
        )

    def late_results(self, effect_id: str) -> tuple[tuple[int, str, Any], ...]:
        """Results that arrived after their claim was fenced: (epoch, worker, result)."""
        with self._store.read() as tx:
            rows = tx.rows(
                "SELECT epoch, worker_id, result FROM ledger_late_results "
                "WHERE effect_id = ? ORDER BY seq",
                (effect_id,),
            )
        return tuple((int(r[0]), r[1], _load_text(r[2])) for r in rows)

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
            return _outbox.run_local(self, claim, tool, ctx)
        try:
            output = tool.run(claim.arguments, ctx)
        except EffectFailed as exc:
            return self._settle_quietly(claim, exc.output, applied=False)
        except Exception as exc:  # the effect may have applied: in doubt
            if tool.effect is EffectClass.READ:
                return self._settle_quietly(claim, f"error: {exc}", applied=False)
            return _operator.lose(self, claim, detail=f"{type(exc).__name__}: {exc}")
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
            row = tx.one(
                "SELECT unresolved FROM ledger_runs WHERE scope = ? AND run_id = ?",
                (self.scope, run_id),
            )
            effects = select_effects(
                tx,
                "scope = ? AND run_id = ? AND turn_seq = ? ORDER BY position",
                (self.scope, run_id, turn_seq),
            )
        report = row is not None and row[0] == "report"
        out: list[ToolResult] = []
        for effect in effects:
            if (effect.state in SETTLED or effect.state is EffectState.DELIVERED) and effect.result:
                out.append(effect.result)
            elif report and effect.state in UNRESOLVED:
                out.append(ToolResult(effect.call_id, UNKNOWN_OUTCOME, is_error=True))
            else:
                return None
        return tuple(out)

    def _deliver(self, tx: Tx, run_id: str, turn_seq: int, request_id: str) -> None:
        for effect in select_effects(
            tx,
            "scope = ? AND run_id = ? AND turn_seq = ? ORDER BY position",
            (self.scope, run_id, turn_seq),
        ):
            if effect.state in SETTLED:
                self.transition(
                    tx, effect, "deliver", actor="ledger", sets={"delivered_request_id": request_id}
                )

    def audit(self, effect_id: str) -> tuple[AuditEvent, ...]:
        with self._store.read() as tx:
            rows = tx.rows(
                f"SELECT {EVENT_COLUMNS} FROM ledger_events WHERE effect_id = ? ORDER BY seq",  # noqa: S608
                (effect_id,),
            )
        return tuple(event_from_row(row) for row in rows)

    # -- operator and recovery (delegated) ------------------------------------------------

    approve = _operator.approve
    deny = _operator.deny
    resolve = _operator.resolve
    verify = _operator.verify
    pending = _operator.pending
    approvals = _operator.approvals

    def recover(self, worker_id: str) -> RecoveryReport:
        return _operator.recover(self, worker_id)

    relay = _outbox.relay


def _load_text(text: str) -> Any:
    return load(text)


def _sql_sets(sets: dict[str, Any]) -> list[tuple[str, str]]:
    """``column = value`` pairs; a :class:`RawSQL` value is inlined (e.g. ``epoch + 1``)."""
    return [(k, v.sql if isinstance(v, RawSQL) else "?") for k, v in sets.items()]


def _params(sets: dict[str, Any]) -> list[Any]:
    return [v for v in sets.values() if not isinstance(v, RawSQL)]
