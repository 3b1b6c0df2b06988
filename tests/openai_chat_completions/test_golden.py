"""Golden fixtures: the committed files are the generator's; every stream gives its expected
turn whole, one byte at a time, at random split points and as decoded events."""

from __future__ import annotations

import random
from typing import Any

import pytest

from callgate import CallgateError
from callgate.contracts import Fixture, load_fixtures
from callgate.openai_chat_completions import Parser, parse_response, parse_stream

from .make_fixtures import FILES
from .wire import FIXTURES

ALL = load_fixtures(FIXTURES)
STREAMS = [f for f in ALL if f.layer == "wire-sse"]
BODIES = [f for f in ALL if f.layer == "json-body"]


def test_committed_fixtures_are_the_generators() -> None:
    on_disk = {p.name: p.read_bytes() for p in FIXTURES.iterdir()}
    assert on_disk == FILES


def _options(fixture: Fixture) -> dict[str, Any]:
    return {
        "baseline": fixture.contract_revision,
        "tool_choice": fixture.expected.get("tool_choice"),
    }


def _outcome(run: Any) -> Any:
    try:
        turn = run()
    except CallgateError as exc:
        return ("refused", type(exc).__name__, exc.message)
    return ("turn", turn.digest)


def _check(fixture: Fixture, turn: Any) -> None:
    expected = fixture.expected
    assert [[c.call_id, c.name, c.arguments] for c in turn.calls] == expected["calls"]
    assert turn.finish_reason == expected["finish_reason"]
    assert turn.text == expected["text"]
    assert (turn.usage is not None) == expected["usage"]
    assert turn.refusal == expected.get("refusal")
    if "reasoning_content" in expected:
        assert turn.message_extra["reasoning_content"] == expected["reasoning_content"]
    assert turn.id == turn.completion_id
    assert turn.baseline == fixture.contract_revision


@pytest.mark.parametrize("fixture", STREAMS, ids=lambda f: f.name)
def test_golden_stream_meets_its_expectation(fixture: Fixture) -> None:
    expected = fixture.expected
    if "refused" in expected:
        with pytest.raises(CallgateError) as caught:
            parse_stream(fixture.data, **_options(fixture))
        assert type(caught.value).__name__ == expected["refused"]
        assert expected["because"] in caught.value.message
        assert caught.value.turn is not None
        assert caught.value.turn.calls == ()
        return
    _check(fixture, parse_stream(fixture.data, **_options(fixture)))


@pytest.mark.parametrize("fixture", STREAMS, ids=lambda f: f.name)
def test_golden_stream_gives_the_same_outcome_wherever_it_is_cut(fixture: Fixture) -> None:
    data, options = fixture.data, _options(fixture)
    whole = _outcome(lambda: parse_stream(data, **options))
    assert (
        _outcome(lambda: parse_stream([data[i : i + 1] for i in range(len(data))], **options))
        == whole
    )
    rng = random.Random(fixture.name)
    for _ in range(8):
        cuts = sorted(rng.sample(range(1, len(data)), k=min(10, len(data) - 1)))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert _outcome(lambda pieces=pieces: parse_stream(pieces, **options)) == whole, cuts


@pytest.mark.parametrize("fixture", STREAMS, ids=lambda f: f.name)
def test_golden_stream_as_events_gives_the_same_calls(fixture: Fixture) -> None:
    def run() -> Any:
        parser = Parser(**_options(fixture))
        for _name, obj in fixture.wire_events():
            parser.feed_event(obj)
        return parser.finish()

    by_events, by_bytes = (
        _outcome(run),
        _outcome(lambda: parse_stream(fixture.data, **_options(fixture))),
    )
    assert by_events[0] == by_bytes[0]
    if by_events[0] == "turn":
        assert run().calls == parse_stream(fixture.data, **_options(fixture)).calls


def test_forced_function_stop_is_refused_without_the_tool_choice() -> None:
    fixture = next(f for f in STREAMS if f.name == "forced_function_stop")
    with pytest.raises(CallgateError, match="finish_reason 'stop'"):
        parse_stream(fixture.data)
    with pytest.raises(CallgateError, match="finish_reason 'stop'"):
        parse_stream(fixture.data, tool_choice={"type": "function", "function": {"name": "other"}})
    for choice in ("auto", "required", None):
        with pytest.raises(CallgateError):
            parse_stream(fixture.data, tool_choice=choice)


@pytest.mark.parametrize("fixture", BODIES, ids=lambda f: f.name)
def test_golden_body_meets_its_expectation(fixture: Fixture) -> None:
    turn = parse_response(fixture.body(), baseline=fixture.contract_revision)
    _check(fixture, turn)
    assert turn.origin == "body"
    assert parse_response(fixture.data).digest == turn.digest
