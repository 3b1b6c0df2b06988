"""PostgreSQL writes a move and its audit row in one statement (and a few other pairs):
the audit trail must come out exactly as SQLite's, statement for statement, and the
per-call path must keep its statement and transaction counts (bench/ledger_scaling.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from callgate.ledger import CallInput, EffectClass, Ledger, Tool, TurnInput, open_ledger


def _tools() -> list[Tool]:
    def run(args: Any, ctx: Any) -> Any:
        return {"ok": args["n"]}

    return [
        Tool("amo", run),
        Tool("keyed", run, effect=EffectClass.IDEMPOTENT_REMOTE,
             business_key=lambda a: f"k{a['n']}", on_business_duplicate="replay"),
    ]  # fmt: skip


def _scenario(ledger: Ledger) -> None:
    """Every writer the one-statement forms touch: a request and its audit, a turn with
    effects (a business duplicate among them), claim_next, settle, a claim_as turn, a
    continuation identified (delivery) and a failed request."""
    req = ledger.record_request("run", provider="p", request_digest="r1", sent=True)
    calls = [CallInput("a", "amo", {"n": 1}), CallInput("b", "keyed", {"n": 2})]
    first = ledger.record_turn(req.request_id, TurnInput("p", "t1", "d1", {"x": 1}, calls))
    while (claim := ledger.claim_next(worker_id="w1")) is not None:
        ledger.run_claim(claim, ledger.tool(claim.tool))  # type: ignore[arg-type]
    req2 = ledger.record_request(
        "run", provider="p", request_digest="r2", body={"b": [1]}, carries_turn=1
    )
    assert (req2.body, req2.carries_turn, req2.seq) == ({"b": [1]}, 1, 2)
    assert ledger.request(req2.request_id) == req2  # the record returned is the one stored
    ledger.mark_sent(req2.request_id)
    ledger.identify(req2.request_id, "t2")
    again = [CallInput("c", "keyed", {"n": 2}), CallInput("d", "amo", {"n": 3})]
    second = ledger.record_turn(
        req2.request_id, TurnInput("p", "t2", "d2", {}, again), claim_as="w2"
    )
    for effect in second:
        if effect.state.value == "executing":
            ledger.settle(ledger.held_claim(effect), {"done": True})
    req3 = ledger.record_request("run", provider="p", request_digest="r3")
    ledger.request_failed(req3.request_id, definite=False, reason="timeout")
    assert [e.turn_seq for e in (*first, *second)] == [1, 1, 2, 2]


def _trail(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.reading() as tx:
        rows = tx.rows(
            "SELECT effect_id, request_id, run_id, from_state, to_state, event, epoch, actor, "
            "detail FROM ledger_events ORDER BY seq"
        )
    return [tuple(row) for row in rows]


def test_audit_trail_is_the_same_on_both_stores(tmp_path: Path, pg_schema_url: str) -> None:
    trails = []
    for url in (f"sqlite:///{tmp_path / 'l.db'}", pg_schema_url):
        with open_ledger(url, tools=_tools()) as ledger:
            _scenario(ledger)
            trails.append(_trail(ledger))
    assert len(trails[0]) > 20
    assert trails[0] == trails[1]
    details = {row[8] for row in trails[1]}
    assert '{"attempt":1}' in details  # the claim's detail, written by SQL on PostgreSQL
    assert any(d.startswith('{"duplicate_of":') for d in details)


def test_per_call_statements_on_postgres(
    pg_schema_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """record_request, record_turn, claim_next, run_claim for a one-call turn: four
    transactions (four commits: R5, R1, the claim, the result) and 12 statements."""
    with open_ledger(pg_schema_url, tools=_tools()) as ledger:
        ledger.open_run("run")
        counts = {"statements": 0, "transactions": 0}
        execute = psycopg.Cursor.execute

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["statements"] += 1
            return execute(self, *args, **kwargs)

        store = ledger._store
        opened = store.transaction

        def transaction() -> Any:
            counts["transactions"] += 1
            return opened()

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)
        monkeypatch.setattr(store, "transaction", transaction)
        req = ledger.record_request("run", provider="p", request_digest="r", sent=True)
        turn = TurnInput("p", "t1", "d", {}, [CallInput("a", "amo", {"n": 1})])
        ledger.record_turn(req.request_id, turn)
        claim = ledger.claim_next(worker_id="w")
        assert claim is not None
        assert ledger.run_claim(claim, ledger.tool("amo")).state.value == "committed"  # type: ignore[arg-type]
        assert counts == {"statements": 12, "transactions": 4}


def test_record_turn_holds_the_run_lock(pg_schema_url: str) -> None:
    """record_turn takes the run's advisory lock inside its request read: while another
    transaction holds that lock (as record_request does), record_turn waits for it. The
    wait is observed in pg_locks (an ungranted advisory lock on the run's key), not timed."""
    import threading
    import uuid

    import psycopg

    run_id = f"run-{uuid.uuid4().hex}"
    with open_ledger(pg_schema_url, tools=_tools()) as ledger, ledger.reopen() as other:
        ledger.open_run(run_id)
        req = ledger.record_request(run_id, provider="p", request_digest="r", sent=True)
        turn = TurnInput("p", "t1", "d", {}, [CallInput("a", "amo", {"n": 1})])
        done = threading.Event()

        def record() -> None:
            other.record_turn(req.request_id, turn)
            done.set()

        key = ledger._run_key(run_id)
        with psycopg.connect(pg_schema_url, autocommit=True) as watch:
            row = watch.execute("SELECT hashtextextended(%s, 0)", (key,)).fetchone()
            assert row is not None
            unsigned = row[0] & (2**64 - 1)
            waiting_sql = (
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                " AND classid = %s::oid AND objid = %s::oid"
            )
            with ledger.transaction() as tx:
                tx.lock_run(key)
                worker = threading.Thread(target=record)
                worker.start()
                waiting = 0
                for _ in range(3000):  # until record_turn queues behind the held lock
                    count = watch.execute(waiting_sql, (unsigned >> 32, unsigned & 0xFFFFFFFF))
                    waiting = count.fetchone()[0]  # type: ignore[index]
                    if waiting or done.is_set():
                        break
                    time.sleep(0.01)
                assert waiting == 1
                assert not done.is_set()
        worker.join(timeout=30)
        assert done.is_set()
        assert [e.turn_seq for e in ledger.effects(run_id)] == [1]
