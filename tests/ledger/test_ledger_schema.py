"""The ledger's schema is versioned: forward migrations, and a newer schema is refused."""

from __future__ import annotations

import pytest

from callgate import UsageError
from callgate.ledger import SCHEMA_VERSION, SchemaVersionError, Tool, open_ledger, open_store
from callgate.ledger._schema import MIGRATIONS, migrate, schema_version

from .ledger_harness import record


def test_a_new_database_is_created_at_the_current_version(store_url: str) -> None:
    open_ledger(store_url).close()
    open_ledger(store_url).close()  # reopening changes nothing
    store = open_store(store_url)
    try:
        assert schema_version(store) == SCHEMA_VERSION == len(MIGRATIONS)
    finally:
        store.close()


def test_an_older_database_is_migrated_forward_keeping_its_rows(store_url: str) -> None:
    store = open_store(store_url)
    try:
        assert migrate(store, MIGRATIONS[:1]) == 1
    finally:
        store.close()
    with open_ledger(store_url, tools=[Tool("t", lambda a, c: "ok")]) as ledger:
        (effect,) = record(ledger, "run", [("c1", "t", {})])
        assert ledger.execute(effect.effect_id, worker_id="w").result is not None
        with ledger.transaction() as tx:
            assert tx.rows("SELECT COUNT(*) FROM ledger_outbox") == [(0,)]


def test_a_newer_schema_than_the_code_knows_is_refused(store_url: str) -> None:
    open_ledger(store_url).close()
    store = open_store(store_url)
    try:
        with store.transaction() as tx:
            tx.run("UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'")
    finally:
        store.close()
    with pytest.raises(SchemaVersionError, match=f"version 99, newer than the {SCHEMA_VERSION}"):
        open_ledger(store_url)


@pytest.mark.parametrize("url", ["mysql://x", "sqlite://", "sqlite:///", "postgres"])
def test_a_bad_url_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError):
        open_ledger(url)


def test_the_sqlite_store_runs_wal_with_full_sync(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "l.db"
    with open_ledger(f"sqlite:///{path}") as ledger, ledger.transaction() as tx:
        assert tx.one("PRAGMA journal_mode") == ("wal",)
        assert tx.one("PRAGMA synchronous") == (2,)  # FULL
        assert tx.one("PRAGMA foreign_keys") == (1,)
