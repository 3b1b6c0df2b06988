"""The ledger's three tables against a real SQLite ledger: every (state, event) pair.

For each machine (effects, requests, outbox rows) a record is put in a state and an event
is tried through ``move`` (``move_row`` for an outbox row, whose message carries no
state): a pair the table holds lands (the stored state is the table's target, one audit
row says so, an effect's version goes up by one); a pair it lacks raises
:class:`ConflictError` and leaves the row and the audit trail as they were; a record that
believes it is in another state than the stored one changes nothing (compare-and-set).
One exhaustive pass per table, then a Hypothesis state machine per table that chains
moves, jumps and stale writes.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from callgate.ledger import (
    REQUEST_IN_DOUBT,
    REQUEST_TRANSITIONS,
    ConflictError,
    EffectClass,
    EffectEvent,
    EffectState,
    Ledger,
    OutboxEvent,
    OutboxState,
    RequestEvent,
    RequestState,
    Tool,
    open_ledger,
)
from callgate.ledger._transitions import EFFECTS, OUTBOX, REQUESTS, Machine, move, move_row

from .ledger_harness import record

MACHINES: dict[str, tuple[Machine, type[Any], type[Any]]] = {
    "effect": (EFFECTS, EffectState, EffectEvent),
    "request": (REQUESTS, RequestState, RequestEvent),
    "outbox": (OUTBOX, OutboxState, OutboxEvent),
}


def _book(args: Any, ctx: Any) -> Any:
    return ctx.tx.outbox("mail", {"n": args["n"]})


def _open(directory: Path) -> Ledger:
    return open_ledger(
        f"sqlite:///{directory / 'ledger.db'}",
        tools=[Tool("book", _book, effect=EffectClass.LOCAL_TX)],
    )


def _new_record(ledger: Ledger, name: str, n: int) -> str:
    """A real record of the machine, made through the ledger's public API; its key."""
    if name == "request":
        return ledger.record_request(f"r{n}", provider="test", request_digest="d").request_id
    (effect,) = record(ledger, f"r{n}", [(f"c{n}", "book", {"n": n})])
    if name == "effect":
        return effect.effect_id
    ledger.execute(effect.effect_id, worker_id="w")  # the local_tx tool writes one outbox row
    with ledger.reading() as tx:
        row = tx.one("SELECT outbox_id FROM ledger_outbox WHERE effect_id = ?", (effect.effect_id,))
    assert row is not None
    return str(row[0])


def _snapshot(tx: Any, machine: Machine, key: str) -> tuple[Any, ...]:
    """The whole stored row and the size of the audit table."""
    row = tx.one(f"SELECT * FROM {machine.table} WHERE {machine.key} = ?", (key,))
    events = tx.one("SELECT COUNT(*) FROM ledger_events")
    assert row is not None
    assert events is not None
    return tuple(row), int(events[0])


def _place(tx: Any, machine: Machine, key: str, state: Any) -> None:
    """Put the record in ``state`` (a test's jump: the ledger never writes a state so)."""
    tx.run(
        f"UPDATE {machine.table} SET state = ? WHERE {machine.key} = ?",
        (state.value, key),
    )


def _move(tx: Any, machine: Machine, key: str, believed: Any, event: Any) -> Any:
    """``move`` on the record as stored, told it is in ``believed`` (its real state unless
    the caller wants a stale write); ``move_row`` for an outbox row."""
    if machine is OUTBOX:
        return move_row(tx, machine, key, believed, event, actor="test")
    where = f"{machine.key} = ?"
    row = tx.one(f"SELECT {machine.columns} FROM {machine.table} WHERE {where}", (key,))
    assert row is not None
    current = machine.from_row(row)
    believing = type(current)(**{**_fields(current), "state": believed})
    return move(tx, believing, event, actor="test")


def _fields(record: Any) -> dict[str, Any]:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


def _try(tx: Any, machine: Machine, key: str, state: Any, event: Any) -> Any:
    """Try ``event`` on the record stored in ``state``; check what the table says happened.
    Returns the state the record is in afterwards."""
    before = _snapshot(tx, machine, key)
    target = machine.transitions.get((state, event))
    if target is None:
        with pytest.raises(ConflictError, match="no transition"):
            _move(tx, machine, key, state, event)
        assert _snapshot(tx, machine, key) == before
        return state
    moved = _move(tx, machine, key, state, event)
    assert moved is not None
    after = _snapshot(tx, machine, key)
    stored = tx.one(f"SELECT state FROM {machine.table} WHERE {machine.key} = ?", (key,))
    assert stored == (target.value,)
    if machine is OUTBOX:
        assert after[1] == before[1]  # outbox rows keep no audit trail
    else:
        assert moved.state is target
        assert after[1] == before[1] + 1
        column = "effect_id" if machine is EFFECTS else "request_id"
        last = tx.one(
            f"SELECT from_state, to_state, event, actor FROM ledger_events WHERE {column} = ? "
            "ORDER BY seq DESC LIMIT 1",
            (key,),
        )
        assert last == (state.value, target.value, event.value, "test")
    if machine is EFFECTS:
        assert moved.version == before[0][17] + 1  # ledger_effects.version
    return target


