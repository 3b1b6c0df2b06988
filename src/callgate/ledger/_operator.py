"""Decisions about effects: approvals, verification, operator resolution and recovery.

R2 lives here: an expired lease or a lost attempt moves an effect to ``unknown``; only its
class (``read``, ``idempotent_remote``, ``local_tx``), a verifier, or an operator's
decision lets it run again. R3 too: approvals are bound to the argument, turn and tool
digests and the ledger's policy version, expire, and are consumed by the claim.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._errors import UsageError
from ._model import (
    UNRESOLVED,
    Applied,
    Claim,
    ConflictError,
    EffectClass,
    EffectRecord,
    EffectState,
    Inconclusive,
    NotApplied,
    RecoveryReport,
    ToolContext,
)
from ._rows import REQUEST_COLUMNS, RawSQL, request_from_row, result_json, select_effects
from ._store import Tx

if TYPE_CHECKING:
    from ._ledger import Ledger

__all__ = ["approvals", "approve", "deny", "lose", "pending", "recover", "resolve", "verify"]

_RETRY_CLASSES = frozenset({EffectClass.READ, EffectClass.IDEMPOTENT_REMOTE, EffectClass.LOCAL_TX})
_RELEASE = {"lease_owner": None, "lease_until": None, "epoch": RawSQL("epoch + 1")}
# What waits for a decision or for a lease to run out: a live worker's claim is listed
# too, so the operator sees what a resuming loop sees (it waits for that lease).
DEFAULT_PENDING = (
    EffectState.AWAITING_APPROVAL,
    EffectState.EXECUTING,
    EffectState.UNKNOWN,
    EffectState.VERIFYING,
    EffectState.NEEDS_OPERATOR,
)


def _needs_approval(tx: Tx, effect_id: str) -> bool:
    row = tx.one("SELECT requires_approval FROM ledger_effects WHERE effect_id = ?", (effect_id,))
    return bool(row and row[0])


def _apply_class(ledger: Ledger, tx: Tx, effect: EffectRecord) -> EffectRecord:
    """What an ``unknown`` effect's class allows without a human (R2)."""
    if effect.effect_class in _RETRY_CLASSES:
        event = "retry_needs_approval" if _needs_approval(tx, effect.effect_id) else "retry"
    elif effect.effect_class is EffectClass.AT_MOST_ONCE:
        event = "escalate"
    else:
        return effect  # verifiable: waits for verify()
    moved = ledger.transition(
        tx, effect, event, actor="policy", detail={"class": effect.effect_class.value}
    )
    return moved or effect


def lose(ledger: Ledger, claim: Claim, *, detail: str) -> EffectRecord:
    """The attempt's outcome is lost (the tool raised mid-effect): executing -> unknown,
    then the class policy. Fenced: a stale claim changes nothing."""
    with ledger.transaction() as tx:
        current = ledger._effect(tx, claim.effect_id)
        if current.state is not EffectState.EXECUTING or current.epoch != claim.epoch:
            return current
        moved = ledger.transition(
            tx,
            current,
            "lose",
            actor=claim.worker_id,
            sets=_RELEASE,
            fence_epoch=claim.epoch,
            detail={"error": detail},
        )
        return _apply_class(ledger, tx, moved) if moved else current


def approve(
    ledger: Ledger,
    effect_id: str,
    *,
    actor: str,
    reason: str = "",
    expires_in: float = 3600.0,
    approval_id: str | None = None,
) -> EffectRecord:
    """Grant one single-use approval (bound to the effect's digests and the ledger's policy
    version) and move ``awaiting_approval`` -> ``ready``. Raises ConflictError otherwise."""
    approval_id = approval_id or uuid.uuid4().hex
    with ledger.transaction() as tx:
        effect = ledger._effect(tx, effect_id)
        row = tx.one(
            "SELECT tool_digest, turn_digest FROM ledger_effects WHERE effect_id = ?",
            (effect_id,),
        )
        if effect.state is not EffectState.AWAITING_APPROVAL or row is None:
            raise ConflictError(f"effect {effect_id!r} is {effect.state.value}, not awaiting")
        tx.run(
            "INSERT INTO ledger_approvals (approval_id, effect_id, args_digest, turn_digest, "
            "tool_digest, policy_version, expires_at, actor, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, {now} + ?, ?, ?, {now})",
            (
                approval_id,
                effect_id,
                effect.args_digest,
                row[1],
                row[0],
                ledger.policy_version,
                expires_in,
                actor,
                reason,
            ),
        )
        moved = ledger.transition(
            tx,
            effect,
            "approve",
            actor=actor,
            detail={"approval_id": approval_id, "reason": reason},
        )
    return moved or ledger.effect(effect_id)


