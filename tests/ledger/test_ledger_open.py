"""Opening a ledger: ``create=False`` opens existing ledgers only and writes nothing to
what holds none; ``schema=`` gives a PostgreSQL application its own tables; every error
names the database with its password masked."""

from __future__ import annotations

import socket
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from callgate import UsageError
from callgate.ledger import LedgerOpenError, Tool, open_ledger
from callgate.ledger._url import redact, scrub

from .ledger_harness import PG_URL, record, require_postgres


def test_create_false_on_a_missing_file_names_it_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(LedgerOpenError, match="no such file") as caught:
        open_ledger(f"sqlite:///{path}", create=False)
    assert caught.value.database == f"sqlite:///{path}"
    assert list(tmp_path.iterdir()) == []


def test_create_false_leaves_a_database_without_a_ledger_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other-app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(LedgerOpenError, match="without a ledger"):
        open_ledger(f"sqlite:///{path}", create=False)
    assert path.read_bytes() == before  # not even switched to WAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-app.db"]


def test_create_false_opens_an_existing_ledger(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    tools = [Tool("t", lambda a, c: "ok")]
    with open_ledger(url, tools=tools) as ledger:
        (effect,) = record(ledger, "run", [("c1", "t", {})])
    with open_ledger(url, create=False) as again:
        assert again.effect(effect.effect_id).call_id == "c1"


@pytest.mark.parametrize("create", [True, False])
def test_a_file_that_is_not_a_database_is_refused_as_such(tmp_path: Path, create: bool) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are notes, not a database\n" * 64)
    with pytest.raises(LedgerOpenError, match="is not a SQLite database"):
        open_ledger(f"sqlite:///{path}", create=create)
    assert path.read_bytes() == b"these are notes, not a database\n" * 64


def test_a_directory_or_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LedgerOpenError, match="is a directory"):
        open_ledger(f"sqlite:///{tmp_path}")
    with pytest.raises(LedgerOpenError, match="no directory"):
        open_ledger(f"sqlite:///{tmp_path / 'nowhere' / 'l.db'}")


@pytest.mark.parametrize(
    "kwargs",
    [{"create": 1}, {"schema": ""}, {"schema": 5}, {"schema": "x" * 64}, {"schema": "app1"}],
)
def test_bad_options_are_usage_errors(tmp_path: Path, kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):  # schema= on SQLite too: one file is one application
        open_ledger(f"sqlite:///{tmp_path / 'l.db'}", **kwargs)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://ops:s3cret@db.internal:5432/app",
            "postgresql://ops:***@db.internal:5432/app",
        ),
        (
            "postgresql://ops:p%40ss@h/app?sslmode=require",
            "postgresql://ops:***@h/app?sslmode=require",
        ),
        ("postgresql://ops:a/b@c@h/app", "postgresql://ops:***@h/app"),  # not percent-encoded
        ("postgresql://h/app?user=ops&password=s3cret", "postgresql://h/app?user=ops&password=***"),
        ("postgresql://ops@h/app", "postgresql://ops@h/app"),
        ("sqlite:///data/a:b@c.db", "sqlite:///data/a:b@c.db"),  # a file name, no password
        ("host=h password=s3cret", "host=h password=***"),
    ],
)
def test_redact_masks_every_password_form(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_scrub_masks_the_password_in_a_driver_message_and_keeps_one_line() -> None:
    url = "postgresql://u:s3cret@[::1/db"
    message = f'end of string reached in URI: "{url}"\n\tIs the server running?'
    assert scrub(message, url) == 'end of string reached in URI: "postgresql://u:***@[::1/db" ' + (
        "Is the server running?"
    )


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: bound by us, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_refused_postgresql_connection_is_a_ledger_open_error() -> None:
    pytest.importorskip("psycopg")
    port = closed_port()
    url = f"postgresql://ops:s3cret@127.0.0.1:{port}/app"
    with pytest.raises(LedgerOpenError) as caught:
        open_ledger(url)
    assert caught.value.database == f"postgresql://ops:***@127.0.0.1:{port}/app"
    assert "s3cret" not in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "url", ["postgresql://u:s3cret@[::1/db", "postgresql://u:s3cret@127.0.0.1/db?bogus=1"]
)
def test_a_malformed_postgresql_url_is_a_usage_error_without_its_password(url: str) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(UsageError, match="malformed ledger URL") as caught:
        open_ledger(url)
    assert "s3cret" not in str(caught.value)


