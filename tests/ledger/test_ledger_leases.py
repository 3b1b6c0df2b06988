"""Run leases and claims kept alive while a worker waits, fenced by epoch, on both stores:
renewal on the database clock, a lease that ran out untaken goes on, a taken one is lost
(with the epochs), the keeper thread renews both kinds, and what waits is listed and said
in words with its lease's expiry."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from callgate.cli import main
from callgate.ledger import (
    FencedError,
    LeaseKeeper,
    LeaseLostError,
    Ledger,
    RequestState,
    RunBusyError,
    Tool,
    iso_utc,
    waits_for,
)

from .ledger_harness import record

Make = Callable[..., Ledger]


def _tools() -> list[Tool]:
    return [Tool("refund", lambda args, ctx: {"refunded": args})]


def _run_row(ledger: Ledger, run_id: str) -> tuple[Any, ...]:
    with ledger.reading() as tx:
        row = tx.one(
            "SELECT owner, owner_epoch, owner_until FROM ledger_runs WHERE run_id = ?", (run_id,)
        )
    assert row is not None
    return tuple(row)


def _expire_run(ledger: Ledger, run_id: str) -> None:
    """The holder's renewals stopped reaching the database: its lease runs out now."""
    with ledger.transaction() as tx:
        tx.run("UPDATE ledger_runs SET owner_until = 0 WHERE run_id = ?", (run_id,))


def _steal(ledger: Ledger, run_id: str, worker: str) -> Any:
    """Take the run as another worker would once the lease ran out (a live keeper may renew
    between the expiry and the take: try again, as a real worker would)."""
    for _ in range(200):
        _expire_run(ledger, run_id)
        try:
            return ledger.acquire_run(run_id, worker_id=worker, lease_seconds=30)
        except RunBusyError:
            continue
    raise AssertionError("the run could not be taken")


def test_renewal_extends_the_run_lease_on_the_database_clock(make_ledger: Make) -> None:
    ledger = make_ledger()
    lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=5)
    before = float(_run_row(ledger, "run")[2])
    until = ledger.renew_run(lease, lease_seconds=600)
    assert float(_run_row(ledger, "run")[2]) == until
    assert until >= before + 590
    assert abs(time.time() + 600 - until) < 60  # the same epoch scale as the worker's


def test_a_lease_that_ran_out_untaken_is_renewed_and_its_writes_go_on(make_ledger: Make) -> None:
    ledger = make_ledger()
    lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=30)
    _expire_run(ledger, "run")
    req = ledger.record_request("run", provider="p", request_digest="d", lease=lease)
    ledger.mark_sent(req.request_id, lease=lease)
    ledger.renew_run(lease, lease_seconds=30)
    assert ledger.identify(req.request_id, "resp_1", lease=lease).state is RequestState.IDENTIFIED


def test_a_taken_lease_is_lost_and_names_both_epochs(make_ledger: Make) -> None:
    ledger = make_ledger()
    lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=30)
    req = ledger.record_request("run", provider="p", request_digest="d", lease=lease)
    taken = _steal(ledger, "run", "w2")
    assert taken.epoch == lease.epoch + 1
    with pytest.raises(LeaseLostError) as lost:
        ledger.renew_run(lease)
    assert (lost.value.run_id, lost.value.epoch_held) == ("run", lease.epoch)
    assert (lost.value.epoch_found, lost.value.owner_found) == (taken.epoch, "w2")
    assert f"epoch {lease.epoch}" in str(lost.value)
    assert f"epoch {taken.epoch}" in str(lost.value)
    writes: list[Callable[[], Any]] = [
        lambda: ledger.mark_sent(req.request_id, lease=lease),
        lambda: ledger.identify(req.request_id, "resp_1", lease=lease),
        lambda: ledger.request_failed(req.request_id, definite=True, reason="x", lease=lease),
        lambda: ledger.record_request("run", provider="p", request_digest="d", lease=lease),
    ]
    for write in writes:
        with pytest.raises(LeaseLostError):
            write()
    (still,) = ledger.requests("run")  # nothing was written under the lost lease
    assert still.state is RequestState.PREPARED
    ledger.release_run(taken)
    with pytest.raises(LeaseLostError) as released:
        ledger.renew_run(taken)
    assert released.value.owner_found is None
    assert isinstance(released.value, FencedError)  # what callers caught before


