"""The demo's two loop scenarios end as the ledger promises (they also run in `callgate demo`)."""

from __future__ import annotations

from callgate.demo import _durable as _scenarios


def test_the_crash_scenario_kills_the_child_and_sends_one_continuation() -> None:
    lines: list[str] = []
    assert _scenarios.crash_scenario(lines.append)
    out = "\n".join(lines)
    assert "SIGKILL (exit -9)" in out
    assert "1 attempt(s) lost -> unknown, 1 to verify" in out
    assert "verifier: the refund applied -> committed" in out
    assert "remote: 1 refund(s); journal: 2 request(s), 1 continuation(s)" in out


def test_the_approval_scenario_waits_then_runs_once() -> None:
    lines: list[str] = []
    assert _scenarios.approval_scenario(lines.append)
    out = "\n".join(lines)
    assert "run: waiting; awaiting approval: refund" in out
    assert "refunds so far: 0" in out
    assert "refunds: 1" in out
