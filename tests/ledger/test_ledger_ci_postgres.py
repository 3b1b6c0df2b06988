"""CI must never pass with the PostgreSQL half of the ledger suite silently skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TARGET = f"{HERE / 'test_ledger_schema.py'}::test_a_new_database_is_created_at_the_current_version"


def _run(ci: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "CALLGATE_TEST_POSTGRES_URL": "postgresql://postgres@127.0.0.1:1/none",
        "CI": ci,
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "postgres", TARGET],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize(("ci", "code", "word"), [("true", 1, "failed"), ("", 0, "skipped")])
def test_an_unreachable_postgres_skips_locally_and_fails_under_ci(
    ci: str, code: int, word: str
) -> None:
    result = _run(ci)
    assert result.returncode == code, result.stdout[-2000:]
    assert f"1 {word}" in result.stdout
