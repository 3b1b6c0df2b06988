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
from typing import Any

from .._digest import canonical_digest
from ._attempts import settle, settle_tx
from ._model import Claim, EffectFailed, EffectRecord, FencedError, Tool, ToolContext
from ._rows import OutboxMessage, RawSQL, dump, one_effect, tool_result_text
from ._store import Row, Store, Tx
from ._transitions import OUTBOX, EffectEvent, OutboxEvent, OutboxState, move_row, move_where

__all__ = ["LocalTx", "OutboxMessage", "relay", "run_local"]

FaultHook = Callable[[str], None]


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
            "state, attempts, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, {now})",
            (
                outbox_id,
                self._effect_id,
                topic,
                dump(payload),
                token,
                OUTBOX.start[OutboxEvent.ENQUEUE].value,
            ),
        )
        return token


class _Fenced(Exception):  # noqa: N818 - private: roll the local transaction back
    pass


def run_local(
    store: Store, claim: Claim, tool: Tool, ctx: ToolContext, fault: FaultHook
) -> EffectRecord:
    """Run a LOCAL_TX tool and commit its writes with the effect, fenced by the claim."""
    failure: Any = None
    try:
        with store.transaction() as tx:
            ctx = dataclasses.replace(ctx, tx=LocalTx(tx, claim.effect_id, claim.idempotency_token))
            output = tool.run(claim.arguments, ctx)
            fault("after_return")
            text = tool_result_text(tx, output, False)
            if settle_tx(tx, claim, EffectEvent.COMMIT, text) is None:
                raise _Fenced
    except _Fenced:
        return _effect(store, claim.effect_id)
    except EffectFailed as exc:
        failure = exc.output
    except Exception as exc:  # rolled back: definitely not applied
        failure = f"error: {type(exc).__name__}: {exc}"
    if failure is not None:
        try:
            return settle(store, claim, failure, is_error=True, applied=False)
        except FencedError:
            return _effect(store, claim.effect_id)
    fault("after_commit")
    return _effect(store, claim.effect_id)


def _effect(store: Store, effect_id: str) -> EffectRecord:
    with store.read() as tx:
        return one_effect(tx, effect_id)


def relay(
    store: Store,
    send: Callable[[OutboxMessage], None],
    *,
    worker_id: str,
    lease_seconds: float,
    limit: int,
    fault: FaultHook,
) -> int:
    """Send up to ``limit`` pending outbox rows (and ones whose sending lease expired);
    return how many were sent. If ``send`` raises, the row goes back to pending and the
    exception propagates."""
    lease = {
        "attempts": RawSQL("attempts + 1"),
        "lease_owner": worker_id,
        "lease_until": RawSQL("{now} + ?", (lease_seconds,)),
    }
    sent = 0
    while sent < limit:
        with store.transaction() as tx:
            taken: list[OutboxMessage] = move_where(
                tx,
                OUTBOX,
                OutboxEvent.LEASE,
                "outbox_id = (SELECT outbox_id FROM ledger_outbox WHERE state = 'pending' OR "
                "(state = 'sending' AND lease_until < {now}) ORDER BY created_at, outbox_id "
                "LIMIT 1 {skip_locked})",
                (),
                sets=lease,
            )
        if not taken:
            return sent
        message = taken[0]
        try:
            send(message)
        except BaseException:
            _mark(store, message, worker_id, OutboxEvent.RELEASE)
            raise
        fault("after_relay_send")
        _mark(store, message, worker_id, OutboxEvent.SEND)
        sent += 1
    return sent


def _mark(store: Store, message: OutboxMessage, worker_id: str, event: OutboxEvent) -> None:
    """sending -> sent / pending, fenced by the relay's lease (owner and attempt)."""
    sets = {
        "lease_owner": None,
        "lease_until": None,
        "sent_at": RawSQL("{now}") if event is OutboxEvent.SEND else None,
    }
    with store.transaction() as tx:
        move_row(
            tx,
            OUTBOX,
            message.outbox_id,
            OutboxState.SENDING,  # a message exists only while its row is sending
            event,
            sets=sets,
            fence={"lease_owner": worker_id, "attempts": message.attempt},
        )
