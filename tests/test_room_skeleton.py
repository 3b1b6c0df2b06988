"""The shared skeleton of the protocol rooms, checked once for all of them: a reader who
knows one room's table, boundary and Turn knows how the others work.

- table shape: ``_state.TRANSITIONS[(State, wire type)] -> (handler name, State)``, each
  handler name a method of the room's ``_handlers.Handlers`` that returns nothing (the
  table alone names the next state);
- ``FAILED``: the state of a failed parser, with no row; the rows whose handler raises
  lead to it;
- ``DONE``: the end state, reached from ``START`` through the table, and where a whole
  stream leaves the parser;
- the boundary: every ``Parser`` is a :class:`callgate._feed.Boundary` (one input-mode
  check, event count, event copy and failure path) and its rows are bound by it;
- the Turn projection: ``turn.id`` (beside the room's native id field) and ``turn.text``.
"""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType
from typing import Any

import pytest

from callgate._feed import Boundary
from callgate._protocols import PROTOCOLS

from .test_room_contract import CASES, Case

#: The room's native name for the turn's id, which ``turn.id`` projects.
NATIVE_ID = {
    "openai_responses": "response_id",
    "anthropic_messages": "message_id",
    "gemini_interactions": "interaction_id",
    "gemini_generate_content": "response_id",
    "openai_chat_completions": "completion_id",
}


def test_every_registered_room_is_checked() -> None:
    assert set(PROTOCOLS) == set(NATIVE_ID) == set(CASES)


@pytest.fixture(params=sorted(NATIVE_ID))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


def _private(case: Case, name: str) -> ModuleType:
    return importlib.import_module(f"callgate.{case.protocol}.{name}")


def _table(case: Case) -> Any:
    return _private(case, "_state").TRANSITIONS


def test_the_table_maps_state_and_wire_type_to_a_handler_and_a_state(case: Case) -> None:
    states = case.module.State
    handlers = _private(case, "_handlers").Handlers
    table = _table(case)
    assert table
    for (state, wire_type), (name, nxt) in table.items():
        assert type(state) is states
        assert type(nxt) is states
        assert type(wire_type) is str
        assert wire_type
        assert name.startswith("_on_"), name
        method = getattr(handlers, name)
        # Handlers never choose the next state: none of them returns anything.
        assert inspect.signature(method).return_annotation == "None", name


def test_failed_has_no_row_and_the_rows_that_raise_lead_to_it(case: Case) -> None:
    states = case.module.State
    table = _table(case)
    assert {"START", "DONE", "FAILED"} <= set(states.__members__)
    assert not [key for key in table if key[0] is states.FAILED]
    into_failed = {name for name, nxt in table.values() if nxt is states.FAILED}
    assert into_failed, "every room has rows that fail the parser"
    # A handler's rows all lead to FAILED or none does: the row, not the event, decides.
    for name in into_failed:
        assert all(nxt is states.FAILED for n, nxt in table.values() if n == name), name


def test_done_is_reached_from_start_through_the_table(case: Case) -> None:
    states = case.module.State
    table = _table(case)
    reached, frontier = {states.START}, [states.START]
    while frontier:
        state = frontier.pop()
        for (source, _type), (_name, nxt) in table.items():
            if source is state and nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    assert states.DONE in reached


def test_a_whole_stream_leaves_the_parser_in_done(case: Case) -> None:
    parser = case.module.Parser()
    for event in case.events():  # the wire events, without a [DONE] sentinel
        parser.feed_event(event)
    assert parser.state is case.module.State.DONE
    assert parser.finish().calls
    assert parser.state is case.module.State.DONE


def test_the_parser_is_a_kernel_boundary_and_binds_its_rows_through_it(case: Case) -> None:
    parser_type, states = case.module.Parser, case.module.State
    handlers = _private(case, "_handlers").Handlers
    assert issubclass(parser_type, Boundary)
    for name in ("_bind", "_check_usable", "_count_event", "_fail", "state"):
        assert name not in vars(parser_type), f"{case.protocol} redefines {name}"
    parser = parser_type()
    table = _table(case)
    rows = parser._rows
    assert set(rows) == set(states)
    assert parser._row is rows[states.START]
    bound = 0
    for state, row in rows.items():
        for wire_type, (handler, nxt, nxt_row, *_extras) in row.items():
            name, target = table[state, wire_type]
            assert handler.__func__ is getattr(handlers, name)
            assert nxt is target
            assert nxt_row is rows[nxt]
            bound += 1
    assert bound > len(table) // 2  # a baseline's rows: most of the table, if not all


def test_the_turn_projects_its_id_and_text_alike(case: Case) -> None:
    parser = case.module.Parser()
    parser.feed_bytes(case.stream_bytes())
    turn = parser.finish()
    native = getattr(turn, NATIVE_ID[case.protocol])
    assert turn.id == native
    assert type(turn.id) is str
    assert turn.id
    assert type(turn.text) is str
    body = case.module.parse_response(case.body_obj())
    assert body.id == getattr(body, NATIVE_ID[case.protocol])
    assert type(body.text) is str