# -- PostgreSQL schemas ------------------------------------------------------------------


@pytest.fixture
def schema_name() -> Iterator[str]:
    """A schema name no one uses; the schema is dropped afterwards if a test created it."""
    require_postgres()
    import psycopg

    name = f"cg_app_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _schemas(name: str) -> list[str]:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname = %s", (name,))
        return [r[0] for r in rows.fetchall()]


def _tables(name: str) -> list[str]:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (name,)
        )
        return sorted(r[0] for r in rows.fetchall())


def test_a_schema_is_created_with_the_ledger_and_holds_its_tables(schema_name: str) -> None:
    tools = [Tool("t", lambda a, c: "ok")]
    with open_ledger(PG_URL, schema=schema_name, tools=tools) as ledger:
        (effect,) = record(ledger, "run", [("c1", "t", {})])
        with ledger.transaction() as tx:
            assert tx.one("SELECT current_schema()") == (schema_name,)
    assert "ledger_effects" in _tables(schema_name)
    with open_ledger(PG_URL, schema=schema_name, create=False) as again:
        assert again.effect(effect.effect_id).call_id == "c1"


def test_a_missing_schema_is_refused_and_not_created(schema_name: str) -> None:
    with pytest.raises(LedgerOpenError, match=f"no schema '{schema_name}'"):
        open_ledger(PG_URL, schema=schema_name, create=False)
    assert _schemas(schema_name) == []


def test_an_empty_schema_holds_no_ledger_and_stays_empty(schema_name: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema_name}"')
    with pytest.raises(LedgerOpenError, match="no ledger here"):
        open_ledger(PG_URL, schema=schema_name, create=False)
    assert _tables(schema_name) == []


def test_two_schemas_are_two_ledgers_and_scopes_live_inside_one(schema_name: str) -> None:
    other = f"{schema_name}_b"
    tools = [Tool("t", lambda a, c: "ok")]
    try:
        with (
            open_ledger(PG_URL, schema=schema_name, tools=tools) as a,
            open_ledger(PG_URL, schema=other, tools=tools) as b,
            open_ledger(PG_URL, schema=schema_name, scope="tenant-2", tools=tools) as a2,
        ):
            record(a, "run", [("c1", "t", {})])
            assert b.effects("run") == ()  # another application's tables
            assert a2.effects("run") == ()  # same tables, another tenant
            record(a2, "run", [("c1", "t", {})])
            with a.transaction() as tx:
                assert tx.one("SELECT COUNT(*), COUNT(DISTINCT scope) FROM ledger_effects") == (
                    2,
                    2,
                )
    finally:
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{other}" CASCADE')


def test_reopen_keeps_the_schema(schema_name: str) -> None:
    """The lease keeper's connection is a reopen(): it must renew in the same tables."""
    with open_ledger(PG_URL, schema=schema_name) as ledger:
        lease = ledger.acquire_run("run", worker_id="w1", lease_seconds=30)
        with ledger.reopen() as keeper:
            with keeper.transaction() as tx:
                assert tx.one("SELECT current_schema()") == (schema_name,)
            keeper.renew_run(lease, lease_seconds=30)


def test_a_schema_in_the_url_search_path_still_works(pg_schema_url: str) -> None:
    with open_ledger(pg_schema_url) as ledger, ledger.transaction() as tx:
        assert str(tx.one("SELECT current_schema()")[0]).startswith("cgt_")