class _RollbackError(Exception):
    pass


@contextlib.contextmanager
def _rolled_back(ledger: Ledger) -> Iterator[Any]:
    """A write transaction that is always rolled back (nothing to fsync per pair)."""
    with contextlib.suppress(_RollbackError), ledger.transaction() as tx:
        yield tx
        raise _RollbackError


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_state_event_pair_lands_or_is_refused_unchanged(name: str, tmp_path: Path) -> None:
    machine, states, events = MACHINES[name]
    with _open(tmp_path) as ledger:
        key = _new_record(ledger, name, 0)
        tried = 0
        for state, event in itertools.product(states, events):
            with _rolled_back(ledger) as tx:
                _place(tx, machine, key, state)
                _try(tx, machine, key, state, event)
                tried += 1
    assert tried == len(states) * len(events)


@pytest.mark.parametrize("name", ["effect", "request"])
def test_a_record_that_believes_another_state_changes_nothing(name: str, tmp_path: Path) -> None:
    machine, states, _ = MACHINES[name]
    with _open(tmp_path) as ledger:
        key = _new_record(ledger, name, 0)
        for (believed, event), stored in itertools.product(machine.transitions, states):
            if stored == believed:
                continue
            with _rolled_back(ledger) as tx:
                _place(tx, machine, key, stored)
                before = _snapshot(tx, machine, key)
                assert _move(tx, machine, key, believed, event) is None
                assert _snapshot(tx, machine, key) == before


def test_what_the_request_table_says_the_loop_needs() -> None:
    assert {RequestState.SENT, RequestState.IDENTIFIED, RequestState.UNKNOWN} == REQUEST_IN_DOUBT
    can_fail = {s for (s, e) in REQUEST_TRANSITIONS if e is RequestEvent.FAIL}
    assert can_fail == {*REQUEST_IN_DOUBT, RequestState.PREPARED}
    every = set(EFFECTS.transitions.values()) | set(EFFECTS.start.values())
    assert every == set(EffectState)  # every effect state is reachable in the table


class TableMachine(RuleBasedStateMachine):
    """Random chains of moves on a few real records of one table, with jumps (a record
    put in any state) and stale writes; the stored state always matches the model."""

    name = "effect"

    def __init__(self) -> None:
        super().__init__()
        self.machine, self.states, self.events = MACHINES[self.name]
        self.dir = Path(tempfile.mkdtemp())
        self.ledger = _open(self.dir)
        self.keys = [_new_record(self.ledger, self.name, n) for n in range(2)]
        with self.ledger.reading() as tx:
            self.model = {k: self._stored(tx, k) for k in self.keys}

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _stored(self, tx: Any, key: str) -> Any:
        row = tx.one(
            f"SELECT state FROM {self.machine.table} WHERE {self.machine.key} = ?",
            (key,),
        )
        return self.states(row[0])

    @rule(which=st.integers(0, 1), data=st.data())
    def try_event(self, which: int, data: st.DataObject) -> None:
        key = self.keys[which]
        event = data.draw(st.sampled_from(list(self.events)))
        with self.ledger.transaction() as tx:
            self.model[key] = _try(tx, self.machine, key, self.model[key], event)

    @rule(which=st.integers(0, 1), data=st.data())
    def jump(self, which: int, data: st.DataObject) -> None:
        key = self.keys[which]
        state = data.draw(st.sampled_from(list(self.states)))
        with self.ledger.transaction() as tx:
            _place(tx, self.machine, key, state)
        self.model[key] = state

    @rule(which=st.integers(0, 1), data=st.data())
    def stale_write(self, which: int, data: st.DataObject) -> None:
        key = self.keys[which]
        others = [pair for pair in self.machine.transitions if pair[0] != self.model[key]]
        believed, event = data.draw(st.sampled_from(others))
        with self.ledger.transaction() as tx:
            before = _snapshot(tx, self.machine, key)
            assert _move(tx, self.machine, key, believed, event) is None
            assert _snapshot(tx, self.machine, key) == before

    @invariant()
    def stored_states_match_the_model(self) -> None:
        with self.ledger.reading() as tx:
            assert {k: self._stored(tx, k) for k in self.keys} == self.model


class RequestTableMachine(TableMachine):
    name = "request"


class OutboxTableMachine(TableMachine):
    name = "outbox"


for _machine in (TableMachine, RequestTableMachine, OutboxTableMachine):
    _machine.TestCase.settings = settings(
        max_examples=15,
        stateful_step_count=20,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )

test_effect_table_state_machine = TableMachine.TestCase
test_request_table_state_machine = RequestTableMachine.TestCase
test_outbox_table_state_machine = OutboxTableMachine.TestCase
