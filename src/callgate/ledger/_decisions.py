"""A person's decisions about effects: approvals (R3), denials and an operator's
resolution of an effect in doubt, and what waits for them. Functions over the ledger's
transaction.

An approval is bound to the argument, turn and tool digests and the ledger's policy
version, expires, and is consumed by the claim (``_attempts``). A resolution is
idempotent per decision id and checked against the effect's version.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, NamedTuple

from .._errors import UsageError
from ._model import ConflictError, EffectRecord, EffectState
from ._recovery import RELEASE
from ._rows import one_effect, requires_approval, result_json, select_effects
from ._store import Tx
from ._transitions import EffectEvent, move

__all__ = ["DEFAULT_PENDING", "Approval", "approvals", "approve", "deny", "pending", "resolve"]

E = EffectEvent
# What waits for a decision or for a lease to run out: a live worker's claim is listed
# too, so the operator sees what a resuming loop sees (it waits for that lease).
DEFAULT_PENDING = (
    EffectState.AWAITING_APPROVAL,
    EffectState.EXECUTING,
    EffectState.UNKNOWN,
    EffectState.VERIFYING,
    EffectState.NEEDS_OPERATOR,
)
_RESOLVE_EVENTS = {"commit": E.RESOLVE_COMMIT, "fail": E.RESOLVE_FAIL, "retry": E.RESOLVE_RETRY}


class Approval(NamedTuple):
    """One approval of an effect, as :meth:`Ledger.approvals` lists it (a tuple, oldest
    first): who granted it, the claim epoch that consumed it (None while unused) and
    whether it has expired."""

    approval_id: str
    actor: str
    consumed_epoch: int | None
    expired: bool


def _awaiting(tx: Tx, effect_id: str) -> EffectRecord:
    effect = one_effect(tx, effect_id)
    if effect.state is not EffectState.AWAITING_APPROVAL:
        raise ConflictError(f"effect {effect_id!r} is {effect.state.value}, not awaiting")
    return effect


def approve(
    tx: Tx,
    effect_id: str,
    *,
    actor: str,
    reason: str,
    expires_in: float,
    approval_id: str | None,
    policy_version: str,
) -> EffectRecord:
    """Grant one single-use approval bound to the effect's digests and ``policy_version``;
    ``awaiting_approval`` -> ``ready``."""
    approval_id = approval_id or uuid.uuid4().hex
    effect = _awaiting(tx, effect_id)
    tx.run(
        "INSERT INTO ledger_approvals (approval_id, effect_id, args_digest, turn_digest, "
        "tool_digest, policy_version, expires_at, actor, reason, created_at) "
        "SELECT ?, effect_id, args_digest, turn_digest, tool_digest, ?, {now} + ?, ?, ?, {now} "
        "FROM ledger_effects WHERE effect_id = ?",
        (approval_id, policy_version, expires_in, actor, reason, effect_id),
    )
    detail = {"approval_id": approval_id, "reason": reason}
    return move(tx, effect, E.APPROVE, actor=actor, detail=detail) or one_effect(tx, effect_id)


def deny(tx: Tx, effect_id: str, *, actor: str, reason: str) -> EffectRecord:
    """Deny the call: ``rejected`` with an error result the model will see."""
    text = result_json(f"the operator denied this call: {reason}", True)
    effect = _awaiting(tx, effect_id)
    moved = move(tx, effect, E.DENY, actor=actor, sets={"result": text}, detail={"reason": reason})
    return moved or one_effect(tx, effect_id)


def approvals(tx: Tx, effect_id: str) -> tuple[Approval, ...]:
    rows = tx.rows(
        "SELECT approval_id, actor, consumed_epoch, expires_at <= {now} "
        "FROM ledger_approvals WHERE effect_id = ? ORDER BY created_at, approval_id",
        (effect_id,),
    )
    return tuple(Approval(r[0], r[1], r[2], bool(r[3])) for r in rows)


def check_resolve(action: str, result: Any) -> None:
    if action not in _RESOLVE_EVENTS:
        raise UsageError("action must be 'commit', 'fail' or 'retry'")
    if action == "commit" and result is None:
        raise UsageError("resolve(action='commit') needs the result the model will see")


def resolve(
    tx: Tx,
    effect_id: str,
    *,
    expected_version: int,
    decision_id: str,
    action: str,
    result: Any,
    reason: str,
    actor: str,
) -> EffectRecord:
    """An operator's decision on an ``unknown`` / ``needs_operator`` effect (see
    :meth:`Ledger.resolve`); the arguments were checked by :func:`check_resolve`."""
    prior = tx.one(
        "SELECT effect_id, action, expected_version FROM ledger_decisions WHERE decision_id = ?",
        (decision_id,),
    )
    if prior is not None:
        if tuple(prior) != (effect_id, action, expected_version):
            raise ConflictError(f"decision {decision_id!r} was already used differently")
        return one_effect(tx, effect_id)
    effect = one_effect(tx, effect_id)
    if effect.version != expected_version:
        raise ConflictError(
            f"effect {effect_id!r} is at version {effect.version}, not {expected_version}"
        )
    event = _RESOLVE_EVENTS[action]
    sets: dict[str, Any] = dict(RELEASE)
    if action == "commit":
        sets["result"] = result_json(result, False)
    elif action == "fail":
        sets["result"] = result_json(result if result is not None else reason, True)
    elif requires_approval(tx, effect_id):
        event = E.RESOLVE_RETRY_NEEDS_APPROVAL
    detail = {"decision_id": decision_id, "reason": reason}
    moved = move(tx, effect, event, actor=actor, sets=sets, detail=detail)
    if moved is None:
        raise ConflictError(f"effect {effect_id!r} changed during the decision")
    tx.run(
        "INSERT INTO ledger_decisions (decision_id, effect_id, action, expected_version, "
        "actor, reason, result, at) VALUES (?, ?, ?, ?, ?, ?, ?, {now})",
        (decision_id, effect_id, action, expected_version, actor, reason, sets.get("result")),
    )
    return moved


def pending(
    tx: Tx, scope: str, states: Iterable[EffectState | str], run_id: str | None
) -> tuple[EffectRecord, ...]:
    """Effects of ``scope`` in ``states`` (optionally of one run), oldest first."""
    wanted = [EffectState(s).value for s in states]
    if not wanted:
        return ()
    where = f"scope = ? AND state IN ({', '.join('?' for _ in wanted)})"
    params: list[Any] = [scope, *wanted]
    if run_id is not None:
        where += " AND run_id = ?"
        params.append(run_id)
    return tuple(select_effects(tx, where + " ORDER BY created_at, position", params))
