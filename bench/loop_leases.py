"""What keeping the leases costs the host loop: runs per second and CPU per streamed event,
with the lease keeper, with a no-op keeper, and (``--before SRC``) with another source tree.

Two workloads, each in a fresh subprocess per mode and round, against a warm mock server
in that process and a fresh SQLite ledger (``synchronous=FULL``):

- ``runs``: ``--runs`` two-turn conversations (a refund call, then the final answer) through
  ``HostLoop.run``: wall time per run, and the ledger's commits per run (every
  ``transaction()`` on the loop's own connection; the keeper's connection never opens for
  a step shorter than a third of the lease);
- ``stream``: one run whose final answer streams as ``--events`` text deltas, best of 3:
  the CPU time of the process per event (the mock renders in a thread of the same
  process, alike in every mode), where the per-event lease check lives;
- ``keeper``: a keeper started and stopped 500 times on a held lease, no renewal due:
  the fixed cost each ``run``/``resume`` pays (wall time).

The ``runs`` wall time is mostly fsyncs (``synchronous=FULL``) and swings with the disk
and the machine's load; the per-round ratio against ``no_keeper`` (run next to it) and
the CPU time per run are the steadier figures.

Modes: ``keeper`` (this tree), ``no_keeper`` (this tree with ``LeaseKeeper`` replaced by a
no-op: the keeper's own cost), ``before`` (the tree at ``--before SRC``, e.g.
``git archive main src | tar -x -C /tmp/before`` then ``--before /tmp/before/src``).
Rounds alternate the modes; medians are reported.

Run: PYTHONPATH=src python bench/loop_leases.py [--runs 60] [--events 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROTOCOL = "anthropic_messages"


class _NoKeeper:
    """The keeper's interface doing nothing: what the loop costs without renewals."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lost = None

    def start(self) -> _NoKeeper:
        return self

    def stop(self) -> None:
        pass

    def check(self) -> None:
        pass

    @contextlib.contextmanager
    def holding(self, claim: Any) -> Iterator[None]:
        yield


def _loop(server: Any, ledger: Any, conversation: str) -> Any:
    from callgate.ledger import Tool
    from callgate.loop import HostLoop, ToolSpec

    tool = Tool("refund", lambda args, ctx: {"refunded": args["order_id"]})
    return HostLoop(
        protocol=PROTOCOL,
        base_url=server.anthropic_base_url,
        api_key="k",
        ledger=ledger,
        tools=[ToolSpec(tool, description="Refund an order.")],
        model="m",
        headers={"x-callgate-conversation": conversation},
    )


def _count_commits(ledger: Any) -> list[int]:
    store = ledger._store
    opened = store.transaction
    count = [0]

    def counted() -> Any:
        count[0] += 1
        return opened()

    store.transaction = counted
    return count


def _keeper_cost(ledger: Any) -> float:
    try:
        from callgate.ledger import LeaseKeeper
    except ImportError:  # a tree from before the keeper
        return 0.0
    lease = ledger.acquire_run("keeper-cost", worker_id="w")
    start = time.perf_counter()
    for _ in range(500):
        LeaseKeeper(ledger, lease, lease_seconds=30).start().stop()
    return (time.perf_counter() - start) * 1e6 / 500


def child(mode: str, runs: int, events: int) -> dict[str, float]:
    from callgate.ledger import open_ledger
    from callgate.mock import MockServer, ScriptBuilder, call

    if mode == "no_keeper":
        import callgate.loop._core as core

        core.LeaseKeeper = _NoKeeper  # type: ignore[attr-defined, misc]
    b = ScriptBuilder(seed=1)
    for i in range(runs):
        b.turn(PROTOCOL, conversation=f"c{i}", calls=[call("refund", order_id=i)])
        b.turn(PROTOCOL, conversation=f"c{i}", text="Refunded.")
    for i in range(3):
        b.turn(PROTOCOL, conversation=f"s{i}", text="x" * events, chunking="char")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, MockServer(b.build()) as server:
        with open_ledger(f"sqlite:///{tmp}/runs.db") as ledger:
            commits = _count_commits(ledger)
            start, cpu_start = time.perf_counter(), time.process_time()
            for i in range(runs):
                with _loop(server, ledger, f"c{i}") as loop:
                    if loop.run(f"run-{i}", "Refund.").status != "final":
                        raise SystemExit("a run did not finish")
            out["ms_per_run"] = (time.perf_counter() - start) * 1000 / runs
            out["cpu_ms_per_run"] = (time.process_time() - cpu_start) * 1000 / runs
            out["commits_per_run"] = commits[0] / runs
            out["keeper_us"] = _keeper_cost(ledger) if mode == "keeper" else 0.0
        cpu = float("inf")
        with open_ledger(f"sqlite:///{tmp}/stream.db") as ledger:
            for i in range(3):
                with _loop(server, ledger, f"s{i}") as loop:
                    began = time.process_time()
                    loop.run(f"stream-{i}", "Say it.")
                    cpu = min(cpu, time.process_time() - began)
        out["us_cpu_per_event"] = cpu * 1e6 / events
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="another callgate src tree (the baseline)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.runs, args.events)))
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    modes = {"keeper": here, "no_keeper": here}
    if args.before:
        modes["before"] = args.before
    results: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(args.rounds):
        for mode, src in modes.items():
            env = {**os.environ, "PYTHONPATH": src}
            child_mode = "no_keeper" if mode == "no_keeper" else "keeper"
            cmd = [sys.executable, __file__, "--child", child_mode, "--runs", str(args.runs)]
            cmd += ["--events", str(args.events)]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            results[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{args.runs} runs, {args.events} events, {args.rounds} rounds (medians)")
    head = ("mode", "ms/run", "cpu ms/run", "commits/run", "us cpu/event", "keeper us")
    print("| " + " | ".join(head) + " | wall vs no_keeper (per round) |")
    print("|---" * (len(head) + 1) + "|")
    keys = ("ms_per_run", "cpu_ms_per_run", "commits_per_run", "us_cpu_per_event", "keeper_us")
    for mode, rows in results.items():
        med = [statistics.median(r[k] for r in rows) for k in keys]
        ratios = [
            r["ms_per_run"] / n["ms_per_run"]
            for r, n in zip(rows, results["no_keeper"], strict=True)
        ]
        cells = [f"{v:.2f}" for v in med]
        print(f"| {mode} | " + " | ".join(cells) + f" | {statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
