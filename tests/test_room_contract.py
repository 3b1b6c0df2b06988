"""The one parser contract, tested once for every protocol room (see docs/architecture.md).

Each room gets the same checks from the same code: a failed parser re-raises that same
error object; ``finish()`` after success returns the same Turn; one input mode per parser;
``feed_event`` of a non-mapping and ``feed_bytes`` of a non-bytes are usage errors that leave
the parser usable; a non-JSON value inside an event is a ``JSONError``; stray exceptions
never escape; ``parse_response`` takes a mapping, ``bytes`` or ``str``.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from callgate import CallgateError, JSONError, Limits, ProtocolError, UsageError
from callgate._protocols import PROTOCOLS, room
from callgate.contracts import load_fixture

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True)
class Case:
    protocol: str
    stream: str  # a wire-sse fixture whose turn releases calls
    body: str | None  # a json-body fixture, or None: the stream's terminal carries the body

    @property
    def module(self) -> ModuleType:
        return room(self.protocol)

    def stream_bytes(self) -> bytes:
        return load_fixture(FIXTURES / self.protocol / f"{self.stream}.sse").data

    def events(self) -> list[dict[str, Any]]:
        fixture = load_fixture(FIXTURES / self.protocol / f"{self.stream}.sse")
        return [obj for _name, obj in fixture.wire_events() if isinstance(obj, dict)]

    def body_obj(self) -> dict[str, Any]:
        if self.body is not None:
            return load_fixture(FIXTURES / self.protocol / f"{self.body}.sse").body()
        for event in reversed(self.events()):
            if isinstance(event.get("response"), dict):
                return dict(event["response"])
        raise LookupError(f"no body for {self.protocol}")


CASES = {
    "openai_responses": Case("openai_responses", "parallel_calls_reasoning", None),
    "anthropic_messages": Case("anthropic_messages", "tool_use_single", "body_tool_use"),
    "gemini_interactions": Case(
        "gemini_interactions", "weather_call_with_thought", "create_body_two_calls"
    ),
    "gemini_generate_content": Case(
        "gemini_generate_content", "parallel_calls_one_chunk", "body_two_calls"
    ),
    "openai_chat_completions": Case(
        "openai_chat_completions", "parallel_calls_interleaved", "body_two_calls"
    ),
}


def test_every_registered_room_has_a_contract_case() -> None:
    assert set(PROTOCOLS) == set(CASES)


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


def _released(case: Case) -> Any:
    parser = case.module.Parser()
    parser.feed_bytes(case.stream_bytes())
    turn = parser.finish()
    assert turn.calls, "the contract case must release calls"
    return parser, turn


def test_the_case_streams_release_the_same_calls_in_both_modes(case: Case) -> None:
    _parser, by_bytes = _released(case)
    parser = case.module.Parser()
    for event in case.events():
        parser.feed_event(event)
    by_events = parser.finish()
    assert [(c.call_id, c.name, c.arguments) for c in by_bytes.calls] == [
        (c.call_id, c.name, c.arguments) for c in by_events.calls
    ]


def test_after_a_protocol_error_every_call_reraises_that_same_error(case: Case) -> None:
    parser = case.module.Parser()
    with pytest.raises(ProtocolError) as first:
        parser.feed_bytes(b"data: {not json}\n\n")
    error = first.value
    assert parser.state is case.module.State.FAILED
    for again in (
        lambda: parser.feed_bytes(case.stream_bytes()),
        lambda: parser.feed_event(case.events()[0]),
        parser.finish,
    ):
        with pytest.raises(ProtocolError) as later:
            again()
        assert later.value is error


def test_failed_row_of_the_table_is_empty(case: Case) -> None:
    table = case.module._state.TRANSITIONS
    failed = case.module.State.FAILED
    assert all(state is not failed for state, _kind in table)
    for (state, kind), (handler, nxt) in table.items():
        assert isinstance(state, case.module.State)
        assert isinstance(kind, str)
        assert isinstance(handler, str)
        assert isinstance(nxt, case.module.State)


def test_finish_after_success_returns_the_same_turn(case: Case) -> None:
    parser, turn = _released(case)
    assert parser.finish() is turn
    with pytest.raises(UsageError):
        parser.feed_bytes(b"\n")
    with pytest.raises(UsageError):
        parser.feed_event(case.events()[0])


def test_mixing_bytes_then_events_is_a_usage_error_and_the_parser_stays_usable(
    case: Case,
) -> None:
    data = case.stream_bytes()
    cut = data.index(b"\n\n") + 2
    parser = case.module.Parser()
    parser.feed_bytes(data[:cut])
    with pytest.raises(UsageError):
        parser.feed_event(case.events()[1])
    parser.feed_bytes(data[cut:])
    assert parser.finish().calls


def test_mixing_events_then_bytes_is_a_usage_error_and_the_parser_stays_usable(
    case: Case,
) -> None:
    events = case.events()
    parser = case.module.Parser()
    parser.feed_event(events[0])
    with pytest.raises(UsageError):
        parser.feed_bytes(case.stream_bytes())
    for event in events[1:]:
        parser.feed_event(event)
    assert parser.finish().calls


@pytest.mark.parametrize("bad", [["a", "list"], "text", 3, None, b"bytes"])
def test_feed_event_of_a_non_mapping_is_a_usage_error_and_leaves_the_parser_usable(
    case: Case, bad: Any
) -> None:
    parser = case.module.Parser()
    with pytest.raises(UsageError):
        parser.feed_event(bad)
    for event in case.events():
        parser.feed_event(event)
    assert parser.finish().calls


@pytest.mark.parametrize("bad", ["text", 3, None, ["a"]])
def test_feed_bytes_of_a_non_bytes_is_a_usage_error_and_leaves_the_parser_usable(
    case: Case, bad: Any
) -> None:
    parser = case.module.Parser()
    with pytest.raises(UsageError):
        parser.feed_bytes(bad)
    parser.feed_bytes(case.stream_bytes())
    assert parser.finish().calls


@pytest.mark.parametrize(
    "value", [{1, 2}, datetime.datetime(2026, 1, 1), float("nan"), object(), b"raw"]
)
def test_a_non_json_value_inside_an_event_is_a_json_error(case: Case, value: Any) -> None:
    event = dict(case.events()[0])
    event["extra"] = {"nested": value}
    parser = case.module.Parser()
    with pytest.raises(JSONError) as caught:
        parser.feed_event(event)
    assert parser.state is case.module.State.FAILED
    with pytest.raises(JSONError) as again:
        parser.finish()
    assert again.value is caught.value


def test_stray_exceptions_become_callgate_errors_at_the_boundary(case: Case) -> None:
    # Every top-level field of every event set to each wrong type: only CallgateError escapes.
    wrong: list[Any] = [[], {}, "x", 10**50, None, True, 1.5]
    for index, event in enumerate(case.events()):
        for key in event:
            for value in wrong:
                parser = case.module.Parser()
                events = case.events()
                events[index] = {**event, key: value}
                try:
                    for e in events:
                        parser.feed_event(e)
                    parser.finish()
                except CallgateError:
                    pass


def test_parse_response_accepts_a_mapping_bytes_and_str(case: Case) -> None:
    body = case.body_obj()
    text = json.dumps(body)
    turns = [
        case.module.parse_response(body),
        case.module.parse_response(text.encode()),
        case.module.parse_response(text),
    ]
    assert len({t.digest for t in turns}) == 1


@pytest.mark.parametrize("bad", [3, None, ["x"]])
def test_parse_response_of_another_type_is_a_usage_error(case: Case, bad: Any) -> None:
    with pytest.raises(UsageError):
        case.module.parse_response(bad)


def test_parse_response_of_invalid_json_text_is_a_json_error(case: Case) -> None:
    with pytest.raises(JSONError):
        case.module.parse_response('{"id": ')
    with pytest.raises(JSONError):
        case.module.parse_response(b'{"a": 1, "a": 2}')


@pytest.mark.parametrize(
    ("limits", "baseline"), [({}, None), (Limits(), "1999-01-01"), (Limits(), ["2026-11"])]
)
def test_limits_and_baseline_are_checked_alike_everywhere(
    case: Case, limits: Any, baseline: Any
) -> None:
    kwargs: dict[str, Any] = {"limits": limits if limits != {} else {}}
    if baseline is not None:
        kwargs["baseline"] = baseline
    with pytest.raises(UsageError, match=r"limits must be|baseline must be one of"):
        case.module.Parser(**kwargs)
    with pytest.raises(UsageError, match=r"limits must be|baseline must be one of"):
        case.module.parse_response(case.body_obj(), **kwargs)
    with pytest.raises(UsageError, match=r"limits must be|baseline must be one of"):
        case.module.parse_stream(case.stream_bytes(), **kwargs)


def test_turn_has_the_shared_projection(case: Case) -> None:
    _parser, turn = _released(case)
    assert isinstance(turn.text, str)
    assert isinstance(turn.digest, str)
    assert turn.baseline in ("2026-07-21", "2026-11")
    for call in turn.calls:
        assert isinstance(call.call_id, str)
        assert isinstance(call.name, str)
        assert isinstance(call.arguments, dict)


def test_turn_and_call_types_are_frozen_slotted_and_keyword_only(case: Case) -> None:
    import dataclasses

    _parser, turn = _released(case)
    for obj in (turn, turn.calls[0]):
        cls = type(obj)
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, cls
        assert hasattr(cls, "__slots__"), cls
        assert all(f.kw_only for f in dataclasses.fields(cls)), cls
        # Assign a declared field: on CPython 3.11 a frozen slotted dataclass raises
        # TypeError (not FrozenInstanceError) for a name it does not declare.
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, dataclasses.fields(cls)[0].name, "x")
