"""The ledger's vocabulary: effect classes, states, tools, records and errors.

Everything here is plain data. The state machine itself is the table in ``_transitions``;
the stores in ``_sqlite`` / ``_postgres`` only persist it.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .._errors import CallgateError, UsageError
from .._results import ToolResult

__all__ = [
    "Applied",
    "ApprovalError",
    "AuditEvent",
    "CallInput",
    "Claim",
    "ConflictError",
    "EffectClass",
    "EffectFailed",
    "EffectRecord",
    "EffectState",
    "FencedError",
    "Inconclusive",
    "LeaseLostError",
    "LedgerError",
    "LedgerOpenError",
    "NotApplied",
    "RecoveryReport",
    "RequestRecord",
    "RequestState",
    "RunBusyError",
    "RunLease",
    "SchemaVersionError",
    "Tool",
    "ToolContext",
    "TurnInput",
    "iso_utc",
]


def iso_utc(seconds: float) -> str:
    """A time on the database clock (epoch seconds, as the ledger stores leases) in
    ISO-8601 UTC, to the millisecond: ``2026-07-21T09:30:00.250Z``."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class LedgerError(CallgateError):
    """A ledger operation was refused (the ledger itself stays usable)."""


class LedgerOpenError(LedgerError):
    """No ledger could be opened at the URL: the file or the PostgreSQL schema does not
    exist (and ``create=False``), it holds no ledger, it is not a database, or the server
    refused the connection. ``database`` is the URL with its password masked; the message
    names it and the cause, on one line."""

    def __init__(self, database: str, cause: str) -> None:
        super().__init__(f"{database}: {cause}")
        self.database = database
        self.cause = cause


class SchemaVersionError(LedgerError):
    """The database's schema is newer than this callgate knows, or is not a ledger's."""


class ConflictError(LedgerError):
    """A write contradicts what is recorded: other arguments for a recorded call, a stale
    ``expected_version``, a reused decision id, a transition the state machine forbids."""


class FencedError(LedgerError):
    """A write carried a lease epoch that is no longer current (the result was kept aside)."""


class LeaseLostError(FencedError):
    """The run lease is gone: another worker took the run (its epoch moved on) or it was
    released. ``run_id``, ``worker_id`` and ``epoch_held`` name the lease that was lost;
    ``epoch_found`` and ``owner_found`` what the database holds now (``owner_found`` is
    None for a released run). Nothing was written under the lost lease."""

    def __init__(
        self,
        run_id: str,
        *,
        worker_id: str,
        epoch_held: int,
        epoch_found: int | None,
        owner_found: str | None,
    ) -> None:
        holder = f"held by {owner_found!r}" if owner_found is not None else "released"
        super().__init__(
            f"run {run_id!r}: the lease {worker_id!r} held at epoch {epoch_held} is lost; "
            f"the run is at epoch {epoch_found}, {holder}"
        )
        self.run_id = run_id
        self.worker_id = worker_id
        self.epoch_held = epoch_held
        self.epoch_found = epoch_found
        self.owner_found = owner_found


class ApprovalError(LedgerError):
    """An effect that needs an approval has no valid, unconsumed one."""


class RunBusyError(LedgerError):
    """Another worker holds the run's advancement lease: ``owner`` at ``epoch``, until
    ``until`` (epoch seconds on the database clock; :func:`iso_utc` formats it)."""

    def __init__(self, run_id: str, *, owner: str, epoch: int, until: float) -> None:
        super().__init__(
            f"run {run_id!r} is being advanced by worker {owner!r} (lease epoch {epoch}) "
            f"until {iso_utc(until)} on the database clock"
        )
        self.run_id = run_id
        self.owner = owner
        self.epoch = epoch
        self.until = until


class EffectClass(enum.StrEnum):
    """What may happen to an effect whose attempt is in doubt (see docs/ledger.md)."""

    READ = "read"
    IDEMPOTENT_REMOTE = "idempotent_remote"
    VERIFIABLE = "verifiable"
    AT_MOST_ONCE = "at_most_once"
    LOCAL_TX = "local_tx"


