"""Shared helpers for the ledger tests: recording turns, an fsynced append-only remote, the
tools of the crash matrix, and the child process the crash tests SIGKILL.

Run as a script (``python ledger_harness.py URL EFFECT_CLASS FAULT_POINT REMOTE RUN``) it
records one turn with one call and executes it, killing itself at FAULT_POINT.
"""

from __future__ import annotations

import fcntl
import functools
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callgate.ledger import (
    Applied,
    CallInput,
    EffectClass,
    EffectRecord,
    Ledger,
    NotApplied,
    OutboxMessage,
    Tool,
    ToolContext,
    TurnInput,
    open_ledger,
)

PG_URL = os.environ.get("CALLGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@functools.cache
def postgres_unavailable() -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'callgate[postgres]')"
    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except Exception as exc:
        return f"PostgreSQL at {PG_URL} is unreachable: {exc}"
    return None


def require_postgres() -> None:
    import pytest  # not at the top: the crash child runs this file without pytest

    reason = postgres_unavailable()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


_turns = iter(range(1, 1 << 30))


def record(
    ledger: Ledger,
    run_id: str,
    calls: Sequence[tuple[str, str, Any]],
    *,
    provider_turn_id: str | None = None,
    digest: str | None = None,
    carries_turn: int | None = None,
) -> tuple[EffectRecord, ...]:
    """Record request -> sent -> identified -> turn, as the loop will."""
    turn_id = provider_turn_id or f"resp_{os.getpid()}_{next(_turns)}"
    req = ledger.record_request(
        run_id, provider="test", request_digest="req-digest", carries_turn=carries_turn
    )
    ledger.mark_sent(req.request_id)
    ledger.identify(req.request_id, turn_id)
    turn = TurnInput(
        provider="test",
        provider_turn_id=turn_id,
        digest=digest or f"turn-digest-{turn_id}",
        snapshot={"id": turn_id},
        calls=[CallInput(call_id, tool, args) for call_id, tool, args in calls],
    )
    return ledger.record_turn(req.request_id, turn)


# -- the remote: an append-only file, fsynced, one line per application ------------------


def remote_apply(path: Path, token: str, *, dedup: bool) -> None:
    """Apply an effect at the remote. With ``dedup`` (a remote honouring idempotency keys)
    a token already applied is a no-op."""
    with open(path, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        if dedup and token in fh.read().split():
            return
        fh.write(token + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def remote_count(path: Path, token: str) -> int:
    if not path.exists():
        return 0
    return path.read_text(encoding="utf-8").split().count(token)


def crash_tools(remote: Path, kill_at: str | None = None) -> list[Tool]:
    """One tool per effect class, all applying to ``remote`` (the read tool only reads)."""

    def sent() -> None:
        if kill_at == "after_sent":
            os.kill(os.getpid(), signal.SIGKILL)

    def write(dedup: bool) -> Any:
        def run(args: Any, ctx: ToolContext) -> Any:
            remote_apply(remote, ctx.idempotency_token, dedup=dedup)
            sent()
            return {"applied": ctx.idempotency_token}

        return run

    def read(args: Any, ctx: ToolContext) -> Any:
        count = remote_count(remote, "anything")
        sent()
        return {"seen": count}

    def verify(args: Any, ctx: ToolContext) -> Any:
        if remote_count(remote, ctx.idempotency_token):
            return Applied({"applied": ctx.idempotency_token, "verified": True})
        return NotApplied()

    def local(args: Any, ctx: ToolContext) -> Any:
        ctx.tx.execute("CREATE TABLE IF NOT EXISTS crash_local (token TEXT PRIMARY KEY)")
        ctx.tx.execute("INSERT INTO crash_local (token) VALUES (?)", (ctx.idempotency_token,))
        ctx.tx.outbox("remote", {"token": ctx.idempotency_token})
        sent()
        return {"queued": ctx.idempotency_token}

    return [
        Tool("read", read, effect=EffectClass.READ),
        Tool("idem", write(True), effect=EffectClass.IDEMPOTENT_REMOTE),
        Tool("verif", write(False), effect=EffectClass.VERIFIABLE, verify=verify),
        Tool("amo", write(False), effect=EffectClass.AT_MOST_ONCE),
        Tool("amo_approved", write(False), requires_approval=True),
        Tool("local", local, effect=EffectClass.LOCAL_TX),
    ]


def outbox_sender(remote: Path) -> Any:
    def send(message: OutboxMessage) -> None:
        remote_apply(remote, message.idempotency_token, dedup=True)

    return send


def _child(url: str, tool: str, point: str, remote: str, run_id: str) -> None:
    def fault(name: str) -> None:
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)

    ledger = open_ledger(url, tools=crash_tools(Path(remote), point), fault=fault)
    effects = ledger.effects(run_id)
    if not effects:
        effects = record(ledger, run_id, [("call_1", tool, {"n": 1})])
    if effects[0].state.value == "awaiting_approval":
        ledger.approve(effects[0].effect_id, actor="test")
    ledger.execute(effects[0].effect_id, worker_id="child", lease_seconds=0.2)
    if point == "after_relay_send":
        ledger.relay(outbox_sender(Path(remote)), worker_id="child", lease_seconds=0.2)
    ledger.close()


if __name__ == "__main__":
    _child(*sys.argv[1:6])
