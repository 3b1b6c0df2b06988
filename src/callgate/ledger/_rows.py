"""Rows to records and back: the column lists, JSON columns and the audit writer."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import UsageError
from .._results import ToolResult
from ._bodies import join_body
from ._model import (
    AuditEvent,
    EffectClass,
    EffectRecord,
    EffectState,
    RequestRecord,
    RequestState,
)
from ._parts import as_output, decode_result, encode_result
from ._store import Row, Tx

__all__ = [
    "AUDIT_INSERT",
    "AUDIT_VALUES",
    "EFFECT_COLUMNS",
    "EVENT_COLUMNS",
    "OUTBOX_COLUMNS",
    "REQUEST_COLUMNS",
    "OutboxMessage",
    "RawSQL",
    "audit",
    "dump",
    "effect_from_row",
    "event_from_row",
    "load",
    "one_effect",
    "outbox_from_row",
    "request_from_row",
    "requires_approval",
    "result_json",
    "select_effects",
    "tool_result_text",
    "write_audited",
]


@dataclasses.dataclass(frozen=True, slots=True)
class RawSQL:
    """A SQL expression (never user input) used as a column's new value; ``params`` fill
    its ``?`` placeholders (e.g. ``RawSQL("{now} + ?", (30.0,))``)."""

    sql: str
    params: tuple[Any, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class OutboxMessage:
    """One outbox row under a relay's lease (state ``sending``), as ``send`` receives it."""

    outbox_id: str
    effect_id: str
    topic: str
    payload: Any
    idempotency_token: str
    attempt: int


EFFECT_COLUMNS = (
    "effect_id, run_id, turn_seq, position, call_id, tool, effect_class, arguments, "
    "args_digest, idempotency_token, state, version, attempt, epoch, lease_owner, result, "
    "business_key, duplicate_of, delivered_request_id, scope, lease_until"
)
REQUEST_COLUMNS = (
    "request_id, run_id, seq, state, provider, request_digest, provider_turn_id, "
    "carries_turn, provider_side_effects, body, body_blobs"
)
OUTBOX_COLUMNS = "outbox_id, effect_id, topic, payload, idempotency_token, attempts"
EVENT_COLUMNS = "seq, effect_id, run_id, from_state, to_state, event, epoch, actor, detail, at"


def dump(value: Any) -> str:
    """Canonical JSON text (refuses non-JSON values with UsageError)."""
    return canonical_bytes(value).decode("utf-8")


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def result_json(output: Any, is_error: bool) -> str:
    return dump({"output": output, "is_error": is_error})


def tool_result_text(tx: Tx, value: Any, is_error: bool) -> str:
    """The result column's text for what a tool returned: a plain value (see
    :func:`model_output`), or a :class:`ToolResult` / tuple of parts / ``Internal``, whose
    media go to the blob table in ``tx`` (see ``ledger/_parts.py``)."""
    rich = as_output(value)
    if rich is None:
        return result_json(model_output(value), is_error)
    output, flagged, audit_value = rich
    return encode_result(tx, output, is_error or flagged, audit_value)


def effect_from_row(row: Row, tx: Tx | None = None) -> EffectRecord:
    """The record a row holds; ``tx`` reads the media a result with parts names."""
    stored = load(row[15])
    result: ToolResult | None = None
    if stored is not None:
        result = decode_result(tx, row[4], stored)
    return EffectRecord(
        effect_id=row[0],
        run_id=row[1],
        turn_seq=int(row[2]),
        position=int(row[3]),
        call_id=row[4],
        tool=row[5],
        effect_class=EffectClass(row[6]),
        arguments=load(row[7]),
        args_digest=row[8],
        idempotency_token=row[9],
        state=EffectState(row[10]),
        version=int(row[11]),
        attempt=int(row[12]),
        epoch=int(row[13]),
        lease_owner=row[14],
        result=result,
        business_key=row[16],
        duplicate_of=row[17],
        delivered_request_id=row[18],
        scope=row[19],
        lease_until=None if row[20] is None else float(row[20]),
    )


def request_from_row(row: Row, tx: Tx | None = None) -> RequestRecord:
    return RequestRecord(
        request_id=row[0],
        run_id=row[1],
        seq=int(row[2]),
        state=RequestState(row[3]),
        provider=row[4],
        request_digest=row[5],
        provider_turn_id=row[6],
        carries_turn=None if row[7] is None else int(row[7]),
        provider_side_effects=bool(row[8]),
        body=join_body(tx, load(row[9]), row[10]),
    )


def outbox_from_row(row: Row, tx: Tx | None = None) -> OutboxMessage:
    return OutboxMessage(row[0], row[1], row[2], load(row[3]), row[4], int(row[5]))


def event_from_row(row: Row) -> AuditEvent:
    return AuditEvent(
        seq=int(row[0]),
        effect_id=row[1],
        run_id=row[2],
        from_state=row[3],
        to_state=row[4],
        event=row[5],
        epoch=None if row[6] is None else int(row[6]),
        actor=row[7],
        detail=load(row[8]),
        at=float(row[9]),
    )


def audit(
    tx: Tx,
    *,
    scope: str,
    run_id: str,
    effect_id: str | None = None,
    request_id: str | None = None,
    from_state: str | None,
    to_state: str,
    event: str,
    actor: str,
    epoch: int | None = None,
    detail: Any = None,
) -> None:
    """Append one audit row in the caller's transaction (every transition writes one)."""
    tx.run(
        AUDIT_INSERT + AUDIT_VALUES,
        (
            scope,
            run_id,
            effect_id,
            request_id,
            from_state,
            to_state,
            event,
            epoch,
            actor,
            dump(detail),
        ),
    )


AUDIT_INSERT = (
    "INSERT INTO ledger_events (scope, run_id, effect_id, request_id, from_state, "
    "to_state, event, epoch, actor, detail, at) VALUES "
)
AUDIT_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {now})"


def write_audited(
    tx: Tx, sql: str, params: Sequence[Any], audit_sql: str, audit_params: Sequence[Any]
) -> None:
    """Run the write ``sql`` and then the audit insert ``audit_sql`` (neither reads the
    other's rows); on PostgreSQL as one statement, one round trip."""
    if tx.dialect == "sqlite":
        tx.run(sql, params)
        tx.run(audit_sql, audit_params)
    else:  # a data-modifying WITH always runs to completion
        tx.run(f"WITH written AS ({sql}) {audit_sql}", [*params, *audit_params])


def select_effects(tx: Tx, where: str, params: Sequence[Any]) -> list[EffectRecord]:
    rows = tx.rows(f"SELECT {EFFECT_COLUMNS} FROM ledger_effects WHERE {where}", params)  # noqa: S608
    return [effect_from_row(row, tx) for row in rows]


def one_effect(tx: Tx, effect_id: str) -> EffectRecord:
    """The effect's record; :class:`UsageError` if there is none."""
    found = select_effects(tx, "effect_id = ?", (effect_id,))
    if not found:
        raise UsageError(f"no effect {effect_id!r}")
    return found[0]


def requires_approval(tx: Tx, effect_id: str) -> bool:
    """Whether the effect's tool needed an approval when the effect was recorded."""
    row = tx.one("SELECT requires_approval FROM ledger_effects WHERE effect_id = ?", (effect_id,))
    return bool(row and row[0])


def model_output(value: Any) -> Any:
    """What a tool returned, as a ToolResult output (str, dict or list)."""
    if isinstance(value, str | dict | list):
        return value
    try:
        return dump(value)
    except UsageError:
        return repr(value)