def deny(ledger: Ledger, effect_id: str, *, actor: str, reason: str) -> EffectRecord:
    """Deny the call: ``rejected`` with an error result the model will see."""
    text = result_json(f"the operator denied this call: {reason}", True)
    with ledger.transaction() as tx:
        effect = ledger._effect(tx, effect_id)
        if effect.state is not EffectState.AWAITING_APPROVAL:
            raise ConflictError(f"effect {effect_id!r} is {effect.state.value}, not awaiting")
        moved = ledger.transition(
            tx, effect, "deny", actor=actor, sets={"result": text}, detail={"reason": reason}
        )
    return moved or ledger.effect(effect_id)


def approvals(ledger: Ledger, effect_id: str) -> tuple[tuple[Any, ...], ...]:
    """(approval_id, actor, consumed_epoch or None, expired) per approval, oldest first."""
    with ledger.reading() as tx:
        rows = tx.rows(
            "SELECT approval_id, actor, consumed_epoch, expires_at <= {now} "
            "FROM ledger_approvals WHERE effect_id = ? ORDER BY created_at, approval_id",
            (effect_id,),
        )
    return tuple((r[0], r[1], r[2], bool(r[3])) for r in rows)


_RESOLVE_EVENTS = {"commit": "resolve_commit", "fail": "resolve_fail", "retry": "resolve_retry"}


