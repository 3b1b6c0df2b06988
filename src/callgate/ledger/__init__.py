"""callgate.ledger: execute each released tool call at most once, durably.

``open_ledger("sqlite:///agent.db", tools=[...])`` (or a ``postgresql://`` URL) gives a
:class:`Ledger`. The rules it keeps (R1-R5), the effect classes and what each guarantee
covers are in docs/ledger.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._errors import UsageError
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
    LedgerOpenError,
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
from ._parts import summary as result_summary
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
from ._url import redact, scrub
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
    "LedgerOpenError",
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
    "result_summary",
    "waits_for",
]


def open_ledger(
    url: str,
    *,
    tools: Iterable[Tool] = (),
    scope: str = "default",
    schema: str | None = None,
    create: bool = True,
    policy_version: str = "1",
    fault: FaultHook | None = None,
) -> Ledger:
    """Open the ledger at ``url``, migrating it forward: ``sqlite:///relative.db``,
    ``sqlite:////absolute.db`` or ``postgresql://user@host/db`` (the ``postgres`` extra).

    ``create=True`` (the default) creates the file, or the PostgreSQL ``schema``, and the
    ledger's tables when missing; ``create=False`` opens an existing ledger only, writing
    nothing to a file or schema that holds none. ``schema`` (PostgreSQL only) keeps this
    application's tables in a schema of their own; ``scope`` separates tenants inside one
    ledger's tables (docs/ledger.md, "Operator CLI").

    Raises :class:`UsageError` for a bad URL or option, :class:`LedgerOpenError` when
    the database cannot be opened or holds no ledger (``create=False``), and
    :class:`SchemaVersionError` when its schema is newer than this callgate knows.
    """
    if type(create) is not bool:
        raise UsageError("create must be True or False")
    store = open_store(url, create=create, schema=schema)
    try:
        migrate(store)
        return Ledger(store, tools=tools, scope=scope, policy_version=policy_version, fault=fault)
    except store.errors as exc:
        store.close()
        raise LedgerOpenError(redact(url), scrub(exc, url)) from None
    except BaseException:
        store.close()
        raise
