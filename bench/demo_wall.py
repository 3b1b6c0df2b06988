"""What ``callgate demo`` and the command's start cost, this tree against another one.

Two workloads, each in a fresh subprocess per tree and round, rounds interleaved:

- ``demo``: ``python -m callgate.cli demo`` to its end (exit 0 required): wall time, and
  the CPU time of the process and its children (the crash scenario's child included);
- ``start``: ``python -m callgate.cli --version``: the command's import and parser cost.

The ``before`` tree is the one at ``--before SRC`` (e.g. ``git archive main src | tar -x
-C /tmp/before`` then ``--before /tmp/before/src``), put first on ``PYTHONPATH``. The demo
writes SQLite ledgers with ``synchronous=FULL``, so its wall time swings with the disk
and the machine's load; the CPU time is the steadier figure. Medians are reported.

Run: PYTHONPATH=src python bench/demo_wall.py --before /tmp/before/src [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "src"


def _measure(src: Path, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the children) of one ``python -m callgate.cli`` run."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "callgate.cli", *argv],
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{src}: callgate {' '.join(argv)} exited {done.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--before", type=Path, required=True, help="the other tree's src/")
    args.add_argument("--rounds", type=int, default=7)
    opts = args.parse_args()
    trees = {"before": opts.before.resolve(), "after": HERE}
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(opts.rounds):
        for tree, src in trees.items():
            runs.setdefault((tree, "demo"), []).append(_measure(src, ["demo"]))
            runs.setdefault((tree, "start"), []).append(_measure(src, ["--version"]))
    print("| workload | tree | wall, s | CPU, s | wall vs before | CPU vs before |")
    print("|---|---|---:|---:|---:|---:|")
    for work in ("demo", "start"):
        base_wall = statistics.median(w for w, _ in runs[("before", work)])
        base_cpu = statistics.median(c for _, c in runs[("before", work)])
        for tree in trees:
            wall = statistics.median(w for w, _ in runs[(tree, work)])
            cpu = statistics.median(c for _, c in runs[(tree, work)])
            print(
                f"| {work} | {tree} | {wall:.3f} | {cpu:.3f} | "
                f"{wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |"
            )


if __name__ == "__main__":
    main()