def test_a_busy_run_names_its_holder_and_the_lease_expiry(make_ledger: Make) -> None:
    ledger = make_ledger()
    ledger.acquire_run("run", worker_id="w1", lease_seconds=30)
    with pytest.raises(RunBusyError) as busy:
        ledger.acquire_run("run", worker_id="w2")
    owner, epoch, until = _run_row(ledger, "run")
    assert (busy.value.owner, busy.value.epoch, busy.value.until) == (owner, epoch, until)
    assert "'w1'" in str(busy.value)
    assert iso_utc(float(until)) in str(busy.value)


def test_a_claim_heartbeat_is_fenced_by_its_epoch(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "refund", {"n": 1})])
    claim = ledger.claim(effect.effect_id, worker_id="w1", lease_seconds=30)
    assert claim is not None
    with ledger.transaction() as tx:
        tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE effect_id = ?", (claim.effect_id,))
    ledger.heartbeat(claim, lease_seconds=30)  # ran out, nobody recovered it: extended
    assert ledger.recover("rescuer").lost == ()
    with ledger.transaction() as tx:
        tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE effect_id = ?", (claim.effect_id,))
    assert ledger.recover("rescuer").lost == (claim.effect_id,)
    with pytest.raises(FencedError):
        ledger.heartbeat(claim)


def test_the_keeper_renews_the_run_lease_and_a_held_claim(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    other = make_ledger()
    (effect,) = record(ledger, "run", [("c1", "refund", {"n": 1})])
    lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=0.6)
    claim = ledger.claim(effect.effect_id, worker_id="w1", lease_seconds=0.6)
    assert claim is not None
    with LeaseKeeper(ledger, lease, lease_seconds=0.6) as keeper, keeper.holding(claim):
        for _ in range(4):  # 2 s: more than three leases
            time.sleep(0.5)
            with pytest.raises(RunBusyError):
                other.acquire_run("run", worker_id="intruder")
            assert other.recover("intruder").lost == ()
        keeper.check()
    assert keeper.renewals >= 3
    assert keeper.lost is None
    assert ledger.settle(claim, "done").state.value == "committed"


def test_the_keeper_reports_a_run_another_worker_took(make_ledger: Make) -> None:
    ledger = make_ledger()
    other = make_ledger()
    lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=0.3)
    with LeaseKeeper(ledger, lease, lease_seconds=0.3) as keeper:
        taken = _steal(other, "run", "w2")
        for _ in range(100):
            if keeper.lost is not None:
                break
            time.sleep(0.05)
        with pytest.raises(LeaseLostError) as lost:
            keeper.check()
    assert (lost.value.epoch_held, lost.value.epoch_found) == (lease.epoch, taken.epoch)
    assert lost.value.owner_found == "w2"
    assert _run_row(other, "run")[:2] == ("w2", taken.epoch)  # the keeper stopped renewing


def test_pending_lists_live_claims_with_their_worker_and_expiry(
    make_ledger: Make, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "refund", {"n": 1})])
    ledger.claim(effect.effect_id, worker_id="dead-worker", lease_seconds=300)
    (listed,) = ledger.pending()
    assert listed.state.value == "executing"
    assert listed.lease_owner == "dead-worker"
    assert listed.lease_until is not None
    expiry = iso_utc(listed.lease_until)
    assert expiry.endswith("Z")
    said = waits_for(listed)
    assert "'dead-worker'" in said
    assert expiry in said
    assert main(["ledger", "pending", "--db", store_url]) == 1
    out = capsys.readouterr().out
    assert "nothing pending" not in out
    assert f"worker=dead-worker lease_until={expiry}" in out
    assert main(["ledger", "pending", "--db", store_url, "--json"]) == 1
    assert f'"lease_until": "{expiry}"' in capsys.readouterr().out
