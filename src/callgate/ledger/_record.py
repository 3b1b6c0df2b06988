"""Recording a turn's effects (keys, business duplicates, approvals) and delivering their
results: functions over the ledger's transaction, scope and tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._digest import canonical_digest
from .._errors import UsageError
from .._results import ToolResult
from ._attempts import claim_turn, tool_digest
from ._model import (
    SETTLED,
    UNRESOLVED,
    CallInput,
    ConflictError,
    EffectClass,
    EffectRecord,
    EffectState,
    RequestRecord,
    Tool,
    TurnInput,
)
from ._rows import AUDIT_INSERT, AUDIT_VALUES, dump, result_json, select_effects, write_audited
from ._store import Tx
from ._transitions import EFFECTS, REQUESTS, EffectEvent, RequestEvent, move, move_row

UNKNOWN_OUTCOME = "outcome unknown; do not retry this call"

__all__ = [
    "UNKNOWN_OUTCOME",
    "check_turn",
    "deliver",
    "effect_id_for",
    "insert_effects",
    "record_turn",
    "results",
    "token_for",
]


def effect_id_for(scope: str, run_id: str, turn_seq: int, call_id: str) -> str:
    return canonical_digest({"scope": scope, "run": run_id, "turn": turn_seq, "call": call_id})


def token_for(effect_id: str, tool: str) -> str:
    """The idempotency token: stable across attempts and workers, distinct per effect."""
    return "cg-" + canonical_digest({"effect": effect_id, "tool": tool})[:48]


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
    tx: Tx, scope: str, tool: Tool | None, call: CallInput
) -> tuple[EffectEvent, str | None, str | None, str | None]:
    """(event, business_key, duplicate_of, result) for a new effect."""
    if tool is None:
        note = f"tool {call.tool!r} is not available"
        return EffectEvent.REJECT, None, None, result_json(note, True)
    key = None
    if tool.business_key is not None and tool.on_business_duplicate != "allow":
        key, refusal = _business_key(tool.name, tool.business_key, call.arguments)
        if refusal is not None:
            return EffectEvent.REJECT, None, None, result_json(refusal, True)
        row = tx.one(
            "SELECT effect_id, state, result FROM ledger_effects WHERE scope = ? AND tool = ? "
            "AND business_key = ? AND duplicate_of IS NULL",
            (scope, tool.name, key),
        )
        if row is not None:
            if tool.on_business_duplicate == "replay" and row[1] in ("committed", "delivered"):
                return EffectEvent.REPLAY, key, row[0], row[2]
            note = f"duplicate of an earlier call with the same business key ({row[0]}); not run"
            return EffectEvent.REJECT, key, row[0], result_json(note, True)
    if tool.requires_approval:
        return EffectEvent.NEEDS_APPROVAL, key, None, None
    return EffectEvent.ADMIT, key, None, None


def insert_effects(
    tx: Tx,
    scope: str,
    tools: Mapping[str, Tool],
    run_id: str,
    turn_seq: int,
    turn: TurnInput,
    digests: list[str],
) -> None:
    """One effect row per call, inserted by the table's start row and already moved to its
    first real state; two audit rows each (the start, then that first move)."""
    begin = EffectEvent.RECORD
    proposed: EffectState = EFFECTS.start[begin]
    for position, (call, args_digest) in enumerate(zip(turn.calls, digests, strict=True)):
        tool = tools.get(call.tool)
        event, key, duplicate_of, result = _initial(tx, scope, tool, call)
        state = EFFECTS.step(proposed, event)
        effect_id = effect_id_for(scope, run_id, turn_seq, call.call_id)
        effect_class = tool.effect if tool else EffectClass.AT_MOST_ONCE
        second = dump({"duplicate_of": duplicate_of} if duplicate_of else None)
        write_audited(  # the row and both its audit rows (the start, then the first move)
            tx,
            "INSERT INTO ledger_effects (effect_id, scope, run_id, turn_seq, position, call_id, "
            "tool, effect_class, arguments, args_digest, idempotency_token, business_key, "
            "duplicate_of, requires_approval, tool_digest, turn_digest, state, version, attempt, "
            "epoch, result, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, 1, 0, 0, ?, {now}, {now})",
            (
                effect_id,
                scope,
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
            f"{AUDIT_INSERT}{AUDIT_VALUES}, {AUDIT_VALUES}",
            (
                *(scope, run_id, effect_id, None, None, proposed.value, begin.value),
                *(0, "ledger", "null"),
                *(scope, run_id, effect_id, None, proposed.value, state.value, event.value),
                *(0, "ledger", second),
            ),
        )


def deliver(tx: Tx, scope: str, run_id: str, turn_seq: int, request_id: str) -> None:
    """R4: the turn's settled results reached the provider in ``request_id``."""
    for effect in _turn_effects(tx, scope, run_id, turn_seq):
        if effect.state in SETTLED:
            move(
                tx,
                effect,
                EffectEvent.DELIVER,
                actor="ledger",
                sets={"delivered_request_id": request_id},
            )


