"""N processes race to claim the same effects: each effect is claimed exactly once."""

from __future__ import annotations

import multiprocessing
import random
from collections import Counter
from typing import Any

from callgate.ledger import EffectClass, Tool, open_ledger

from .ledger_harness import record

WORKERS = 4
EFFECTS = 12


def _noop(args: Any, ctx: Any) -> Any:
    return "ok"


def _racer(url: str, ids: list[str], seed: int, start: Any, out: Any) -> None:
    ledger = open_ledger(url, tools=[Tool("t", _noop, effect=EffectClass.IDEMPOTENT_REMOTE)])
    order = list(ids)
    random.Random(seed).shuffle(order)
    start.wait()
    won = [e for e in order if ledger.claim(e, worker_id=f"w{seed}") is not None]
    while (claim := ledger.claim_next(worker_id=f"w{seed}")) is not None:
        won.append(claim.effect_id)
    ledger.close()
    out.put(won)


def test_racing_processes_claim_each_effect_exactly_once(store_url: str) -> None:
    with open_ledger(store_url, tools=[Tool("t", _noop)]) as ledger:
        first = record(ledger, "race", [(f"c{i}", "t", {"i": i}) for i in range(EFFECTS)])
        second = record(ledger, "race", [(f"d{i}", "t", {"i": i}) for i in range(EFFECTS)])
    by_id = [e.effect_id for e in first]  # claimed by id; the second batch by claim_next
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(store_url, by_id, seed, start, out))
        for seed in range(WORKERS)
    ]
    for proc in procs:
        proc.start()
    start.set()
    won = [eid for _ in procs for eid in out.get(timeout=120)]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    counts = Counter(won)
    assert set(counts) == {e.effect_id for e in (*first, *second)}
    assert set(counts.values()) == {1}
    with open_ledger(store_url) as ledger:
        for effect in ledger.effects("race"):
            assert effect.attempt == 1
            assert [e.event for e in ledger.audit(effect.effect_id)].count("claim") == 1
