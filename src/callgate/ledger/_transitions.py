"""The ledger's three state machines, each one table ``(state, event) -> state``, and the
one way a state is written: :func:`move` (:func:`move_row` for a row named by its key,
:func:`move_where` for the rows a WHERE clause picks).

- **effects** (one per released call): ``proposed`` ... ``delivered``; R2 and R3 of
  docs/ledger.md are rows of this table;
- **requests** (one per model request, R5): ``prepared`` -> ``sent`` -> ``identified`` ->
  ``turn_persisted``, or ``failed_definite`` / ``unknown``;
- **outbox rows** (what a ``local_tx`` tool asked to send): ``pending`` -> ``sending`` ->
  ``sent``.

Each machine starts from its ``start`` row (the event that inserts the record) and moves
only along its table. :func:`move` looks the event up (a missing row is a
:class:`ConflictError`), writes the new state guarded by the old one (compare-and-set: a
record that moved on meanwhile gives None, nothing is written) and, for effects and
requests, appends the audit row, all in the caller's transaction. :func:`move_where` does
the same for the rows a WHERE clause picks: the claims (``claim_next`` picks its row in a
subquery; ``record_turn(claim_as=)`` claims a whole turn) and the outbox relay's lease.
Inserting a record (its machine's ``start`` event) and extending a lease (no state
changes) are the only other writes to these tables.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ._model import AuditEvent, ConflictError, EffectRecord, EffectState, RequestRecord
from ._model import RequestState as R
from ._rows import (
    EFFECT_COLUMNS,
    OUTBOX_COLUMNS,
    REQUEST_COLUMNS,
    RawSQL,
    dump,
    effect_from_row,
    outbox_from_row,
    request_from_row,
)
from ._store import Row, Tx

__all__ = [
    "EFFECTS",
    "OUTBOX",
    "OUTBOX_TRANSITIONS",
    "REQUESTS",
    "REQUEST_IN_DOUBT",
    "REQUEST_TRANSITIONS",
    "TRANSITIONS",
    "EffectEvent",
    "Machine",
    "OutboxEvent",
    "OutboxState",
    "RequestEvent",
    "is_legal_trail",
    "move",
    "move_row",
    "move_where",
    "next_state",
]

S = EffectState
Rec = TypeVar("Rec", EffectRecord, RequestRecord)


class EffectEvent(enum.StrEnum):
    RECORD = "record"  # the start: the row is inserted as proposed
    ADMIT = "admit"
    NEEDS_APPROVAL = "needs_approval"
    REJECT = "reject"
    REPLAY = "replay"
    APPROVE = "approve"
    DENY = "deny"
    CLAIM = "claim"
    APPROVAL_LAPSED = "approval_lapsed"
    COMMIT = "commit"
    FAIL = "fail"
    LOSE = "lose"
    RETRY = "retry"
    RETRY_NEEDS_APPROVAL = "retry_needs_approval"
    VERIFY = "verify"
    ESCALATE = "escalate"
    APPLIED = "applied"
    NOT_APPLIED = "not_applied"
    NOT_APPLIED_NEEDS_APPROVAL = "not_applied_needs_approval"
    INCONCLUSIVE = "inconclusive"
    RESOLVE_COMMIT = "resolve_commit"
    RESOLVE_FAIL = "resolve_fail"
    RESOLVE_RETRY = "resolve_retry"
    RESOLVE_RETRY_NEEDS_APPROVAL = "resolve_retry_needs_approval"
    DELIVER = "deliver"


E = EffectEvent

TRANSITIONS: dict[tuple[EffectState, EffectEvent], EffectState] = {
    (S.PROPOSED, E.ADMIT): S.READY,
    (S.PROPOSED, E.NEEDS_APPROVAL): S.AWAITING_APPROVAL,
    (S.PROPOSED, E.REJECT): S.REJECTED,
    (S.PROPOSED, E.REPLAY): S.COMMITTED,
    (S.AWAITING_APPROVAL, E.APPROVE): S.READY,
    (S.AWAITING_APPROVAL, E.DENY): S.REJECTED,
    (S.READY, E.CLAIM): S.EXECUTING,
    (S.READY, E.APPROVAL_LAPSED): S.AWAITING_APPROVAL,
    # From here on the effect may have applied.
    (S.EXECUTING, E.COMMIT): S.COMMITTED,
    (S.EXECUTING, E.FAIL): S.FAILED,
    (S.EXECUTING, E.LOSE): S.UNKNOWN,
    # R2: only the class (``retry``), a verifier or an operator leaves ``unknown``.
    (S.UNKNOWN, E.RETRY): S.READY,
    (S.UNKNOWN, E.RETRY_NEEDS_APPROVAL): S.AWAITING_APPROVAL,
    (S.UNKNOWN, E.VERIFY): S.VERIFYING,
    (S.UNKNOWN, E.ESCALATE): S.NEEDS_OPERATOR,
    (S.VERIFYING, E.APPLIED): S.COMMITTED,
    (S.VERIFYING, E.NOT_APPLIED): S.READY,
    (S.VERIFYING, E.NOT_APPLIED_NEEDS_APPROVAL): S.AWAITING_APPROVAL,
    (S.VERIFYING, E.INCONCLUSIVE): S.UNKNOWN,
    (S.VERIFYING, E.LOSE): S.UNKNOWN,
    (S.UNKNOWN, E.RESOLVE_COMMIT): S.COMMITTED,
    (S.UNKNOWN, E.RESOLVE_FAIL): S.FAILED,
    (S.UNKNOWN, E.RESOLVE_RETRY): S.READY,
    (S.UNKNOWN, E.RESOLVE_RETRY_NEEDS_APPROVAL): S.AWAITING_APPROVAL,
    (S.NEEDS_OPERATOR, E.RESOLVE_COMMIT): S.COMMITTED,
    (S.NEEDS_OPERATOR, E.RESOLVE_FAIL): S.FAILED,
    (S.NEEDS_OPERATOR, E.RESOLVE_RETRY): S.READY,
    (S.NEEDS_OPERATOR, E.RESOLVE_RETRY_NEEDS_APPROVAL): S.AWAITING_APPROVAL,
    # R4: delivered once the request carrying the result is accepted.
    (S.COMMITTED, E.DELIVER): S.DELIVERED,
    (S.FAILED, E.DELIVER): S.DELIVERED,
    (S.REJECTED, E.DELIVER): S.DELIVERED,
}


class RequestEvent(enum.StrEnum):
    RECORD = "record_request"  # a start: recorded before it is sent
    RECORD_SENT = "record_sent"  # a start: recorded as sent (the bytes leave right after)
    SEND = "send"
    IDENTIFY = "identify"  # the first event naming the provider's turn
    PERSIST_TURN = "record_turn"
    FAIL = "fail"  # definitely no turn (e.g. a 4xx before any event)
    LOSE = "lose"  # the outcome is in doubt


RE = RequestEvent
_OPEN = (R.PREPARED, R.SENT, R.IDENTIFIED)

REQUEST_TRANSITIONS: dict[tuple[R, RequestEvent], R] = {
    (R.PREPARED, RE.SEND): R.SENT,
    (R.PREPARED, RE.IDENTIFY): R.IDENTIFIED,
    (R.SENT, RE.IDENTIFY): R.IDENTIFIED,
    **{(state, RE.PERSIST_TURN): R.TURN_PERSISTED for state in _OPEN},
    **{(state, RE.FAIL): R.FAILED_DEFINITE for state in (*_OPEN, R.UNKNOWN)},
    **{(state, RE.LOSE): R.UNKNOWN for state in (*_OPEN, R.UNKNOWN)},
}


class OutboxState(enum.StrEnum):
    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"


class OutboxEvent(enum.StrEnum):
    ENQUEUE = "enqueue"  # the start: written in the local_tx tool's transaction
    LEASE = "lease"  # a relay takes the row (from sending only once that lease ran out)
    SEND = "send"  # ``send`` returned
    RELEASE = "release"  # ``send`` raised: back to pending


OUTBOX_TRANSITIONS: dict[tuple[OutboxState, OutboxEvent], OutboxState] = {
    (OutboxState.PENDING, OutboxEvent.LEASE): OutboxState.SENDING,
    (OutboxState.SENDING, OutboxEvent.LEASE): OutboxState.SENDING,
    (OutboxState.SENDING, OutboxEvent.SEND): OutboxState.SENT,
    (OutboxState.SENDING, OutboxEvent.RELEASE): OutboxState.PENDING,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Machine:
    """One table and how its records are stored: the SQL table, its key column (the first
    of ``columns``), what an UPDATE also sets, the columns a record is read from, and
    (when audited) what a moved row gives its ``ledger_events`` row: scope, run, effect,
    request, epoch."""

    name: str
    start: Mapping[Any, Any]
    transitions: Mapping[tuple[Any, Any], Any]
    table: str
    key: str
    also: str
    columns: str
    from_row: Callable[[Row, Tx], Any]
    trail: str | None

    def step(self, state: Any, event: Any, key: str | None = None) -> Any:
        """The state ``event`` leads to from ``state``; :class:`ConflictError` if none."""
        target = self.transitions.get((state, event))
        if target is None:
            which = self.name if key is None else f"{self.name} {key!r}"
            raise ConflictError(f"{which} is {state!s}: no transition {str(event)!r} from there")
        return target

    def sources(self, event: Any) -> tuple[Any, ...]:
        """The states ``event`` leaves from, in table order."""
        return _SOURCES[self.name].get(event, ())


EFFECTS = Machine(
    name="effect",
    start={E.RECORD: S.PROPOSED},
    transitions=TRANSITIONS,
    table="ledger_effects",
    key="effect_id",
    also=", version = version + 1, updated_at = {now}",
    columns=EFFECT_COLUMNS,
    from_row=effect_from_row,
    trail="scope, run_id, effect_id, NULL, epoch",
)
REQUESTS = Machine(
    name="request",
    start={RE.RECORD: R.PREPARED, RE.RECORD_SENT: R.SENT},
    transitions=REQUEST_TRANSITIONS,
    table="ledger_requests",
    key="request_id",
    also=", updated_at = {now}",
    columns=REQUEST_COLUMNS,
    from_row=request_from_row,
    trail="scope, run_id, NULL, request_id, NULL",
)
# Outbox rows keep no audit trail: their attempts counter and lease say what happened.
OUTBOX = Machine(
    name="outbox",
    start={OutboxEvent.ENQUEUE: OutboxState.PENDING},
    transitions=OUTBOX_TRANSITIONS,
    table="ledger_outbox",
    key="outbox_id",
    also="",
    columns=OUTBOX_COLUMNS,
    from_row=outbox_from_row,
    trail=None,
)


_SOURCES: dict[str, dict[Any, tuple[Any, ...]]] = {}
for _machine in (EFFECTS, REQUESTS, OUTBOX):
    _by_event: dict[Any, tuple[Any, ...]] = {}
    for _state, _event in _machine.transitions:
        _by_event[_event] = (*_by_event.get(_event, ()), _state)
    _SOURCES[_machine.name] = _by_event


def _final(machine: Machine) -> frozenset[Any]:
    moving = {s for (s, _) in machine.transitions}
    return frozenset(machine.transitions.values()) - moving


def _reachable(machine: Machine, state: Any) -> set[Any]:
    seen, todo = {state}, [state]
    while todo:
        here = todo.pop()
        for (s, _), target in machine.transitions.items():
            if s == here and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


# Requests that may have reached the provider and have no persisted turn: ``sent`` and
# every unfinished state after it (recovery reconciles these; R5).
REQUEST_IN_DOUBT = frozenset(_reachable(REQUESTS, R.SENT) - _final(REQUESTS))


def next_state(state: EffectState, event: str) -> EffectState:
    """The state an effect ``event`` leads to from ``state``; :class:`ConflictError` if
    none."""
    target: EffectState = EFFECTS.step(state, event)
    return target


def _assign(sets: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """``, column = ?`` per value; a :class:`RawSQL` value is inlined with its params."""
    sql = ""
    params: list[Any] = []
    for column, value in (sets or {}).items():
        if type(value) is RawSQL:
            sql += f", {column} = {value.sql}"
            params.extend(value.params)
        else:
            sql += f", {column} = ?"
            params.append(value)
    return sql, params


def _audit(
    tx: Tx,
    machine: Machine,
    key: str,
    source: Any,
    target: Any,
    event: Any,
    actor: str,
    detail: Any,
) -> None:
    """The audit row of one move, its keys read from the moved row by the database."""
    if machine.trail is None:
        return
    tx.run(
        f"{_EVENT_INSERT}SELECT {machine.trail}, ?, ?, ?, ?, ?, {{now}} "  # noqa: S608
        f"FROM {machine.table} WHERE {machine.key} = ?",
        (str(source), str(target), str(event), actor, dump(detail), key),
    )


_EVENT_INSERT = (
    "INSERT INTO ledger_events (scope, run_id, effect_id, request_id, epoch, from_state, "
    "to_state, event, actor, detail, at) "
)


def _update(
    tx: Tx,
    machine: Machine,
    key: str,
    source: Any,
    target: Any,
    sets: Mapping[str, Any] | None,
    fence: Mapping[str, Any] | None,
    read: bool,
    trail: tuple[Any, ...] | None = None,
) -> Row | bool:
    """The compare-and-set UPDATE of one move: the moved row (``read``), True, or False if
    nothing matched. On PostgreSQL with ``trail`` (the audit row's from, to, event, actor
    and detail) the audit row is written by the same statement: one round trip per move."""
    assignments, values = _assign(sets)
    fenced = dict(fence or {})
    guard = "".join(f" AND {column} = ?" for column in fenced)
    update = (
        f"UPDATE {machine.table} SET state = ?{machine.also}{assignments} "  # noqa: S608
        f"WHERE {machine.key} = ? AND state = ?{guard}"
    )
    params = [str(target), *values, key, str(source), *fenced.values()]
    wanted = machine.columns if read else machine.key
    if tx.dialect != "sqlite" and trail is not None:
        # A data-modifying WITH runs whether or not the outer SELECT reads it; the audit
        # row is built from the moved row (after the update), as _audit builds it.
        returned = tx.one(
            f"WITH moved AS ({update} RETURNING *), logged AS ({_EVENT_INSERT}"  # noqa: S608
            f"SELECT {machine.trail}, ?, ?, ?, ?, ?, {{now}} FROM moved) "
            f"SELECT {wanted} FROM moved",
            [*params, *trail],
        )
        return False if returned is None else (returned if read else True)
    if tx.dialect != "sqlite":  # one round trip
        returned = tx.one(f"{update} RETURNING {wanted}", params)
        return False if returned is None else (returned if read else True)
    # SQLite (3.40, Python's sqlite3): an UPDATE, then a SELECT by key when the record is
    # wanted, costs less CPU than UPDATE ... RETURNING (bench/RESULTS.md).
    if not tx.run(update, params):
        return False
    if not read:
        return True
    found = tx.one(f"SELECT {machine.columns} FROM {machine.table} WHERE {machine.key} = ?", (key,))  # noqa: S608
    return False if found is None else found


def _state_of(record: EffectRecord | RequestRecord) -> tuple[Machine, Any, str]:
    if isinstance(record, EffectRecord):
        return EFFECTS, record.state, record.effect_id
    return REQUESTS, record.state, record.request_id


def move(
    tx: Tx,
    record: Rec,
    event: Any,
    *,
    actor: str = "ledger",
    sets: Mapping[str, Any] | None = None,
    fence: Mapping[str, Any] | None = None,
    detail: Any = None,
) -> Rec | None:
    """Move ``record`` along its table by ``event``: the new state, ``sets`` (other
    columns), guarded by the record's state and ``fence`` (e.g. ``{"epoch": 3}``), and the
    audit row. Returns the moved record, or None if the stored row is no longer where
    ``record`` (and ``fence``) says; raises :class:`ConflictError` if the table has no such
    move."""
    machine, source, key = _state_of(record)
    moved: Rec | None = move_row(
        tx, machine, key, source, event, actor=actor, sets=sets, fence=fence, detail=detail
    )
    return moved


def move_row(
    tx: Tx,
    machine: Machine,
    key: str,
    source: Any,
    event: Any,
    *,
    actor: str = "ledger",
    sets: Mapping[str, Any] | None = None,
    fence: Mapping[str, Any] | None = None,
    detail: Any = None,
    read: bool = True,
) -> Any:
    """:func:`move` for a row named by its key and the state it is believed to be in (an
    :class:`OutboxMessage` carries no state: it exists only while its row is ``sending``).
    With ``read=False`` a move returns True instead of the record (nothing is parsed)."""
    target = machine.step(source, event, key)
    together = tx.dialect != "sqlite" and machine.trail is not None
    trail = (str(source), str(target), str(event), actor, dump(detail)) if together else None
    row = _update(tx, machine, key, source, target, sets, fence, read, trail)
    if row is False:
        return None
    if not together:
        _audit(tx, machine, key, source, target, event, actor, detail)
    return True if isinstance(row, bool) else machine.from_row(row, tx)


def move_where(
    tx: Tx,
    machine: Machine,
    event: Any,
    where: str,
    params: Sequence[Any],
    *,
    actor: str = "ledger",
    sets: Mapping[str, Any] | None = None,
    detail: Callable[[Any], Any] | None = None,
    detail_sql: str | None = None,
) -> list[Any]:
    """Move every row ``where`` picks that is in a source state of ``event``; audit each
    (``detail(record)`` gives its detail). An audited machine's event must have one source
    state, so each audit row knows where it came from.

    ``detail_sql`` is the same detail as SQL text over the moved row (exactly the canonical
    JSON ``detail`` gives): with it, PostgreSQL moves and audits in one statement."""
    sources = machine.sources(event)
    if not sources or (machine.trail is not None and len(sources) != 1):
        raise ConflictError(f"{machine.name} event {str(event)!r} cannot move a set of rows")
    target = machine.transitions[(sources[0], event)]
    assignments, values = _assign(sets)
    guard = "state = ?" if len(sources) == 1 else f"state IN ({', '.join('?' * len(sources))})"
    update = (
        f"UPDATE {machine.table} SET state = ?{machine.also}{assignments} "  # noqa: S608
        f"WHERE {where} AND {guard} RETURNING "
    )
    update_params = [str(target), *values, *params, *map(str, sources)]
    together = tx.dialect != "sqlite" and machine.trail is not None
    if together and (detail is None or detail_sql is not None):
        note_sql = detail_sql or "'null'"
        rows = tx.rows(
            f"WITH moved AS ({update}*), logged AS ({_EVENT_INSERT}"  # noqa: S608
            f"SELECT {machine.trail}, ?, ?, ?, ?, {note_sql}, {{now}} FROM moved) "
            f"SELECT {machine.columns} FROM moved",
            [*update_params, str(sources[0]), str(target), str(event), actor],
        )
        return [machine.from_row(row, tx) for row in rows]
    rows = tx.rows(f"{update}{machine.columns}", update_params)
    moved = []
    for row in rows:
        record = machine.from_row(row, tx)
        note = detail(record) if detail else None
        _audit(tx, machine, row[0], sources[0], target, event, actor, note)
        moved.append(record)
    return moved


def is_legal_trail(events: Iterable[AuditEvent]) -> bool:
    """True when the events (one effect's, in order) follow the table from ``proposed``."""
    current: str | None = None
    for event in events:
        if event.from_state != current:
            return False
        if current is None:
            if EFFECTS.start.get(event.event) != event.to_state:
                return False
        else:
            target = EFFECTS.transitions.get((S(current), event.event))
            if target is None or target.value != event.to_state:
                return False
        current = event.to_state
    return True
