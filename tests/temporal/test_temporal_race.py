"""Workers racing on one PostgreSQL ledger: the effect activity of each effect dispatched
to 2 and to 4 workers at once (what Temporal does when it believes an attempt lost while
it still runs: a heartbeat timeout during a network partition). The ledger's claim inside
the activity lets exactly one of them run it; the others are told to retry (a live claim)
or find it committed."""

from __future__ import annotations

import random
import threading
from collections import Counter
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from callgate.ledger import EffectClass, EffectState, Tool, open_ledger
from callgate.loop import ToolSpec
from callgate.temporal import CallgateActivities

from ..ledger.ledger_harness import record, remote_apply, remote_count, require_postgres

EFFECTS = 8


@pytest.mark.parametrize("workers", [2, 4])
def test_racing_effect_activities_claim_each_effect_exactly_once(
    workers: int, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    require_postgres()
    url: str = request.getfixturevalue("pg_schema_url")
    remote = tmp_path / "remote.log"

    def pay(args: object, ctx: object) -> object:
        remote_apply(remote, ctx.idempotency_token, dedup=False)  # type: ignore[attr-defined]
        return "paid"

    tool = Tool("pay", pay, effect=EffectClass.AT_MOST_ONCE)
    with open_ledger(url, tools=[tool]) as ledger:
        effects = record(ledger, "race", [(f"c{i}", "pay", {"i": i}) for i in range(EFFECTS)])
    ids = [e.effect_id for e in effects]
    start = threading.Barrier(workers)
    outcomes: Counter[str] = Counter()
    guard = threading.Lock()

    def worker(n: int) -> None:
        acts = CallgateActivities(url, tools=[ToolSpec(tool)], loop={}, worker_id=f"w{n}")
        env = ActivityEnvironment()
        order = list(ids)
        random.Random(n).shuffle(order)
        start.wait()
        for effect_id in order:
            try:
                ref = env.run(acts.run_effect, effect_id)
                seen = ref.state
            except ApplicationError as exc:
                seen = exc.type or "error"
            with guard:
                outcomes[seen] += 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sum(outcomes.values()) == workers * EFFECTS
    assert set(outcomes) <= {"committed", "EffectClaimed"}, outcomes
    with open_ledger(url) as ledger:
        for effect in ledger.effects("race"):
            assert effect.state is EffectState.COMMITTED
            assert [e.event for e in ledger.audit(effect.effect_id)].count("claim") == 1
            assert remote_count(remote, effect.idempotency_token) == 1
