"""Recording a turn's effects (keys, business duplicates, approvals) and claiming them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._digest import canonical_digest
from .._errors import UsageError
from ._model import (
    ApprovalError,
    CallInput,
    Claim,
    EffectClass,
    EffectRecord,
    EffectState,
    Tool,
    TurnInput,
)
from ._rows import EFFECT_COLUMNS, audit, dump, effect_from_row, result_json, select_effects
from ._store import Tx

if TYPE_CHECKING:
    from ._ledger import Ledger

__all__ = [
    "check_turn",
    "claim_turn",
    "claim_where",
    "effect_id_for",
    "insert_effects",
    "token_for",
]


def effect_id_for(scope: str, run_id: str, turn_seq: int, call_id: str) -> str:
    return canonical_digest({"scope": scope, "run": run_id, "turn": turn_seq, "call": call_id})


def token_for(effect_id: str, tool: str) -> str:
    """The idempotency token: stable across attempts and workers, distinct per effect."""
    return "cg-" + canonical_digest({"effect": effect_id, "tool": tool})[:48]


def tool_digest(tool: Tool | None, name: str) -> str:
    definition = tool.definition() if tool else {"name": name, "registered": False}
    return canonical_digest(definition)


def check_turn(turn: TurnInput) -> list[str]:
    """Validate the protocol-neutral turn; return each call's argument digest."""
    if not isinstance(turn, TurnInput):
        raise UsageError("record_turn takes a TurnInput")
    for field in ("provider", "provider_turn_id", "digest"):
        value = getattr(turn, field)
        if type(value) is not str or not value:
            raise UsageError(f"TurnInput.{field} must be a non-empty str")
    calls = list(turn.calls)
    if any(not isinstance(c, CallInput) for c in calls):
        raise UsageError("TurnInput.calls must hold CallInput values")
    ids = [c.call_id for c in calls]
    if any(type(i) is not str or not i for i in ids) or len(set(ids)) != len(ids):
        raise UsageError("call ids must be non-empty and unique within a turn")
    dump(turn.snapshot)  # refuses a non-JSON snapshot before anything is written
    return [canonical_digest(c.arguments) for c in calls]


def _business_key(
    tool: str, business_key: Callable[[Any], str], arguments: Any
) -> tuple[str | None, str | None]:
    """(key, None), or (None, why) when the tool's ``business_key`` raised or returned a
    non-str for these arguments. The model asked for the call and paid for the turn: it
    gets an error result saying why the call was not run (usually arguments the key
    cannot read), and the run goes on, rather than the whole turn failing mid-loop."""
    try:
        key = business_key(arguments)
    except Exception as exc:  # the host's callable over the model's arguments
        return None, (
            f"the call was not run: the business key of tool {tool!r} could not be "
            f"computed from these arguments ({type(exc).__name__}: {exc})"
        )
    if type(key) is not str:
        return None, (
            f"the call was not run: the business key of tool {tool!r} must be a str, "
            f"got {type(key).__name__}"
        )
    return key, None


def _initial(
    ledger: Ledger, tx: Tx, tool: Tool | None, call: CallInput
) -> tuple[str, str | None, str | None, str | None]:
    """(event, business_key, duplicate_of, result) for a new effect."""
    if tool is None:
        return "reject", None, None, result_json(f"tool {call.tool!r} is not available", True)
    key = None
    if tool.business_key is not None and tool.on_business_duplicate != "allow":
        key, refusal = _business_key(tool.name, tool.business_key, call.arguments)
        if refusal is not None:
            return "reject", None, None, result_json(refusal, True)
        row = tx.one(
            "SELECT effect_id, state, result FROM ledger_effects WHERE scope = ? AND tool = ? "
            "AND business_key = ? AND duplicate_of IS NULL",
            (ledger.scope, tool.name, key),
        )
        if row is not None:
            if tool.on_business_duplicate == "replay" and row[1] in ("committed", "delivered"):
                return "replay", key, row[0], row[2]
            note = f"duplicate of an earlier call with the same business key ({row[0]}); not run"
            return "reject", key, row[0], result_json(note, True)
    if tool.requires_approval:
        return "needs_approval", key, None, None
    return "admit", key, None, None


