"""callgate.ledger: execute each released tool call at most once, durably.

``open_ledger("sqlite:///agent.db", tools=[...])`` (or a ``postgresql://`` URL) gives a
:class:`Ledger`. The rules it keeps (R1-R5), the effect classes and what each guarantee
covers are in docs/ledger.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._decisions import DEFAULT_PENDING, Approval
from ._leases import LeaseKeeper
from ._ledger import UNKNOWN_OUTCOME, FaultHook, Ledger
from ._model import (
    Applied,
    ApprovalError,
    AuditEvent,
    CallInput,
    Claim,
    ConflictError,
    EffectClass,
    EffectFailed,
    EffectRecord,
    EffectState,
    FencedError,
    Inconclusive,
    LeaseLostError,
    LedgerError,
    NotApplied,
    RecoveryReport,
    RequestRecord,
    RequestState,
    RunBusyError,
    RunLease,
    SchemaVersionError,
    Tool,
    ToolContext,
    TurnInput,
    iso_utc,
)
from ._outbox import LocalTx, OutboxMessage
from ._schema import SCHEMA_VERSION, migrate
from ._store import open_store
from ._transitions import (
    OUTBOX_TRANSITIONS,
    REQUEST_IN_DOUBT,
    REQUEST_TRANSITIONS,
    TRANSITIONS,
    EffectEvent,
    OutboxEvent,
    OutboxState,
    RequestEvent,
    is_legal_trail,
)
from ._waits import waits_for

__all__ = [
    "DEFAULT_PENDING",
    "OUTBOX_TRANSITIONS",
    "REQUEST_IN_DOUBT",
    "REQUEST_TRANSITIONS",
    "SCHEMA_VERSION",
    "TRANSITIONS",
    "UNKNOWN_OUTCOME",
    "Applied",
    "Approval",
    "ApprovalError",
    "AuditEvent",
    "CallInput",
    "Claim",
    "ConflictError",
    "EffectClass",
    "EffectEvent",
    "EffectFailed",
    "EffectRecord",
    "EffectState",
    "FencedError",
    "Inconclusive",
    "LeaseKeeper",
    "LeaseLostError",
    "Ledger",
    "LedgerError",
    "LocalTx",
    "NotApplied",
    "OutboxEvent",
    "OutboxMessage",
    "OutboxState",
    "RecoveryReport",
    "RequestEvent",
    "RequestRecord",
    "RequestState",
    "RunBusyError",
    "RunLease",
    "SchemaVersionError",
    "Tool",
    "ToolContext",
    "TurnInput",
    "is_legal_trail",
    "iso_utc",
    "open_ledger",
    "waits_for",
]


def open_ledger(
    url: str,
    *,
    tools: Iterable[Tool] = (),
    scope: str = "default",
    policy_version: str = "1",
    fault: FaultHook | None = None,
) -> Ledger:
    """Open (creating or migrating) the ledger at ``url``: ``sqlite:///path.db`` or
    ``postgresql://user@host/db`` (needs the ``postgres`` extra).

    Raises :class:`UsageError` for a bad URL, :class:`SchemaVersionError` when the
    database's schema is newer than this callgate knows.
    """
    store = open_store(url)
    try:
        migrate(store)
    except BaseException:
        store.close()
        raise
    return Ledger(store, tools=tools, scope=scope, policy_version=policy_version, fault=fault)
