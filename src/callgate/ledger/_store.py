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
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from .._errors import UsageError
from ._model import ConflictError, LedgerOpenError
from ._url import redact, scrub, sqlite_path, store_kind

__all__ = ["Store", "Tx", "check_schema", "open_store"]

Row = tuple[Any, ...]

_SQLITE_TOKENS = {
    "now": "((julianday('now') - 2440587.5) * 86400.0)",
    "skip_locked": "",
    "for_update": "",
    "real": "REAL",
    "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "blob": "BLOB",
}
_POSTGRES_TOKENS = {
    "now": "(extract(epoch from clock_timestamp())::double precision)",
    "skip_locked": "FOR UPDATE SKIP LOCKED",
    "for_update": "FOR UPDATE",
    "real": "DOUBLE PRECISION",
    "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    "blob": "BYTEA",
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
    def lock_run(self, key: str, also: tuple[str, Sequence[Any]] | None = None) -> None: ...


class Store(Protocol):
    dialect: str
    url: str
    errors: tuple[type[Exception], ...]  # the driver's errors (a database failed mid-way)

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

    def lock_run(self, key: str, also: tuple[str, Sequence[Any]] | None = None) -> None:
        """Nothing to lock: ``BEGIN IMMEDIATE`` holds the one write lock already; ``also``
        (a write: SQL and parameters) is run."""
        if also is not None:
            self.run(*also)


class SQLiteStore:
    """A SQLite file: WAL, ``synchronous=FULL`` (an attempt record survives power loss),
    foreign keys on, one short ``BEGIN IMMEDIATE`` transaction per state change. One host:
    SQLite's locking is only sound on a local file system.

    ``create=False`` opens an existing ledger only: the file is opened without creating
    it, and it must hold a ledger before anything (even WAL mode) is written to it."""

    dialect = "sqlite"
    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, url: str, path: str, *, create: bool = True) -> None:
        self.url = url
        self._path = path
        try:
            self._conn = self._connect(create)
        except sqlite3.Error as exc:
            raise LedgerOpenError(redact(url), _sqlite_cause(path, exc)) from None

    def _connect(self, create: bool) -> sqlite3.Connection:
        if create:
            conn = sqlite3.connect(self._path, isolation_level=None, timeout=30.0)
        else:
            if not os.path.exists(self._path):
                raise LedgerOpenError(
                    redact(self.url),
                    f"no such file {self._path!r} (only open_ledger(..., create=True) "
                    "creates a ledger)",
                )
            target = f"file:{urllib.parse.quote(self._path)}?mode=rw"
            conn = sqlite3.connect(target, isolation_level=None, timeout=30.0, uri=True)
        try:
            if not create and conn.execute(_SQLITE_HAS_LEDGER).fetchone() is None:
                raise LedgerOpenError(
                    redact(self.url), f"{self._path!r} is a SQLite database without a ledger"
                )
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise LedgerOpenError(
                    redact(self.url), f"SQLite refused WAL mode for {self._path!r} (got {mode!r})"
                )
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
        except BaseException:
            conn.close()
            raise
        return conn

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
        belongs to the thread that opened it). The file exists by now: never create it."""
        return SQLiteStore(self.url, self._path, create=False)

    def close(self) -> None:
        self._conn.close()


_SQLITE_HAS_LEDGER = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'"


def _sqlite_cause(path: str, exc: sqlite3.Error) -> str:
    """Why SQLite could not open ``path``, in words an operator can act on."""
    if os.path.isdir(path):
        return f"{path!r} is a directory, not a ledger file"
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        return f"{path!r} is not a SQLite database"
    if not os.path.exists(path):
        parent = os.path.dirname(path) or "."
        if not os.path.isdir(parent):
            return f"cannot create {path!r}: no directory {parent!r}"
    elif not os.access(path, os.R_OK | os.W_OK):
        return f"cannot open {path!r}: permission denied (a ledger needs read and write access)"
    return f"cannot open {path!r}: {scrub(exc, '')}"


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

    # ``rownumber`` is None when the statement returned no rows to fetch; ``description``
    # would say the same but builds a Column object per column on every call.
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._execute(sql, params)
        return list(self._cur.fetchall()) if self._cur.rownumber is not None else []

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        self._execute(sql, params)
        row: Row | None = self._cur.fetchone() if self._cur.rownumber is not None else None
        return row

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._execute(sql, params)
        count: int = self._cur.rowcount
        return count

    def lock_run(self, key: str, also: tuple[str, Sequence[Any]] | None = None) -> None:
        """Serialise the transactions that advance one run (turn and request numbering).
        ``also`` (a write: SQL and parameters, reading nothing the lock protects) runs in
        the same statement, one round trip."""
        if also is None:
            self._cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
            return
        sql, params = also
        self._execute(
            f"WITH written AS ({sql}) SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
            (*params, key),
        )


class PostgresStore:
    """PostgreSQL through psycopg 3 (the ``postgres`` extra): the database clock for
    leases, ``FOR UPDATE SKIP LOCKED`` claims, advisory locks for run advancement.

    ``schema`` puts the ledger's tables in that schema (the session's ``search_path``;
    created with ``create=True``, required to exist otherwise). Without it, the tables go
    where the URL's own ``search_path`` puts them (``public`` by default)."""

    dialect = "postgres"

    def __init__(self, url: str, *, schema: str | None = None, create: bool = True) -> None:
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "a postgresql:// ledger needs psycopg 3: pip install 'callgate[postgres]'"
            ) from None
        self.url = url
        self.schema = schema
        self.errors: tuple[type[Exception], ...] = (psycopg.Error,)
        self._integrity_error: type[Exception] = psycopg.errors.IntegrityError
        try:
            self._conn = psycopg.connect(url, autocommit=True)
        except psycopg.ProgrammingError as exc:  # libpq could not parse the URL
            raise UsageError(f"malformed ledger URL {redact(url)!r}: {scrub(exc, url)}") from None
        except psycopg.Error as exc:
            raise LedgerOpenError(redact(url), scrub(exc, url)) from None
        try:
            self._enter_schema(create)
        except psycopg.Error as exc:
            self._conn.close()
            raise LedgerOpenError(self._where(), scrub(exc, url)) from None
        except BaseException:
            self._conn.close()
            raise

    def _where(self) -> str:
        where = redact(self.url)
        return where if self.schema is None else f"{where} (schema {self.schema!r})"

    def _enter_schema(self, create: bool) -> None:
        from psycopg import sql

        if self.schema is not None:
            name = sql.Identifier(self.schema)
            if create:
                with self._conn.transaction():  # IF NOT EXISTS alone races a concurrent CREATE
                    self._conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                                       ("callgate.ledger.schema",))  # fmt: skip
                    self._conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
            elif (
                self._conn.execute(
                    "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
                ).fetchone()
                is None
            ):
                raise LedgerOpenError(
                    redact(self.url),
                    f"no schema {self.schema!r} (only open_ledger(..., create=True) "
                    "creates a ledger's schema)",
                )
            self._conn.execute(sql.SQL("SET search_path TO {}").format(name))
        if not create:
            row = self._conn.execute("SELECT to_regclass('ledger_meta')").fetchone()
            if row is None or row[0] is None:
                raise LedgerOpenError(self._where(), "no ledger here (no ledger_meta table)")

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
        """Another connection to the same database and schema (the URL's search path, or
        ``schema``), which exist by now: never create them."""
        return PostgresStore(self.url, schema=self.schema, create=False)

    def close(self) -> None:
        self._conn.close()