def resolve(
    ledger: Ledger,
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
    (it applied; ``result`` is what the model sees), ``fail`` (it did not; an error result)
    or ``retry`` (run it again; a new approval where the tool needs one). Idempotent per
    ``decision_id``; a stale ``expected_version`` or a reused id raises ConflictError."""
    if action not in _RESOLVE_EVENTS:
        raise UsageError("action must be 'commit', 'fail' or 'retry'")
    if action == "commit" and result is None:
        raise UsageError("resolve(action='commit') needs the result the model will see")
    with ledger.transaction() as tx:
        prior = tx.one(
            "SELECT effect_id, action, expected_version FROM ledger_decisions "
            "WHERE decision_id = ?",
            (decision_id,),
        )
        if prior is not None:
            if tuple(prior) != (effect_id, action, expected_version):
                raise ConflictError(f"decision {decision_id!r} was already used differently")
            return ledger._effect(tx, effect_id)
        effect = ledger._effect(tx, effect_id)
        if effect.version != expected_version:
            raise ConflictError(
                f"effect {effect_id!r} is at version {effect.version}, not {expected_version}"
            )
        event = _RESOLVE_EVENTS[action]
        sets: dict[str, Any] = dict(_RELEASE)
        if action == "commit":
            sets["result"] = result_json(result, False)
        elif action == "fail":
            sets["result"] = result_json(result if result is not None else reason, True)
        elif _needs_approval(tx, effect_id):
            event = "resolve_retry_needs_approval"
        moved = ledger.transition(
            tx,
            effect,
            event,
            actor=actor,
            sets=sets,
            detail={"decision_id": decision_id, "reason": reason},
        )
        if moved is None:
            raise ConflictError(f"effect {effect_id!r} changed during the decision")
        tx.run(
            "INSERT INTO ledger_decisions (decision_id, effect_id, action, expected_version, "
            "actor, reason, result, at) VALUES (?, ?, ?, ?, ?, ?, ?, {now})",
            (decision_id, effect_id, action, expected_version, actor, reason, sets.get("result")),
        )
    return moved


def verify(
    ledger: Ledger, effect_id: str, *, worker_id: str = "verifier", lease_seconds: float = 30.0
) -> EffectRecord:
    """Ask a VERIFIABLE tool whether an ``unknown`` effect applied, and settle accordingly:
    Applied -> committed, NotApplied -> ready (or awaiting_approval), Inconclusive ->
    unknown, not asked again before its ``settle_seconds`` have passed. Returns the record
    unchanged when it is not ``unknown`` or not yet due."""
    effect = ledger.effect(effect_id)
    tool = ledger.tool(effect.tool)
    if tool is None or tool.verify is None:
        raise UsageError(f"tool {effect.tool!r} has no verify registered on this ledger")
    if effect.state is not EffectState.UNKNOWN:
        return effect
    lease = {
        "lease_owner": worker_id,
        "lease_until": RawSQL(f"{{now}} + {float(lease_seconds)}"),
        "epoch": RawSQL("epoch + 1"),
    }
    with ledger.transaction() as tx:
        due = tx.one(
            "SELECT lease_until IS NULL OR lease_until <= {now} FROM ledger_effects "
            "WHERE effect_id = ?",
            (effect_id,),
        )
        if due is None or not due[0]:
            return effect
        checking = ledger.transition(tx, effect, "verify", actor=worker_id, sets=lease)
    if checking is None:
        return ledger.effect(effect_id)
    ctx = ToolContext(effect_id, effect.idempotency_token, effect.attempt, tool.name)
    try:
        outcome = tool.verify(effect.arguments, ctx)
    except Exception as exc:  # a verifier that breaks proves nothing
        outcome = Inconclusive()
        detail: Any = {"error": f"{type(exc).__name__}: {exc}"}
    else:
        detail = None
    sets: dict[str, Any] = {"lease_owner": None, "lease_until": None}
    if isinstance(outcome, Applied):
        event = "applied"
        sets["result"] = result_json(outcome.output, False)
    elif isinstance(outcome, NotApplied):
        event = "not_applied"
    else:
        event = "inconclusive"
        settle = _seconds(getattr(outcome, "settle_seconds", 0.0))
        sets["lease_until"] = RawSQL(f"{{now}} + {settle!r}")  # not due again before then
        detail = {**(detail or {}), "settle_seconds": settle}
    with ledger.transaction() as tx:
        if event == "not_applied" and _needs_approval(tx, effect_id):
            event = "not_applied_needs_approval"
        moved = ledger.transition(
            tx,
            checking,
            event,
            actor=worker_id,
            sets=sets,
            fence_epoch=checking.epoch,
            detail=detail,
        )
    return moved or ledger.effect(effect_id)


def _seconds(value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if math.isfinite(seconds) and seconds > 0 else 0.0


def pending(
    ledger: Ledger,
    states: Iterable[EffectState | str] = DEFAULT_PENDING,
    *,
    run_id: str | None = None,
) -> tuple[EffectRecord, ...]:
    """Effects of the scope in ``states``; by default the ones that wait: for an
    approval, an operator, a verifier, or a worker's lease (``executing``: the record's
    ``lease_owner`` and ``lease_until`` say whose, and until when on the database clock).
    :func:`~callgate.ledger.waits_for` says it in words."""
    wanted = [EffectState(s).value for s in states]
    if not wanted:
        return ()
    where = f"scope = ? AND state IN ({', '.join('?' for _ in wanted)})"
    params: list[Any] = [ledger.scope, *wanted]
    if run_id is not None:
        where += " AND run_id = ?"
        params.append(run_id)
    with ledger.reading() as tx:
        return tuple(select_effects(tx, where + " ORDER BY created_at, position", params))


def recover(ledger: Ledger, worker_id: str) -> RecoveryReport:
    """Move expired leases to ``unknown`` and apply each class's policy; report the model
    requests left before ``turn_persisted`` (R5) and the runs that can be resumed."""
    lost: list[str] = []
    retried: list[str] = []
    escalated: list[str] = []
    with ledger.transaction() as tx:
        expired = select_effects(
            tx,
            "scope = ? AND state IN ('executing', 'verifying') AND lease_until < {now} "
            "ORDER BY created_at {skip_locked}",
            (ledger.scope,),
        )
        for effect in expired:
            moved = ledger.transition(
                tx,
                effect,
                "lose",
                actor=worker_id,
                sets=_RELEASE,
                detail={"reason": "lease expired"},
            )
            if moved is None:
                continue
            lost.append(moved.effect_id)
            after = _apply_class(ledger, tx, moved)
            if after.state in (EffectState.READY, EffectState.AWAITING_APPROVAL):
                retried.append(after.effect_id)
            elif after.state is EffectState.NEEDS_OPERATOR:
                escalated.append(after.effect_id)
        to_verify = select_effects(
            tx,
            "scope = ? AND state = 'unknown' AND effect_class = 'verifiable' "
            "AND (lease_until IS NULL OR lease_until <= {now}) ORDER BY created_at",
            (ledger.scope,),
        )
        requests = tx.rows(
            f"SELECT {REQUEST_COLUMNS} FROM ledger_requests WHERE scope = ? AND state IN "  # noqa: S608
            "('prepared', 'sent', 'identified', 'unknown') ORDER BY run_id, seq",
            (ledger.scope,),
        )
        runs = tx.rows(
            "SELECT DISTINCT e.run_id FROM ledger_effects e JOIN ledger_runs r "
            "ON r.scope = e.scope AND r.run_id = e.run_id WHERE e.scope = ? AND e.state IN "
            "('ready', 'committed', 'failed', 'rejected') AND "
            "(r.owner IS NULL OR r.owner_until < {now}) ORDER BY e.run_id",
            (ledger.scope,),
        )
    reqs = tuple(request_from_row(r) for r in requests)
    resumable = sorted({r[0] for r in runs} | {r.run_id for r in reqs})
    return RecoveryReport(
        lost=tuple(lost),
        retried=tuple(retried),
        escalated=tuple(escalated),
        to_verify=tuple(e.effect_id for e in to_verify if e.state in UNRESOLVED),
        requests=reqs,
        resumable_runs=tuple(resumable),
    )
