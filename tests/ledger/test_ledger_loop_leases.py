"""The host loop outlives its leases: a model turn that stays silent and then streams for
more than three ``lease_seconds``, then a tool that runs longer than its claim's lease,
complete through ``run()`` (sync and async, SQLite and PostgreSQL) with the tool run once.
Another worker probing mid-turn finds the run lease and the claim alive all along (without
renewal it would take the run, or recover the claim, and the test would fail).

A run taken by another worker mid-stream is the result ``lease_lost``, never an
exception; nothing is written after the loss and the new holder completes the run.

``CALLGATE_SLOW_LEASE=1`` adds the issue's own case: a 90 s paced turn with
``lease_seconds=30`` (four cells, a minute and a half each; not part of ``make test``).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import (
    EffectState,
    LeaseLostError,
    Ledger,
    RequestState,
    RunBusyError,
    Tool,
    ToolContext,
    open_ledger,
)
from callgate.loop import AsyncHostLoop, HostLoop, LoopResult, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call

from ..loop.loop_helpers import FINAL, MODEL, VARIANTS, base_url, remote_apply, remote_count

LEASE = 1.0
QUICK = {"first_byte_ms": 3200, "event_delay_ms": 100}  # > 3 leases without a byte
SLOW = os.environ.get("CALLGATE_SLOW_LEASE") == "1"
# (driver, store, variant): each driver and each store twice, four protocols.
CELLS = [
    ("sync", "sqlite", "anthropic"),
    ("sync", "postgres", "openai-stateful"),
    ("async", "sqlite", "gemini-stateful"),
    ("async", "postgres", "gemini-generate-content"),
]
SLOW_CELLS = [
    ("sync", "sqlite", "anthropic"),
    ("sync", "postgres", "openai-stateful"),
    ("async", "sqlite", "gemini-stateful"),
    ("async", "postgres", "openai-stateless"),
]


def _url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "sqlite":
        return f"sqlite:///{tmp_path / 'loop.db'}"
    url: str = request.getfixturevalue("pg_schema_url")
    return url


def _script(variant: str, pacing: dict[str, int], *, asks: int = 1) -> Any:
    protocol = VARIANTS[variant][0]
    b = ScriptBuilder(seed=11)
    b.turn(protocol, conversation=variant, calls=[call("refund", order_id=42)], pacing=pacing)
    for _ in range(asks - 1):  # a re-send after the loss gets a fresh, unpaced copy
        b.turn(protocol, conversation=variant, calls=[call("refund", order_id=42)])
    result = {"name": "refund", "output_contains": "42"}
    b.turn(protocol, conversation=variant, expect={"function_results": [result]}, text=FINAL)
    return b.build()


def _probe(url: str, run_id: str) -> list[str]:
    """What another worker could do right now that it must not: take the run, or recover
    (lose) a running attempt. Empty when both leases are alive."""
    wrong: list[str] = []
    with open_ledger(url) as other:
        try:
            taken = other.acquire_run(run_id, worker_id="intruder")
        except RunBusyError:
            pass
        else:
            other.release_run(taken)
            wrong.append("the run lease had run out")
        lost = other.recover("intruder").lost
        if lost:
            wrong.append(f"claims had run out: {lost}")
    return wrong


def _specs(remote: Path, *, sleep: float, probe: Any = None) -> list[ToolSpec]:
    def run(args: Any, ctx: ToolContext) -> Any:
        time.sleep(sleep)  # longer than the claim's lease (blocks an async loop too)
        if probe is not None:
            probe()
        remote_apply(remote, ctx.idempotency_token)
        return {"refunded": args["order_id"]}

    schema = {"type": "object", "properties": {"order_id": {"type": "integer"}}}
    return [ToolSpec(Tool("refund", run), description="Refund an order.", parameters=schema)]


def _drive(
    driver: str, server: MockServer, ledger: Ledger, variant: str, specs: list[ToolSpec],
    run_id: str, *, resume: bool = False, **kw: Any,
) -> LoopResult:  # fmt: skip
    protocol, store = VARIANTS[variant]
    args: dict[str, Any] = {
        "protocol": protocol,
        "base_url": base_url(server, protocol),
        "api_key": "k",
        "ledger": ledger,
        "tools": specs,
        "model": MODEL,
        "store": store,
        "headers": {"x-callgate-conversation": variant},
        "retry_backoff": 0.0,
        **kw,
    }
    if driver == "sync":
        with HostLoop(**args) as loop:
            return loop.resume(run_id) if resume else loop.run(run_id, "Refund order 42.")

    async def main() -> LoopResult:
        async with AsyncHostLoop(**args) as loop:
            if resume:
                return await loop.resume(run_id)
            return await loop.run(run_id, "Refund order 42.")

    return asyncio.run(main())


def _slow_turn(
    driver: str, store: str, variant: str, pacing: dict[str, int], lease: float,
    tmp_path: Path, request: pytest.FixtureRequest, *, probe_at: float, tool_sleep: float,
) -> None:  # fmt: skip
    url = _url(store, tmp_path, request)
    remote = tmp_path / "remote.log"
    run_id = f"slow-{driver}-{variant}"
    wrong: list[str] = []

    def probe_mid_stream() -> None:
        time.sleep(probe_at)  # inside the silent first byte
        wrong.extend(_probe(url, run_id))

    def probe_mid_tool() -> None:
        wrong.extend(_probe(url, run_id))

    specs = _specs(remote, sleep=tool_sleep, probe=probe_mid_tool)
    with MockServer(_script(variant, pacing)) as server, open_ledger(url) as ledger:
        prober = threading.Thread(target=probe_mid_stream)
        prober.start()
        try:
            result = _drive(driver, server, ledger, variant, specs, run_id, lease_seconds=lease)
        finally:
            prober.join()
        server.assert_script_done()
    assert result.status == "final", result
    assert result.text == FINAL
    assert wrong == []
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert effect.attempt == 1
    assert remote_count(remote) == 1


@pytest.mark.parametrize(("driver", "store", "variant"), CELLS, ids=["-".join(c) for c in CELLS])
def test_a_turn_and_a_tool_slower_than_the_lease_complete(
    driver: str, store: str, variant: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _slow_turn(driver, store, variant, QUICK, LEASE, tmp_path, request,
               probe_at=2.5 * LEASE, tool_sleep=1.6 * LEASE)  # fmt: skip


@pytest.mark.skipif(not SLOW, reason="the 90 s case runs with CALLGATE_SLOW_LEASE=1")
@pytest.mark.parametrize(
    ("driver", "store", "variant"), SLOW_CELLS, ids=["-".join(c) for c in SLOW_CELLS]
)
def test_a_90_second_turn_with_a_30_second_lease_completes(
    driver: str, store: str, variant: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # 40 s of silence, then at least 6 events 10 s apart: >= 90 s of model turn.
    pacing = {"first_byte_ms": 40_000, "event_delay_ms": 10_000}
    _slow_turn(driver, store, variant, pacing, 30.0, tmp_path, request,
               probe_at=35.0, tool_sleep=0.0)  # fmt: skip


STOLEN = [("sync", "sqlite"), ("async", "postgres")]


@pytest.mark.parametrize(("driver", "store"), STOLEN, ids=["-".join(c) for c in STOLEN])
def test_a_lease_taken_mid_stream_is_a_result_and_the_new_holder_finishes(
    driver: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(store, tmp_path, request)
    remote = tmp_path / "remote.log"
    variant, run_id = "anthropic", "run-stolen"
    specs = _specs(remote, sleep=0.0)
    taken: list[Any] = []

    def steal() -> None:
        """Once the turn is identified, expire the lease (as if the holder's renewals
        stopped reaching the database) and take the run as worker B."""
        with open_ledger(url) as other:
            for _ in range(400):
                if any(r.state is RequestState.IDENTIFIED for r in other.requests(run_id)):
                    break
                time.sleep(0.05)
            for _ in range(200):
                with other.transaction() as tx:
                    tx.run("UPDATE ledger_runs SET owner_until = 0 WHERE run_id = ?", (run_id,))
                try:
                    taken.append(other.acquire_run(run_id, worker_id="B", lease_seconds=30))
                    return
                except RunBusyError:
                    continue

    pacing = {"first_byte_ms": 0, "event_delay_ms": 400}
    with MockServer(_script(variant, pacing, asks=2)) as server, open_ledger(url) as ledger:
        stealer = threading.Thread(target=steal)
        stealer.start()
        try:
            lost = _drive(driver, server, ledger, variant, specs, run_id, lease_seconds=LEASE)
        finally:
            stealer.join()
        (stolen,) = taken
        requests_after_loss = ledger.requests(run_id)
        effects_after_loss = ledger.effects(run_id)
        done = _drive(driver, server, ledger, variant, specs, run_id, resume=True, worker_id="B")
        server.assert_script_done()
    assert lost.status == "lease_lost", lost
    assert isinstance(lost.error, LeaseLostError)
    assert (lost.error.epoch_held, lost.error.epoch_found) == (stolen.epoch - 1, stolen.epoch)
    assert lost.error.owner_found == "B"
    assert f"run {run_id!r}" in lost.detail
    assert f"epoch {stolen.epoch}" in lost.detail
    # Nothing after the loss: the turn was never recorded, no effect exists.
    assert [r.state for r in requests_after_loss] == [RequestState.IDENTIFIED]
    assert effects_after_loss == ()
    assert done.status == "final", done
    assert remote_count(remote) == 1


def test_overlapping_async_runs_on_one_loop_each_keep_their_lease(tmp_path: Path) -> None:
    """A quick run ending while a slow one waits on its model must not stop the slow
    run's renewals: each run's lease has its own keeper."""
    url = f"sqlite:///{tmp_path / 'loop.db'}"
    remote = tmp_path / "remote.log"
    protocol = "anthropic_messages"
    b = ScriptBuilder(seed=5)  # order-free: the two runs interleave on one conversation
    refund = [call("refund", order_id=42)]
    b.fixture(protocol, match={"last_user_text": "slow", "has_tool_results": False},
              calls=refund, pacing=QUICK)  # fmt: skip
    b.fixture(protocol, match={"last_user_text": "quick", "has_tool_results": False},
              calls=refund)  # fmt: skip
    b.fixture(protocol, match={"has_tool_results": True}, text=FINAL)
    wrong: list[str] = []

    def probe_slow_run() -> None:
        time.sleep(2.5 * LEASE)
        wrong.extend(_probe(url, "run-slow"))

    async def main(server: MockServer, ledger: Ledger) -> list[LoopResult]:
        loop = AsyncHostLoop(
            protocol=protocol,
            base_url=server.anthropic_base_url,
            api_key="k",
            ledger=ledger,
            tools=_specs(remote, sleep=0.0),
            model=MODEL,
            lease_seconds=LEASE,
        )
        async with loop:
            quick = asyncio.ensure_future(loop.run("run-quick", "quick"))
            await asyncio.sleep(0)  # the quick run opens its lease first
            return list(await asyncio.gather(quick, loop.run("run-slow", "slow")))

    with MockServer(b.build()) as server, open_ledger(url) as ledger:
        prober = threading.Thread(target=probe_slow_run)
        prober.start()
        try:
            results = asyncio.run(main(server, ledger))
        finally:
            prober.join()
    assert [r.status for r in results] == ["final", "final"], results
    assert wrong == []
    assert remote_count(remote) == 2