def insert_effects(
    ledger: Ledger, tx: Tx, run_id: str, turn_seq: int, turn: TurnInput, digests: list[str]
) -> None:
    """One effect row per call, already in its first real state; two audit rows each."""
    from ._transitions import next_state

    for position, (call, args_digest) in enumerate(zip(turn.calls, digests, strict=True)):
        tool = ledger.tool(call.tool)
        event, key, duplicate_of, result = _initial(ledger, tx, tool, call)
        state = next_state(EffectState.PROPOSED, event)
        effect_id = effect_id_for(ledger.scope, run_id, turn_seq, call.call_id)
        effect_class = tool.effect if tool else EffectClass.AT_MOST_ONCE
        tx.run(
            "INSERT INTO ledger_effects (effect_id, scope, run_id, turn_seq, position, call_id, "
            "tool, effect_class, arguments, args_digest, idempotency_token, business_key, "
            "duplicate_of, requires_approval, tool_digest, turn_digest, state, version, attempt, "
            "epoch, result, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, 1, 0, 0, ?, {now}, {now})",
            (
                effect_id,
                ledger.scope,
                run_id,
                turn_seq,
                position,
                call.call_id,
                call.tool,
                effect_class.value,
                dump(call.arguments),
                args_digest,
                token_for(effect_id, call.tool),
                key,
                duplicate_of,
                int(bool(tool and tool.requires_approval)),
                tool_digest(tool, call.tool),
                turn.digest,
                state.value,
                result,
            ),
        )
        for before, after, name in ((None, "proposed", "record"), ("proposed", state, event)):
            audit(
                tx,
                scope=ledger.scope,
                run_id=run_id,
                effect_id=effect_id,
                from_state=before,
                to_state=str(after),
                event=name,
                actor="ledger",
                epoch=0,
                detail={"duplicate_of": duplicate_of} if duplicate_of and before else None,
            )


class _NoApproval(Exception):  # noqa: N818 - private control flow: roll the claim back
    def __init__(self, effect: EffectRecord) -> None:
        self.effect = effect


def _consume_approval(ledger: Ledger, tx: Tx, effect: EffectRecord) -> None:
    row = tx.one(
        "SELECT requires_approval, tool_digest, turn_digest FROM ledger_effects "
        "WHERE effect_id = ?",
        (effect.effect_id,),
    )
    if row is None or not row[0]:
        return
    current_tool = tool_digest(ledger.tool(effect.tool), effect.tool)
    if current_tool != row[1]:
        raise _NoApproval(effect)
    taken = tx.one(
        "UPDATE ledger_approvals SET consumed_at = {now}, consumed_epoch = ? WHERE approval_id = "
        "(SELECT approval_id FROM ledger_approvals WHERE effect_id = ? AND consumed_at IS NULL "
        "AND expires_at > {now} AND args_digest = ? AND turn_digest = ? AND tool_digest = ? "
        "AND policy_version = ? ORDER BY created_at LIMIT 1) AND consumed_at IS NULL "
        "RETURNING approval_id",
        (effect.epoch, effect.effect_id, effect.args_digest, row[2], row[1], ledger.policy_version),
    )
    if taken is None:
        raise _NoApproval(effect)


def claim_where(
    ledger: Ledger, where: str, params: Sequence[Any], worker_id: str, lease_seconds: float
) -> Claim | None:
    """Claim one ready effect matching ``where`` (fenced: epoch and attempt + 1)."""
    if type(worker_id) is not str or not worker_id:
        raise UsageError("worker_id must be a non-empty str")
    try:
        with ledger.transaction() as tx:
            row = tx.one(
                "UPDATE ledger_effects SET state = 'executing', epoch = epoch + 1, "  # noqa: S608
                "attempt = attempt + 1, version = version + 1, lease_owner = ?, "
                f"lease_until = {{now}} + ?, updated_at = {{now}} WHERE {where} "
                f"AND state = 'ready' RETURNING {EFFECT_COLUMNS}",
                (worker_id, lease_seconds, *params),
            )
            if row is None:
                return None
            effect = effect_from_row(row)
            _consume_approval(ledger, tx, effect)
            audit(
                tx,
                scope=effect.scope,
                run_id=effect.run_id,
                effect_id=effect.effect_id,
                from_state="ready",
                to_state="executing",
                event="claim",
                actor=worker_id,
                epoch=effect.epoch,
                detail={"attempt": effect.attempt},
            )
    except _NoApproval as missing:
        with ledger.transaction() as tx:
            ready = select_effects(tx, "effect_id = ?", (missing.effect.effect_id,))
            if ready and ready[0].state is EffectState.READY:
                ledger.transition(tx, ready[0], "approval_lapsed", actor=worker_id)
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
    ledger: Ledger, tx: Tx, run_id: str, turn_seq: int, worker_id: str, lease_seconds: float
) -> None:
    """Claim every ready effect of a just-recorded turn inside the recording transaction
    (a new turn's ready effects never need an approval: those wait in awaiting_approval)."""
    rows = tx.rows(
        "UPDATE ledger_effects SET state = 'executing', epoch = epoch + 1, "  # noqa: S608
        "attempt = attempt + 1, version = version + 1, lease_owner = ?, "
        "lease_until = {now} + ?, updated_at = {now} WHERE scope = ? AND run_id = ? "
        f"AND turn_seq = ? AND state = 'ready' RETURNING {EFFECT_COLUMNS}",
        (worker_id, lease_seconds, ledger.scope, run_id, turn_seq),
    )
    for effect in map(effect_from_row, rows):
        audit(
            tx,
            scope=effect.scope,
            run_id=effect.run_id,
            effect_id=effect.effect_id,
            from_state="ready",
            to_state="executing",
            event="claim",
            actor=worker_id,
            epoch=effect.epoch,
            detail={"attempt": effect.attempt},
        )
