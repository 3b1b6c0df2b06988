"""LOCAL_TX effects and the outbox.

A ``LOCAL_TX`` tool runs inside the ledger's own transaction: its writes, any outbox rows
it adds and the effect's ``committed`` state commit together or not at all, so a crash
anywhere before the commit leaves nothing applied (and the class may simply re-run).
Outbox rows are sent later by :func:`relay` under a lease, each with its idempotency
token: sending is at-least-once, so the receiver must deduplicate on the token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._digest import canonical_digest
from ._model import Claim, EffectFailed, EffectRecord, FencedError, Tool, ToolContext
from ._rows import dump, load, model_output, result_json
from ._store import Row, Tx

if TYPE_CHECKING:
    from ._ledger import Ledger

__all__ = ["LocalTx", "OutboxMessage", "relay", "run_local"]


@dataclasses.dataclass(frozen=True, slots=True)
class OutboxMessage:
    outbox_id: str
    effect_id: str
    topic: str
    payload: Any
    idempotency_token: str
    attempt: int


class LocalTx:
    """The ledger transaction a ``LOCAL_TX`` tool writes through (``?`` placeholders)."""

    def __init__(self, tx: Tx, effect_id: str, token: str) -> None:
        self._tx = tx
        self._effect_id = effect_id
        self._token = token
        self._count = 0

    @property
    def dialect(self) -> str:
        return self._tx.dialect

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # Braces would be read as store tokens; a tool's SQL has no use for them.
        return self._tx.rows(sql.replace("{", "{{").replace("}", "}}"), params)

    def outbox(self, topic: str, payload: Any) -> str:
        """Queue a message to send after the commit; returns its idempotency token."""
        token = f"{self._token}:{self._count}"
        outbox_id = canonical_digest({"effect": self._effect_id, "n": self._count})
        self._count += 1
        self._tx.run(
            "INSERT INTO ledger_outbox (outbox_id, effect_id, topic, payload, idempotency_token, "
            "state, attempts, created_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, {now})",
            (outbox_id, self._effect_id, topic, dump(payload), token),
        )
        return token


class _Fenced(Exception):  # noqa: N818 - private: roll the local transaction back
    pass


def run_local(ledger: Ledger, claim: Claim, tool: Tool, ctx: ToolContext) -> EffectRecord:
    """Run a LOCAL_TX tool and commit its writes with the effect, fenced by the claim."""
    failure: Any = None
    try:
        with ledger.transaction() as tx:
            ctx = dataclasses.replace(ctx, tx=LocalTx(tx, claim.effect_id, claim.idempotency_token))
            output = tool.run(claim.arguments, ctx)
            ledger.fault("after_return")
            if ledger._settle_tx(tx, claim, "commit", _result(output, False)) is None:
                raise _Fenced
    except _Fenced:
        return ledger.effect(claim.effect_id)
    except EffectFailed as exc:
        failure = exc.output
    except Exception as exc:  # rolled back: definitely not applied
        failure = f"error: {type(exc).__name__}: {exc}"
    if failure is not None:
        try:
            return ledger.settle(claim, failure, is_error=True, applied=False)
        except FencedError:
            return ledger.effect(claim.effect_id)
    ledger.fault("after_commit")
    return ledger.effect(claim.effect_id)


def _result(output: Any, is_error: bool) -> str:
    return result_json(model_output(output), is_error)


def relay(
    ledger: Ledger,
    send: Callable[[OutboxMessage], None],
    *,
    worker_id: str,
    lease_seconds: float = 30.0,
    limit: int = 100,
) -> int:
    """Send up to ``limit`` pending outbox rows (and ones whose sending lease expired);
    return how many were sent. If ``send`` raises, the row goes back to pending and the
    exception propagates."""
    sent = 0
    while sent < limit:
        with ledger.transaction() as tx:
            row = tx.one(
                "UPDATE ledger_outbox SET state = 'sending', attempts = attempts + 1, "
                "lease_owner = ?, lease_until = {now} + ? WHERE outbox_id = (SELECT outbox_id "
                "FROM ledger_outbox WHERE state = 'pending' OR (state = 'sending' AND "
                "lease_until < {now}) ORDER BY created_at, outbox_id LIMIT 1 {skip_locked}) "
                "RETURNING outbox_id, effect_id, topic, payload, idempotency_token, attempts",
                (worker_id, lease_seconds),
            )
        if row is None:
            return sent
        message = OutboxMessage(row[0], row[1], row[2], load(row[3]), row[4], int(row[5]))
        try:
            send(message)
        except BaseException:
            _mark(ledger, message, worker_id, "pending")
            raise
        ledger.fault("after_relay_send")
        _mark(ledger, message, worker_id, "sent")
        sent += 1
    return sent


def _mark(ledger: Ledger, message: OutboxMessage, worker_id: str, state: str) -> None:
    sent_at = "{now}" if state == "sent" else "NULL"
    with ledger.transaction() as tx:
        tx.run(
            "UPDATE ledger_outbox SET state = ?, lease_owner = NULL, lease_until = NULL, "  # noqa: S608
            f"sent_at = {sent_at} WHERE outbox_id = ? AND lease_owner = ? AND attempts = ?",
            (state, message.outbox_id, worker_id, message.attempt),
        )
