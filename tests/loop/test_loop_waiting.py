"""Every ``waiting`` says what it waits for: right after a crash (the dead worker's claim
still leased) the detail names the worker and when its lease runs out, and the operator's
``callgate ledger pending`` lists the same claim at the same moment; a run another worker
advances is ``waiting`` until that worker's lease; an approval and an operator decision
are named too. And a tool given as a bare ``Tool`` is refused with the fix spelled out."""

from __future__ import annotations

from pathlib import Path

import pytest

from callgate import UsageError
from callgate.cli import main
from callgate.ledger import EffectState, Ledger, iso_utc, open_ledger
from callgate.loop import HostLoop
from callgate.mock import MockServer

from .loop_helpers import FINAL, make_loop, refund_script, refund_specs, remote_count


class Crash(BaseException):
    """Stands in for the process dying at a fault point (nothing catches it)."""


def _crash_at(url: str, point: str) -> Ledger:
    def fault(name: str) -> None:
        if name == point:
            raise Crash(name)

    return open_ledger(url, fault=fault)


def test_right_after_a_crash_waiting_and_pending_name_the_leased_claim(
    tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'loop.db'}"
    specs = refund_specs(remote)
    with MockServer(refund_script({"anthropic": ("anthropic_messages", 1, 1)})) as server:
        dying = _crash_at(url, "after_claim")
        with (
            make_loop(server, dying, "anthropic", specs, worker_id="w-dead") as loop,
            pytest.raises(Crash),
        ):
            loop.run("run-1", "Refund order 42.")
        dying.close()
        with (
            open_ledger(url) as ledger,
            make_loop(server, ledger, "anthropic", specs, worker_id="w-rescuer") as loop,
        ):
            waiting = loop.resume("run-1")
            (effect,) = waiting.pending
            assert effect.state is EffectState.EXECUTING
            assert effect.lease_until is not None
            expiry = iso_utc(effect.lease_until)
            assert "'w-dead'" in waiting.detail
            assert expiry in waiting.detail
            assert ledger.pending() == (effect,)
            assert main(["ledger", "pending", "--db", url]) == 1
            listed = capsys.readouterr().out
            assert f"worker=w-dead lease_until={expiry}" in listed

            with ledger.transaction() as tx:  # the dead worker's lease runs out
                tx.run("UPDATE ledger_effects SET lease_until = 0")
            stuck = loop.resume("run-1")  # at most once: a person decides
            (effect,) = stuck.pending
            assert effect.state is EffectState.NEEDS_OPERATOR
            assert "operator" in stuck.detail
            ledger.resolve(
                effect.effect_id,
                expected_version=effect.version,
                decision_id="d-1",
                action="retry",
                reason="the remote never saw it",
                actor="op",
            )
            done = loop.resume("run-1")
        server.assert_script_done()
    assert waiting.status == stuck.status == "waiting"
    assert done.status == "final"
    assert done.text == FINAL
    assert remote_count(remote) == 1


def test_a_run_another_worker_advances_is_waiting_until_its_lease(
    ledger: Ledger, remote: Path
) -> None:
    with MockServer(refund_script({"anthropic": ("anthropic_messages", 1, 1)})) as server:
        with make_loop(server, ledger, "anthropic", refund_specs(remote)) as loop:
            ledger.open_run("run-1")
            ledger.record_request("run-1", provider="anthropic_messages", request_digest="d")
            held = ledger.acquire_run("run-1", worker_id="other", lease_seconds=60)
            result = loop.resume("run-1")
        journal = server.journal.requests()
    assert result.status == "waiting"
    assert result.pending == ()
    assert "'other'" in result.detail
    with ledger.reading() as tx:
        row = tx.one("SELECT owner_until FROM ledger_runs WHERE run_id = 'run-1'")
    assert row is not None
    assert iso_utc(float(row[0])) in result.detail
    assert journal == []  # nothing was sent under another worker's lease
    assert ledger.renew_run(held)  # still the other worker's


def test_an_approval_wait_says_so(ledger: Ledger, remote: Path) -> None:
    specs = refund_specs(remote, requires_approval=True)
    script = refund_script({"anthropic": ("anthropic_messages", 1, 0)})
    with MockServer(script) as server, make_loop(server, ledger, "anthropic", specs) as loop:
        waiting = loop.run("run-a", "Refund order 42.")
    (effect,) = waiting.pending
    assert waiting.status == "waiting"
    assert effect.effect_id[:12] in waiting.detail
    assert "approval" in waiting.detail


def test_a_bare_tool_is_refused_with_the_toolspec_spelled_out(ledger: Ledger, remote: Path) -> None:
    (spec,) = refund_specs(remote)
    with pytest.raises(UsageError) as refused:
        HostLoop(
            protocol="anthropic_messages",
            base_url="http://127.0.0.1:9",
            ledger=ledger,
            tools=[spec.tool],
            model="m",
        )
    message = str(refused.value)
    assert "ToolSpec(tool, description=..., parameters=...)" in message
    assert "tools[0] is a Tool" in message
