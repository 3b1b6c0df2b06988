"""One attempt at an effect: the claim (a fenced lease, consuming the approval), the
settle (fenced by the claim's epoch; a fenced result is kept aside, never written over a
state). Functions over the ledger's transaction or store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._digest import canonical_digest
from .._errors import UsageError
from ._model import ApprovalError, Claim, EffectRecord, EffectState, FencedError, Tool
from ._rows import RawSQL, load, select_effects, tool_result_text
from ._store import Store, Tx
from ._transitions import EFFECTS, EffectEvent, move, move_row, move_where

__all__ = [
    "claim_turn",
    "claim_where",
    "heartbeat",
    "late_results",
    "settle",
    "settle_tx",
    "tool_digest",
]


def tool_digest(tool: Tool | None, name: str) -> str:
    definition = tool.definition() if tool else {"name": name, "registered": False}
    return canonical_digest(definition)


_NEXT_EPOCH = RawSQL("epoch + 1")
_NEXT_ATTEMPT = RawSQL("attempt + 1")
# dump({"attempt": n}) in SQL (braces doubled: the store fills in {now}-style tokens)
_ATTEMPT_DETAIL = """'{{"attempt":' || attempt || '}}'"""


class _NoApproval(Exception):  # noqa: N818 - private control flow: roll the claim back
    def __init__(self, effect: EffectRecord) -> None:
        self.effect = effect


def _consume_approval(
    tx: Tx, effect: EffectRecord, tools: Mapping[str, Tool], policy_version: str
) -> None:
    row = tx.one(
        "SELECT requires_approval, tool_digest, turn_digest FROM ledger_effects "
        "WHERE effect_id = ?",
        (effect.effect_id,),
    )
    if row is None or not row[0]:
        return
    current_tool = tool_digest(tools.get(effect.tool), effect.tool)
    if current_tool != row[1]:
        raise _NoApproval(effect)
    taken = tx.one(
        "UPDATE ledger_approvals SET consumed_at = {now}, consumed_epoch = ? WHERE approval_id = "
        "(SELECT approval_id FROM ledger_approvals WHERE effect_id = ? AND consumed_at IS NULL "
        "AND expires_at > {now} AND args_digest = ? AND turn_digest = ? AND tool_digest = ? "
        "AND policy_version = ? ORDER BY created_at LIMIT 1) AND consumed_at IS NULL "
        "RETURNING approval_id",
        (effect.epoch, effect.effect_id, effect.args_digest, row[2], row[1], policy_version),
    )
    if taken is None:
        raise _NoApproval(effect)


def _claims(
    tx: Tx, where: str, params: Sequence[Any], worker_id: str, lease_seconds: float
) -> list[EffectRecord]:
    """ready -> executing for the rows ``where`` picks: a fenced lease, epoch and attempt
    + 1, one audit row each."""
    moved: list[EffectRecord] = move_where(
        tx,
        EFFECTS,
        EffectEvent.CLAIM,
        where,
        params,
        actor=worker_id,
        sets={
            "epoch": _NEXT_EPOCH,
            "attempt": _NEXT_ATTEMPT,
            "lease_owner": worker_id,
            "lease_until": RawSQL("{now} + ?", (lease_seconds,)),
        },
        detail=lambda effect: {"attempt": effect.attempt},
        detail_sql=_ATTEMPT_DETAIL,
    )
    return moved


def claim_where(
    store: Store,
    where: str,
    params: Sequence[Any],
    worker_id: str,
    lease_seconds: float,
    *,
    tools: Mapping[str, Tool],
    policy_version: str,
) -> Claim | None:
    """Claim one ready effect matching ``where`` (fenced: epoch and attempt + 1),
    consuming its approval in the same transaction when the tool needs one."""
    if type(worker_id) is not str or not worker_id:
        raise UsageError("worker_id must be a non-empty str")
    try:
        with store.transaction() as tx:
            claimed = _claims(tx, where, params, worker_id, lease_seconds)
            if not claimed:
                return None
            effect = claimed[0]
            _consume_approval(tx, effect, tools, policy_version)
    except _NoApproval as missing:
        with store.transaction() as tx:
            ready = select_effects(tx, "effect_id = ?", (missing.effect.effect_id,))
            if ready and ready[0].state is EffectState.READY:
                move(tx, ready[0], EffectEvent.APPROVAL_LAPSED, actor=worker_id)
        raise ApprovalError(
            f"effect {missing.effect.effect_id!r} needs a valid, unused approval"
        ) from None
    return Claim(
        effect_id=effect.effect_id,
        epoch=effect.epoch,
        attempt=effect.attempt,
        worker_id=worker_id,
        tool=effect.tool,
        arguments=effect.arguments,
        idempotency_token=effect.idempotency_token,
    )


def claim_turn(
    tx: Tx, scope: str, run_id: str, turn_seq: int, worker_id: str, lease_seconds: float
) -> None:
    """Claim every ready effect of a just-recorded turn inside the recording transaction
    (a new turn's ready effects never need an approval: those wait in awaiting_approval)."""
    _claims(
        tx,
        "scope = ? AND run_id = ? AND turn_seq = ?",
        (scope, run_id, turn_seq),
        worker_id,
        lease_seconds,
    )


def settle_tx(tx: Tx, claim: Claim, event: EffectEvent, text: str) -> EffectRecord | None:
    """executing -> committed / failed with ``text`` as the result, fenced by the claim's
    epoch; None when the claim is no longer current."""
    moved: EffectRecord | None = move_row(  # the UPDATE's guard is the fence: no read first
        tx,
        EFFECTS,
        claim.effect_id,
        EffectState.EXECUTING,
        event,
        actor=claim.worker_id,
        fence={"epoch": claim.epoch},
        sets={"result": text, "lease_owner": None, "lease_until": None},
    )
    return moved


def settle(
    store: Store,
    claim: Claim,
    output: Any,
    *,
    is_error: bool,
    applied: bool,
    fault: Callable[[str], None] | None = None,
) -> EffectRecord:
    """Record the attempt's result (see :meth:`Ledger.settle`); a fenced write goes to
    ``late_results`` and raises :class:`FencedError`. Media parts of the result go to the
    blob table in the same transaction (fault point ``after_media_stored`` sits between)."""
    event = EffectEvent.COMMIT if applied else EffectEvent.FAIL
    with store.transaction() as tx:
        text = tool_result_text(tx, output, is_error or not applied)
        if fault is not None:
            fault("after_media_stored")
        moved = settle_tx(tx, claim, event, text)
        if moved is not None:
            return moved
        tx.run(
            "INSERT INTO ledger_late_results (effect_id, epoch, worker_id, result, at) "
            "VALUES (?, ?, ?, ?, {now})",
            (claim.effect_id, claim.epoch, claim.worker_id, text),
        )
    raise FencedError(f"claim epoch {claim.epoch} of {claim.effect_id!r} is fenced")


def heartbeat(store: Store, claim: Claim, lease_seconds: float) -> None:
    """Extend a current claim's lease (not a move: the state stays ``executing``)."""
    with store.transaction() as tx:
        row = tx.one(
            "UPDATE ledger_effects SET lease_until = {now} + ? WHERE effect_id = ? "
            "AND state = 'executing' AND epoch = ? RETURNING epoch",
            (lease_seconds, claim.effect_id, claim.epoch),
        )
    if row is None:
        raise FencedError(f"claim epoch {claim.epoch} of {claim.effect_id!r} is fenced")


def late_results(tx: Tx, effect_id: str) -> tuple[tuple[int, str, Any], ...]:
    rows = tx.rows(
        "SELECT epoch, worker_id, result FROM ledger_late_results WHERE effect_id = ? ORDER BY seq",
        (effect_id,),
    )
    return tuple((int(r[0]), r[1], load(r[2])) for r in rows)