def record_turn(
    tx: Tx,
    scope: str,
    tools: Mapping[str, Tool],
    req: RequestRecord,
    turn: TurnInput,
    digests: list[str],
    *,
    claim_as: str | None,
    lease_seconds: float,
) -> tuple[EffectRecord, ...]:
    """R1: the turn and one effect per call (see :meth:`Ledger.record_turn`), in the
    caller's transaction, which holds the run."""
    existing = tx.one(
        "SELECT turn_seq, turn_digest FROM ledger_turns "
        "WHERE scope = ? AND run_id = ? AND provider_turn_id = ?",
        (scope, req.run_id, turn.provider_turn_id),
    )
    if existing is not None:
        return _same_turn(tx, scope, req.run_id, int(existing[0]), existing[1], turn, digests)
    if req.provider_turn_id not in (None, turn.provider_turn_id):
        raise ConflictError(
            f"request {req.request_id!r} was identified as {req.provider_turn_id!r}"
        )
    # The request moves first: its table refuses a request that is no longer open.
    sets = {"provider_turn_id": turn.provider_turn_id}
    persisted = move_row(
        tx,
        REQUESTS,
        req.request_id,
        req.state,
        RequestEvent.PERSIST_TURN,
        sets=sets,
        detail=sets,
        read=False,  # the caller needs no request record back
    )
    if persisted is None:
        raise ConflictError(f"request {req.request_id!r} changed meanwhile")
    # The next turn number and the insert in one statement (the run is held: no race).
    row = tx.one(
        "INSERT INTO ledger_turns (scope, run_id, turn_seq, request_id, provider, "
        "provider_turn_id, turn_digest, snapshot, created_at) "
        "SELECT ?, ?, COALESCE(MAX(turn_seq), 0) + 1, ?, ?, ?, ?, ?, {now} FROM ledger_turns "
        "WHERE scope = ? AND run_id = ? RETURNING turn_seq",
        (
            scope,
            req.run_id,
            req.request_id,
            turn.provider,
            turn.provider_turn_id,
            turn.digest,
            dump(turn.snapshot),
            scope,
            req.run_id,
        ),
    )
    if row is None:  # an aggregate without GROUP BY always yields one row
        raise ConflictError(f"turn of request {req.request_id!r} was not recorded")
    turn_seq = int(row[0])
    if req.carries_turn is not None:  # a turn answering it: the provider accepted it
        deliver(tx, scope, req.run_id, req.carries_turn, req.request_id)
    insert_effects(tx, scope, tools, req.run_id, turn_seq, turn, digests)
    if claim_as is not None:
        claim_turn(tx, scope, req.run_id, turn_seq, claim_as, lease_seconds)
    return tuple(_turn_effects(tx, scope, req.run_id, turn_seq))


def _turn_effects(tx: Tx, scope: str, run_id: str, turn_seq: int) -> list[EffectRecord]:
    return select_effects(
        tx,
        "scope = ? AND run_id = ? AND turn_seq = ? ORDER BY position",
        (scope, run_id, turn_seq),
    )


def _same_turn(
    tx: Tx,
    scope: str,
    run_id: str,
    turn_seq: int,
    digest: str,
    turn: TurnInput,
    digests: list[str],
) -> tuple[EffectRecord, ...]:
    if digest != turn.digest:
        raise ConflictError(
            f"provider turn {turn.provider_turn_id!r} is recorded with another digest"
        )
    effects = _turn_effects(tx, scope, run_id, turn_seq)
    recorded = [(e.call_id, e.args_digest) for e in effects]
    offered = [(c.call_id, d) for c, d in zip(turn.calls, digests, strict=True)]
    if recorded != offered:
        raise ConflictError(
            f"provider turn {turn.provider_turn_id!r} is recorded with other calls/arguments"
        )
    return tuple(effects)


def results(tx: Tx, scope: str, run_id: str, turn_seq: int) -> tuple[ToolResult, ...] | None:
    """The turn's results in call order; None while any effect is open (or unresolved under
    the run's ``hold`` policy)."""
    row = tx.one(
        "SELECT unresolved FROM ledger_runs WHERE scope = ? AND run_id = ?", (scope, run_id)
    )
    report = row is not None and row[0] == "report"
    out: list[ToolResult] = []
    for effect in _turn_effects(tx, scope, run_id, turn_seq):
        if (effect.state in SETTLED or effect.state is EffectState.DELIVERED) and effect.result:
            out.append(effect.result)
        elif report and effect.state in UNRESOLVED:
            out.append(ToolResult(effect.call_id, UNKNOWN_OUTCOME, is_error=True))
        else:
            return None
    return tuple(out)