def check_schema(schema: object) -> str | None:
    """``schema=`` as given, checked: None, or a PostgreSQL identifier (used quoted, so
    exactly as spelled; at most 63 bytes, PostgreSQL would cut a longer one silently)."""
    if schema is None:
        return None
    if type(schema) is not str or not schema or "\x00" in schema:
        raise UsageError("schema must be a non-empty str (a PostgreSQL schema name)")
    if len(schema.encode()) > 63:
        raise UsageError(f"schema {schema!r} is longer than PostgreSQL's 63-byte names")
    return schema


def open_store(url: str, *, create: bool = True, schema: str | None = None) -> Store:
    """A store for ``sqlite:///path`` or ``postgresql://...``.

    ``create=False`` opens an existing ledger only (:class:`LedgerOpenError` otherwise);
    ``schema`` is PostgreSQL's. Raises :class:`UsageError` for a bad URL or option,
    :class:`LedgerOpenError` when the database cannot be opened."""
    kind = store_kind(url)
    schema = check_schema(schema)
    if kind == "sqlite":
        if schema is not None:
            raise UsageError(
                "schema= is a PostgreSQL option; a SQLite ledger is one file: give each "
                "application its own file"
            )
        return SQLiteStore(url, sqlite_path(url), create=create)
    return PostgresStore(url, schema=schema, create=create)
