"""``make demo-temporal`` tells the story it claims: a worker killed mid-refund, the
refund applied once, the run final."""

from __future__ import annotations

import asyncio

from callgate.temporal import demo

from .temporal_harness import require_temporal


def test_the_temporal_demo_kills_a_worker_and_refunds_once() -> None:
    require_temporal()
    lines: list[str] = []
    assert asyncio.run(demo.main(lines.append)) == 0, lines
    assert "killed mid-refund by SIGKILL: worker-" in "\n".join(lines)
    assert "the bank applied the refund 1 time(s)" in lines
    assert any(
        "refund (verifiable)" in line and "lose -> verify -> applied" in line for line in lines
    )
    assert lines[-1] == "OK: the side effect happened once"