class EffectState(enum.StrEnum):
    PROPOSED = "proposed"
    AWAITING_APPROVAL = "awaiting_approval"
    READY = "ready"
    REJECTED = "rejected"
    EXECUTING = "executing"
    COMMITTED = "committed"
    FAILED = "failed"
    UNKNOWN = "unknown"
    VERIFYING = "verifying"
    NEEDS_OPERATOR = "needs_operator"
    DELIVERED = "delivered"


SETTLED = frozenset({EffectState.COMMITTED, EffectState.FAILED, EffectState.REJECTED})
UNRESOLVED = frozenset({EffectState.UNKNOWN, EffectState.VERIFYING, EffectState.NEEDS_OPERATOR})


class RequestState(enum.StrEnum):
    PREPARED = "prepared"
    SENT = "sent"
    IDENTIFIED = "identified"
    TURN_PERSISTED = "turn_persisted"
    FAILED_DEFINITE = "failed_definite"
    UNKNOWN = "unknown"


@dataclasses.dataclass(frozen=True, slots=True)
class Applied:
    """``verify`` found the effect applied; ``output`` is the result the model will see."""

    output: Any


@dataclasses.dataclass(frozen=True, slots=True)
class NotApplied:
    """``verify`` proved the effect did not apply: a re-run is safe."""


@dataclasses.dataclass(frozen=True, slots=True)
class Inconclusive:
    """``verify`` cannot tell yet; ask again after ``settle_seconds``."""

    settle_seconds: float = 0.0


VerifyOutcome = Applied | NotApplied | Inconclusive


class EffectFailed(Exception):  # noqa: N818 - a tool's verdict, not a ledger error
    """Raised by a tool whose effect definitely did not apply; ``output`` goes to the model
    as an error result. Any other exception leaves the outcome in doubt."""

    def __init__(self, output: Any) -> None:
        super().__init__(str(output))
        self.output = output


@dataclasses.dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool's ``run`` and ``verify`` receive besides the arguments.

    ``idempotency_token`` is stable across attempts and workers; send it to remote APIs
    (e.g. as an ``Idempotency-Key`` header). ``tx`` is the ledger's open transaction, only
    for ``LOCAL_TX`` tools: ``tx.execute(sql, params)`` and ``tx.outbox(topic, payload)``.
    ``call_id`` is the provider's id of the call this effect answers, so that ``run`` can
    return ``ToolResult(ctx.call_id, output, audit=...)`` without inventing one.
    """

    effect_id: str
    idempotency_token: str
    attempt: int
    tool: str
    tx: Any = None
    call_id: str = dataclasses.field(kw_only=True)


@dataclasses.dataclass(frozen=True, slots=True, init=False)
class Tool:
    """A tool registered on the ledger. ``run(arguments, ctx)`` returns the output (a str or
    a JSON value; or a tuple of TextPart/MediaPart, or a ToolResult to add an ``audit``
    value or mark an error: ``ToolResult(ctx.call_id, ...)``, bound to the effect's call
    whatever id it names);
    ``verify(arguments, ctx)`` returns Applied / NotApplied / Inconclusive.
    ``business_key(arguments)`` names the intent for duplicate detection across turns: a
    str; when it raises or returns anything else, that call gets an error result (it is
    not run) and the run goes on. Raises :class:`UsageError` when a callable is not one."""

    name: str
    run: Callable[[Any, ToolContext], Any]
    effect: EffectClass = EffectClass.AT_MOST_ONCE
    verify: Callable[[Any, ToolContext], VerifyOutcome] | None = None
    requires_approval: bool = False
    business_key: Callable[[Any], str] | None = None
    on_business_duplicate: Literal["replay", "reject", "allow"] = "reject"

    def __init__(
        self,
        name: str,
        run: Callable[[Any, ToolContext], Any],
        *,
        effect: EffectClass = EffectClass.AT_MOST_ONCE,
        verify: Callable[[Any, ToolContext], VerifyOutcome] | None = None,
        requires_approval: bool = False,
        business_key: Callable[[Any], str] | None = None,
        on_business_duplicate: Literal["replay", "reject", "allow"] = "reject",
    ) -> None:
        if type(name) is not str or not name:
            raise UsageError("Tool.name must be a non-empty str")
        if not isinstance(effect, EffectClass):
            raise UsageError("Tool.effect must be an EffectClass")
        if effect is EffectClass.VERIFIABLE and verify is None:
            raise UsageError(f"tool {name!r} is VERIFIABLE but has no verify")
        for role, function, optional in (
            ("run", run, False),
            ("verify", verify, True),
            ("business_key", business_key, True),
        ):
            if not callable(function) and not (optional and function is None):
                raise UsageError(
                    f"tool {name!r}: {role} must be callable, not {type(function).__name__}"
                )
        if on_business_duplicate not in ("replay", "reject", "allow"):
            raise UsageError("on_business_duplicate must be 'replay', 'reject' or 'allow'")
        for field, value in (
            ("name", name),
            ("run", run),
            ("effect", effect),
            ("verify", verify),
            ("requires_approval", bool(requires_approval)),
            ("business_key", business_key),
            ("on_business_duplicate", on_business_duplicate),
        ):
            object.__setattr__(self, field, value)

    def definition(self) -> dict[str, Any]:
        """The parts of the tool an approval is bound to (its digest is the tool digest)."""
        return {
            "name": self.name,
            "effect": self.effect.value,
            "requires_approval": self.requires_approval,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class CallInput:
    """One released call, protocol-neutral: the provider's call id, tool name, arguments."""

    call_id: str
    tool: str
    arguments: Any


