"""Recovery, R2: a lost attempt or an expired lease moves an effect to ``unknown``; only
its class (``read``, ``idempotent_remote``, ``local_tx``), a verifier or an operator's
decision (``_decisions``) lets it run again. Functions over the ledger's transaction or,
for :func:`verify` (which calls the tool's verifier between two transactions), its store.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import UsageError
from ._model import (
    UNRESOLVED,
    Applied,
    Claim,
    EffectClass,
    EffectRecord,
    EffectState,
    Inconclusive,
    NotApplied,
    RecoveryReport,
    Tool,
    ToolContext,
)
from ._rows import (
    REQUEST_COLUMNS,
    RawSQL,
    one_effect,
    request_from_row,
    requires_approval,
    select_effects,
    tool_result_text,
)
from ._store import Store, Tx
from ._transitions import REQUESTS, EffectEvent, move

__all__ = ["RELEASE", "apply_class", "lose", "recover", "verify"]

E = EffectEvent
_RETRY_CLASSES = frozenset({EffectClass.READ, EffectClass.IDEMPOTENT_REMOTE, EffectClass.LOCAL_TX})
# What ending an attempt's lease writes: no owner, and the epoch moves on (fencing it).
RELEASE = {"lease_owner": None, "lease_until": None, "epoch": RawSQL("epoch + 1")}
# Requests recovery reports for the loop to reconcile: every state the table can still move.
_UNFINISHED = tuple(dict.fromkeys(state.value for (state, _) in REQUESTS.transitions))


def apply_class(tx: Tx, effect: EffectRecord) -> EffectRecord:
    """What an ``unknown`` effect's class allows without a human (R2)."""
    if effect.effect_class in _RETRY_CLASSES:
        event = E.RETRY_NEEDS_APPROVAL if requires_approval(tx, effect.effect_id) else E.RETRY
    elif effect.effect_class is EffectClass.AT_MOST_ONCE:
        event = E.ESCALATE
    else:
        return effect  # verifiable: waits for verify()
    moved = move(tx, effect, event, actor="policy", detail={"class": effect.effect_class.value})
    return moved or effect


def lose(tx: Tx, claim: Claim, *, detail: str) -> EffectRecord:
    """The attempt's outcome is lost (the tool raised mid-effect): executing -> unknown,
    then the class policy. Fenced: a stale claim changes nothing."""
    current = one_effect(tx, claim.effect_id)
    if current.state is not EffectState.EXECUTING or current.epoch != claim.epoch:
        return current
    moved = move(
        tx,
        current,
        E.LOSE,
        actor=claim.worker_id,
        sets=RELEASE,
        fence={"epoch": claim.epoch},
        detail={"error": detail},
    )
    return apply_class(tx, moved) if moved else current


