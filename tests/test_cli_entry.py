"""The `callgate` command has three doors: the console script, `python -m callgate.cli` and
`python -m callgate`; each runs the same parser."""

from __future__ import annotations

import subprocess
import sys

import pytest

from callgate.cli import version


@pytest.mark.parametrize("module", ["callgate", "callgate.cli"])
def test_python_dash_m_runs_the_command(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"callgate {version()}"


def test_python_dash_m_reports_a_usage_error_with_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "callgate", "no-such-command"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "invalid choice: 'no-such-command'" in done.stderr