@dataclasses.dataclass(frozen=True, slots=True)
class TurnInput:
    """A terminal turn as the ledger stores it (the loop converts a room's turn to this)."""

    provider: str
    provider_turn_id: str
    digest: str
    snapshot: Any
    calls: Sequence[CallInput]


@dataclasses.dataclass(frozen=True, slots=True)
class RequestRecord:
    request_id: str
    run_id: str
    seq: int
    state: RequestState
    provider: str
    request_digest: str
    provider_turn_id: str | None
    carries_turn: int | None
    provider_side_effects: bool
    body: Any


@dataclasses.dataclass(frozen=True, slots=True)
class EffectRecord:
    effect_id: str
    run_id: str
    turn_seq: int
    position: int
    call_id: str
    tool: str
    effect_class: EffectClass
    arguments: Any
    args_digest: str
    idempotency_token: str
    state: EffectState
    version: int
    attempt: int
    epoch: int
    lease_owner: str | None
    result: ToolResult | None
    business_key: str | None
    duplicate_of: str | None
    delivered_request_id: str | None
    scope: str
    # While ``executing`` or ``verifying``: when the attempt's lease runs out; while an
    # inconclusive ``unknown``: when the verifier is due again (database clock, seconds).
    lease_until: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Claim:
    """A fenced right to run one attempt: every write after it carries ``epoch``."""

    effect_id: str
    epoch: int
    attempt: int
    worker_id: str
    tool: str
    arguments: Any
    idempotency_token: str
    call_id: str


@dataclasses.dataclass(frozen=True, slots=True)
class RunLease:
    run_id: str
    worker_id: str
    epoch: int


@dataclasses.dataclass(frozen=True, slots=True)
class AuditEvent:
    seq: int
    effect_id: str | None
    run_id: str
    from_state: str | None
    to_state: str
    event: str
    epoch: int | None
    actor: str
    detail: Any
    at: float


@dataclasses.dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What ``recover`` did and found. ``lost`` moved executing -> unknown; of those,
    ``retried`` went back to ready (their class allows it), ``escalated`` to
    needs_operator, ``to_verify`` wait for ``verify``. ``requests`` are model requests left
    before ``turn_persisted`` (R5: reconcile, re-send, or hold when ``provider_side_effects``)."""

    lost: tuple[str, ...]
    retried: tuple[str, ...]
    escalated: tuple[str, ...]
    to_verify: tuple[str, ...]
    requests: tuple[RequestRecord, ...]
    resumable_runs: tuple[str, ...]
