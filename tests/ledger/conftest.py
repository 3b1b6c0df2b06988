"""Fixtures for the ledger suite: every store test runs on a SQLite file and on PostgreSQL.

PostgreSQL comes from ``CALLGATE_TEST_POSTGRES_URL`` (default: the local trust-auth server,
database ``test``); each test gets a schema of its own. Unreachable, the PostgreSQL half is
skipped with the reason, except under ``CI=true``, where it fails: CI must never pass with
the PostgreSQL suite silently skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import Ledger, open_ledger

from .ledger_harness import PG_URL, require_postgres


@pytest.fixture
def pg_schema_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    require_postgres()
    import psycopg

    schema = f"cgt_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    # The tests kill clients, never the server: its commit fsyncs prove nothing here, and
    # skipping them keeps the suite fast. The benchmark runs with the server's defaults.
    options = f"-csearch_path%3D{schema}%20-csynchronous_commit%3Doff"
    try:
        yield f"{PG_URL}{sep}options={options}"
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    url: str = request.getfixturevalue("pg_schema_url")
    return url


@pytest.fixture
def make_ledger(store_url: str) -> Iterator[Callable[..., Ledger]]:
    opened: list[Ledger] = []

    def make(**kwargs: Any) -> Ledger:
        ledger = open_ledger(store_url, **kwargs)
        opened.append(ledger)
        return ledger

    yield make
    for ledger in opened:
        ledger.close()


_CRASH_CELLS: dict[str, dict[str, int]] = {}
_CRASH_TESTS = {
    "test_sigkill_at_a_fault_point": "effect side",
    "test_sigkill_of_the_host_loop": "model side, host loop",
}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    for test, side in _CRASH_TESTS.items():
        if test in report.nodeid:
            counts = _CRASH_CELLS.setdefault(side, {})
            counts[report.outcome] = counts.get(report.outcome, 0) + 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for side, cells in _CRASH_CELLS.items():
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(cells.items()))
        terminalreporter.write_line(f"ledger crash matrix cells ({side}): {counts}")
