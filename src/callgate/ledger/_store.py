"""The two stores behind one small interface: a transaction that runs SQL.

SQL is written once, with ``?`` placeholders and tokens the store fills in: ``{now}``
(the database's clock, in epoch seconds: leases never trust a worker's clock),
``{skip_locked}`` and ``{for_update}`` (``FOR UPDATE SKIP LOCKED`` / ``FOR UPDATE`` on
PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already serialises writers). No transaction is
held across a network call: the ledger opens one per state change and closes it before
any tool runs.
"""

from __future__ import annotations

import functools
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from .._errors import UsageError
from ._model import ConflictError, LedgerError

__all__ = ["Store", "Tx", "open_store"]

Row = tuple[Any, ...]

_SQLITE_TOKENS = {
    "now": "((julianday('now') - 2440587.5) * 86400.0)",
    "skip_locked": "",
    "for_update": "",
    "real": "REAL",
    "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
}
_POSTGRES_TOKENS = {
    "now": "(extract(epoch from clock_timestamp())::double precision)",
    "skip_locked": "FOR UPDATE SKIP LOCKED",
    "for_update": "FOR UPDATE",
    "real": "DOUBLE PRECISION",
    "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}


@functools.lru_cache(maxsize=512)
def _sqlite_sql(sql: str) -> str:
    return sql.format_map(_SQLITE_TOKENS)


@functools.lru_cache(maxsize=512)
def _postgres_sql(sql: str) -> str:
    return sql.format_map(_POSTGRES_TOKENS).replace("?", "%s")


class Tx(Protocol):
    """One open transaction. ``rows``/``one`` return tuples; ``run`` the affected count."""

    dialect: str

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...
    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...
    def run(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    def lock_run(self, key: str) -> None: ...


class Store(Protocol):
    dialect: str
    url: str

    def transaction(self) -> Any: ...  # a context manager yielding a Tx
    def read(self) -> Any: ...  # the same, for reads only (no write lock, no commit work)
    def reopen(self) -> Store: ...  # a new connection to the same database, same settings
    def close(self) -> None: ...


class _SQLiteTx:
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _execute(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        try:
            return self._conn.execute(_sqlite_sql(sql), tuple(params))
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"the ledger refused a duplicate or dangling row: {exc}") from None

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row: Row | None = self._execute(sql, params).fetchone()
        return row

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._execute(sql, params).rowcount

    def lock_run(self, key: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` holds the one write lock already."""


class SQLiteStore:
    """A SQLite file: WAL, ``synchronous=FULL`` (an attempt record survives power loss),
    foreign keys on, one short ``BEGIN IMMEDIATE`` transaction per state change. One host:
    SQLite's locking is only sound on a local file system."""

    dialect = "sqlite"

    def __init__(self, url: str, path: str) -> None:
        self.url = url
        self._path = path
        self._conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            raise LedgerError(f"SQLite refused WAL mode for {path!r} (got {mode!r})")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=30000")

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield _SQLiteTx(self._conn)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Tx]:
        self._conn.execute("BEGIN DEFERRED")
        try:
            yield _SQLiteTx(self._conn)
        finally:
            self._conn.execute("ROLLBACK")

    def reopen(self) -> SQLiteStore:
        """Another connection to the same file (for another thread: a SQLite connection
        belongs to the thread that opened it)."""
        return SQLiteStore(self.url, self._path)

    def close(self) -> None:
        self._conn.close()


class _PostgresTx:
    dialect = "postgres"

    def __init__(self, cursor: Any, integrity_error: type[Exception]) -> None:
        self._cur = cursor
        self._integrity_error = integrity_error

    def _execute(self, sql: str, params: Sequence[Any]) -> None:
        try:
            self._cur.execute(_postgres_sql(sql), tuple(params))
        except self._integrity_error as exc:
            raise ConflictError(f"the ledger refused a duplicate or dangling row: {exc}") from None

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._execute(sql, params)
        return list(self._cur.fetchall()) if self._cur.description else []

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        self._execute(sql, params)
        row: Row | None = self._cur.fetchone() if self._cur.description else None
        return row

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._execute(sql, params)
        count: int = self._cur.rowcount
        return count

    def lock_run(self, key: str) -> None:
        """Serialise the transactions that advance one run (turn and request numbering)."""
        self._cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


class PostgresStore:
    """PostgreSQL through psycopg 3 (the ``postgres`` extra): the database clock for
    leases, ``FOR UPDATE SKIP LOCKED`` claims, advisory locks for run advancement."""

    dialect = "postgres"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "a postgresql:// ledger needs psycopg 3: pip install 'callgate[postgres]'"
            ) from None
        self.url = url
        self._integrity_error: type[Exception] = psycopg.errors.IntegrityError
        self._conn = psycopg.connect(url, autocommit=True)

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield _PostgresTx(cur, self._integrity_error)

    @contextmanager
    def read(self) -> Iterator[Tx]:
        # Autocommit: each read statement is its own snapshot, one round trip.
        with self._conn.cursor() as cur:
            yield _PostgresTx(cur, self._integrity_error)

    def reopen(self) -> PostgresStore:
        """Another connection to the same database (and search path: it is in the URL)."""
        return PostgresStore(self.url)

    def close(self) -> None:
        self._conn.close()


def open_store(url: str) -> Store:
    """A store for ``sqlite:///path`` or ``postgresql://...``; raises UsageError otherwise."""
    if type(url) is not str:
        raise UsageError("the ledger URL must be a str")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy spells them.
        path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
        if not path:
            raise UsageError("a SQLite ledger URL is sqlite:///path/to/file.db")
        return SQLiteStore(url, path)
    if parsed.scheme in ("postgresql", "postgres"):
        return PostgresStore(url)
    raise UsageError(f"unsupported ledger URL scheme {parsed.scheme!r} (sqlite or postgresql)")
