"""The effect side of the crash matrix: a child process is really SIGKILLed at a named
fault point, then recovery runs in this process.

Per cell: remote applications <= 1 (exactly 1 for the classes that protect it), the final
state is settled or needs_operator, the audit trail is legal, and no approval is consumed
twice. The remote is an fsynced append-only file. The bounded form (the default) covers
every fault point and every class on each store; ``CALLGATE_CRASH_MATRIX=full`` (``make
crash-matrix``) runs every point x class x store.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from callgate.ledger import EffectState, Ledger, is_legal_trail, open_ledger

from .ledger_harness import crash_tools, outbox_sender, remote_count

HARNESS = Path(__file__).with_name("ledger_harness.py")
POINTS = ["after_claim", "after_sent", "after_return", "after_commit"]
TOOLS = ["read", "idem", "verif", "amo", "amo_approved", "local"]
# Where a crash may not cost the effect: the remote must end with exactly one application.
PROTECTED = {"idem", "verif", "local"}
FULL = os.environ.get("CALLGATE_CRASH_MATRIX") == "full"
# The bounded form: every point and every class at least once, per store.
BOUNDED = [
    ("after_return", "amo"),  # the refund returned, the process died before the commit
    ("after_sent", "idem"),
    ("after_sent", "verif"),
    ("after_claim", "amo_approved"),
    ("after_claim", "read"),
    ("after_commit", "local"),
]
CELLS = [*(itertools.product(POINTS, TOOLS) if FULL else BOUNDED), ("after_relay_send", "local")]
S = EffectState


def _kill_child(url: str, tool: str, point: str, remote: Path, run_id: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.run(
        [sys.executable, str(HARNESS), url, tool, point, str(remote), run_id],
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]


def _drive(ledger: Ledger, effect_id: str, remote: Path) -> None:
    """What the host does after a restart: recover, then settle what may be settled."""
    with ledger.transaction() as tx:  # the dead child's lease runs out
        tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE lease_until IS NOT NULL")
        tx.run("UPDATE ledger_outbox SET lease_until = 0 WHERE lease_until IS NOT NULL")
    ledger.recover("rescuer")
    for _ in range(4):
        effect = ledger.effect(effect_id)
        if effect.state is S.READY:
            ledger.execute(effect_id, worker_id="rescuer")
        elif effect.state is S.AWAITING_APPROVAL:
            ledger.approve(effect_id, actor="second-look")
        elif effect.state is S.UNKNOWN and effect.tool == "verif":
            ledger.verify(effect_id)
        else:
            break
    ledger.relay(outbox_sender(remote), worker_id="rescuer")


@pytest.mark.parametrize(("point", "tool"), CELLS, ids=[f"{p}-{t}" for p, t in CELLS])
def test_sigkill_at_a_fault_point_never_applies_twice(
    store_url: str, tmp_path: Path, point: str, tool: str
) -> None:
    remote = tmp_path / "remote.log"
    run_id = f"crash-{point}-{tool}"
    _kill_child(store_url, tool, point, remote, run_id)
    with open_ledger(store_url, tools=crash_tools(remote)) as ledger:
        (effect,) = ledger.effects(run_id)
        _drive(ledger, effect.effect_id, remote)
        final = ledger.effect(effect.effect_id)
        trail = ledger.audit(effect.effect_id)
        approvals = ledger.approvals(effect.effect_id)
    applied = remote_count(remote, final.idempotency_token)
    if tool == "local":
        applied = remote_count(remote, final.idempotency_token + ":0")
    assert applied <= 1
    if tool in PROTECTED:
        assert applied == 1
    if tool in PROTECTED or tool == "read":
        assert final.state is S.COMMITTED
    else:
        assert final.state in (S.COMMITTED, S.NEEDS_OPERATOR)
        assert (final.state is S.COMMITTED) == (point == "after_commit")
    assert is_legal_trail(trail), [(e.from_state, e.event, e.to_state) for e in trail]
    claims = sum(1 for e in trail if e.event == "claim")
    consumed = [a for a in approvals if a[2] is not None]
    if tool == "amo_approved":
        assert len(consumed) == claims == 1
    assert len({a[0] for a in consumed}) == len(consumed)