def verify(
    store: Store, effect: EffectRecord, tool: Tool | None, *, worker_id: str, lease_seconds: float
) -> EffectRecord:
    """Ask a VERIFIABLE tool whether an ``unknown`` effect applied (see
    :meth:`Ledger.verify`). The verifier runs between two transactions, under a lease."""
    if tool is None or tool.verify is None:
        raise UsageError(f"tool {effect.tool!r} has no verify registered on this ledger")
    if effect.state is not EffectState.UNKNOWN:
        return effect
    lease = {
        "lease_owner": worker_id,
        "lease_until": RawSQL("{now} + ?", (float(lease_seconds),)),
        "epoch": RawSQL("epoch + 1"),
    }
    with store.transaction() as tx:
        due = tx.one(
            "SELECT lease_until IS NULL OR lease_until <= {now} FROM ledger_effects "
            "WHERE effect_id = ?",
            (effect.effect_id,),
        )
        if due is None or not due[0]:
            return effect
        checking = move(tx, effect, E.VERIFY, actor=worker_id, sets=lease)
        if checking is None:
            return one_effect(tx, effect.effect_id)
    ctx = ToolContext(
        effect.effect_id,
        effect.idempotency_token,
        effect.attempt,
        tool.name,
        call_id=effect.call_id,
    )
    try:
        outcome = tool.verify(effect.arguments, ctx)
    except Exception as exc:  # a verifier that breaks proves nothing
        outcome = Inconclusive()
        detail: Any = {"error": f"{type(exc).__name__}: {exc}"}
    else:
        detail = None
    sets: dict[str, Any] = {"lease_owner": None, "lease_until": None}
    if isinstance(outcome, Applied):
        event = E.APPLIED
    elif isinstance(outcome, NotApplied):
        event = E.NOT_APPLIED
    else:
        event = E.INCONCLUSIVE
        settle = _seconds(getattr(outcome, "settle_seconds", 0.0))
        sets["lease_until"] = RawSQL("{now} + ?", (settle,))  # not due again before then
        detail = {**(detail or {}), "settle_seconds": settle}
    with store.transaction() as tx:
        if isinstance(outcome, Applied):  # media parts go to the blob table in this tx
            sets["result"] = tool_result_text(tx, outcome.output, False)
        if event is E.NOT_APPLIED and requires_approval(tx, effect.effect_id):
            event = E.NOT_APPLIED_NEEDS_APPROVAL
        moved = move(
            tx,
            checking,
            event,
            actor=worker_id,
            sets=sets,
            fence={"epoch": checking.epoch},
            detail=detail,
        )
        return moved or one_effect(tx, effect.effect_id)


def _seconds(value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if math.isfinite(seconds) and seconds > 0 else 0.0


def recover(tx: Tx, scope: str, worker_id: str) -> RecoveryReport:
    """Move expired leases to ``unknown`` and apply each class's policy; report the model
    requests left before ``turn_persisted`` (R5) and the runs that can be resumed."""
    lost: list[str] = []
    retried: list[str] = []
    escalated: list[str] = []
    expired = select_effects(
        tx,
        "scope = ? AND state IN ('executing', 'verifying') AND lease_until < {now} "
        "ORDER BY created_at {skip_locked}",
        (scope,),
    )
    for effect in expired:
        moved = move(
            tx, effect, E.LOSE, actor=worker_id, sets=RELEASE, detail={"reason": "lease expired"}
        )
        if moved is None:
            continue
        lost.append(moved.effect_id)
        after = apply_class(tx, moved)
        if after.state in (EffectState.READY, EffectState.AWAITING_APPROVAL):
            retried.append(after.effect_id)
        elif after.state is EffectState.NEEDS_OPERATOR:
            escalated.append(after.effect_id)
    to_verify = select_effects(
        tx,
        "scope = ? AND state = 'unknown' AND effect_class = 'verifiable' "
        "AND (lease_until IS NULL OR lease_until <= {now}) ORDER BY created_at",
        (scope,),
    )
    marks = ", ".join("?" for _ in _UNFINISHED)
    requests = tx.rows(
        f"SELECT {REQUEST_COLUMNS} FROM ledger_requests WHERE scope = ? AND state IN "  # noqa: S608
        f"({marks}) ORDER BY run_id, seq",
        (scope, *_UNFINISHED),
    )
    runs = tx.rows(
        "SELECT DISTINCT e.run_id FROM ledger_effects e JOIN ledger_runs r "
        "ON r.scope = e.scope AND r.run_id = e.run_id WHERE e.scope = ? AND e.state IN "
        "('ready', 'committed', 'failed', 'rejected') AND "
        "(r.owner IS NULL OR r.owner_until < {now}) ORDER BY e.run_id",
        (scope,),
    )
    reqs = tuple(request_from_row(r, tx) for r in requests)
    resumable = sorted({r[0] for r in runs} | {r.run_id for r in reqs})
    return RecoveryReport(
        lost=tuple(lost),
        retried=tuple(retried),
        escalated=tuple(escalated),
        to_verify=tuple(e.effect_id for e in to_verify if e.state in UNRESOLVED),
        requests=reqs,
        resumable_runs=tuple(resumable),
    )
