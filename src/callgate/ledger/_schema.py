"""The ledger's schema: forward migrations, applied in order in one transaction.

``ledger_meta.schema_version`` says how many migrations a database has seen. Opening a
database whose version is newer than ``len(MIGRATIONS)`` raises
:class:`SchemaVersionError` (an older callgate must never write a newer layout).
Migrations are only ever appended; a released one is never edited.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import SchemaVersionError
from ._store import Store, Tx

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version"]

_V1 = (
    """CREATE TABLE ledger_runs (
        scope TEXT NOT NULL, run_id TEXT NOT NULL,
        unresolved TEXT NOT NULL,
        owner TEXT, owner_epoch INTEGER NOT NULL DEFAULT 0, owner_until {real},
        created_at {real} NOT NULL,
        PRIMARY KEY (scope, run_id))""",
    """CREATE TABLE ledger_requests (
        request_id TEXT PRIMARY KEY, scope TEXT NOT NULL, run_id TEXT NOT NULL,
        seq INTEGER NOT NULL, state TEXT NOT NULL, provider TEXT NOT NULL,
        request_digest TEXT NOT NULL, provider_turn_id TEXT, carries_turn INTEGER,
        provider_side_effects INTEGER NOT NULL, body TEXT NOT NULL, error TEXT,
        created_at {real} NOT NULL, updated_at {real} NOT NULL,
        UNIQUE (scope, run_id, seq),
        FOREIGN KEY (scope, run_id) REFERENCES ledger_runs (scope, run_id))""",
    """CREATE TABLE ledger_turns (
        scope TEXT NOT NULL, run_id TEXT NOT NULL, turn_seq INTEGER NOT NULL,
        request_id TEXT NOT NULL UNIQUE REFERENCES ledger_requests (request_id),
        provider TEXT NOT NULL, provider_turn_id TEXT NOT NULL, turn_digest TEXT NOT NULL,
        snapshot TEXT NOT NULL, created_at {real} NOT NULL,
        PRIMARY KEY (scope, run_id, turn_seq),
        UNIQUE (scope, run_id, provider_turn_id),
        FOREIGN KEY (scope, run_id) REFERENCES ledger_runs (scope, run_id))""",
    """CREATE TABLE ledger_effects (
        effect_id TEXT PRIMARY KEY, scope TEXT NOT NULL, run_id TEXT NOT NULL,
        turn_seq INTEGER NOT NULL, position INTEGER NOT NULL, call_id TEXT NOT NULL,
        tool TEXT NOT NULL, effect_class TEXT NOT NULL, arguments TEXT NOT NULL,
        args_digest TEXT NOT NULL, idempotency_token TEXT NOT NULL, business_key TEXT,
        duplicate_of TEXT, requires_approval INTEGER NOT NULL, tool_digest TEXT NOT NULL,
        turn_digest TEXT NOT NULL, state TEXT NOT NULL, version INTEGER NOT NULL,
        attempt INTEGER NOT NULL, epoch INTEGER NOT NULL, lease_owner TEXT,
        lease_until {real}, result TEXT, delivered_request_id TEXT,
        created_at {real} NOT NULL, updated_at {real} NOT NULL,
        UNIQUE (scope, run_id, turn_seq, call_id),
        FOREIGN KEY (scope, run_id, turn_seq)
            REFERENCES ledger_turns (scope, run_id, turn_seq))""",
    "CREATE INDEX ledger_effects_state ON ledger_effects (state, lease_until)",
    "CREATE INDEX ledger_effects_run ON ledger_effects (scope, run_id, turn_seq, position)",
    """CREATE UNIQUE INDEX ledger_effects_business ON ledger_effects (scope, tool, business_key)
        WHERE business_key IS NOT NULL AND duplicate_of IS NULL""",
    """CREATE TABLE ledger_approvals (
        approval_id TEXT PRIMARY KEY,
        effect_id TEXT NOT NULL REFERENCES ledger_effects (effect_id),
        args_digest TEXT NOT NULL, turn_digest TEXT NOT NULL, tool_digest TEXT NOT NULL,
        policy_version TEXT NOT NULL, expires_at {real} NOT NULL,
        consumed_at {real}, consumed_epoch INTEGER, actor TEXT NOT NULL, reason TEXT NOT NULL,
        created_at {real} NOT NULL)""",
    "CREATE INDEX ledger_approvals_effect ON ledger_approvals (effect_id)",
    """CREATE TABLE ledger_events (
        seq {serial}, scope TEXT NOT NULL, run_id TEXT NOT NULL, effect_id TEXT,
        request_id TEXT, from_state TEXT, to_state TEXT NOT NULL, event TEXT NOT NULL,
        epoch INTEGER, actor TEXT NOT NULL, detail TEXT NOT NULL, at {real} NOT NULL)""",
    "CREATE INDEX ledger_events_effect ON ledger_events (effect_id, seq)",
    """CREATE TABLE ledger_decisions (
        decision_id TEXT PRIMARY KEY,
        effect_id TEXT NOT NULL REFERENCES ledger_effects (effect_id),
        action TEXT NOT NULL, expected_version INTEGER NOT NULL, actor TEXT NOT NULL,
        reason TEXT NOT NULL, result TEXT, at {real} NOT NULL)""",
    """CREATE TABLE ledger_late_results (
        seq {serial}, effect_id TEXT NOT NULL REFERENCES ledger_effects (effect_id),
        epoch INTEGER NOT NULL, worker_id TEXT NOT NULL, result TEXT NOT NULL,
        at {real} NOT NULL)""",
)

_V2 = (
    """CREATE TABLE ledger_outbox (
        outbox_id TEXT PRIMARY KEY,
        effect_id TEXT NOT NULL REFERENCES ledger_effects (effect_id),
        topic TEXT NOT NULL, payload TEXT NOT NULL, idempotency_token TEXT NOT NULL,
        state TEXT NOT NULL, attempts INTEGER NOT NULL, lease_owner TEXT,
        lease_until {real}, sent_at {real}, created_at {real} NOT NULL)""",
    "CREATE INDEX ledger_outbox_state ON ledger_outbox (state, lease_until)",
)

# Inline media of tool results, once per digest (see ledger/_parts.py); results name them.
_V3 = (
    """CREATE TABLE ledger_blobs (
        digest TEXT PRIMARY KEY, size INTEGER NOT NULL, data {blob} NOT NULL,
        created_at {real} NOT NULL)""",
    # A request body's long strings (a replayed screenshot) in ledger_blobs: ledger/_bodies.py
    "ALTER TABLE ledger_requests ADD COLUMN body_blobs TEXT",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3)
SCHEMA_VERSION = len(MIGRATIONS)
_META = "CREATE TABLE IF NOT EXISTS ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def _read_version(tx: Tx) -> int:
    row = tx.one("SELECT value FROM ledger_meta WHERE key = 'schema_version'")
    if row is None:
        return 0
    try:
        return int(row[0])
    except ValueError:
        raise SchemaVersionError(
            f"ledger_meta.schema_version is not a number: {row[0]!r}"
        ) from None


def schema_version(store: Store) -> int:
    """The version the database is at (0 for an empty database)."""
    with store.transaction() as tx:
        tx.run(_META)
        return _read_version(tx)


def migrate(store: Store, migrations: Sequence[tuple[str, ...]] = MIGRATIONS) -> int:
    """Bring the database up to ``len(migrations)``; return the version reached.

    Raises :class:`SchemaVersionError` if the database is newer than ``migrations``.
    """
    known = len(migrations)
    with store.transaction() as tx:
        tx.lock_run("callgate.ledger.migrate")
        tx.run(_META)
        current = _read_version(tx)
        if current > known:
            raise SchemaVersionError(
                f"the ledger database is at schema version {current}, newer than the {known} "
                "this callgate knows: upgrade callgate (never downgrade a ledger)"
            )
        for version in range(current + 1, known + 1):
            for statement in migrations[version - 1]:
                tx.run(statement)
        if current == 0:
            tx.run(
                "INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?)", (str(known),)
            )
        elif known > current:
            tx.run("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'", (str(known),))
    return known if known > current else current
