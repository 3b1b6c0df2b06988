"""Golden fixtures: each stream gives the turn of the fixture's `expected` block (byte by
byte and at random split points: tests/test_golden_chunking.py, for every room)."""

from __future__ import annotations

import pytest

from callgate.anthropic_messages import Parser, parse_response, parse_stream
from callgate.contracts import Fixture

from .wire import all_fixtures, check_expected, wire_fixtures

WIRE = wire_fixtures()
IDS = [f.name for f in WIRE]


def test_fixture_directory_has_every_required_golden_case() -> None:
    names = {f.name for f in all_fixtures()}
    assert {
        "text_end_turn",
        "tool_use_single",
        "parallel_tools",
        "zero_arg_tools",
        "thinking_tool",
        "server_client_mix",
        "eager_invalid_json",
        "max_tokens_siblings",
        "pause_turn",
        "refusal",
        "unknown_stop_reason",
        "crlf_multiline",
        "baseline_2026_07_21_tool_use",
        "body_tool_use",
        "programmatic_first",
        "programmatic_followup",
    } <= names


@pytest.mark.parametrize("fixture", WIRE, ids=IDS)
def test_golden_whole(fixture: Fixture) -> None:
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    expected = fixture.expected
    assert expected is not None
    check_expected(turn, expected)
    assert turn.baseline == fixture.contract_revision


@pytest.mark.parametrize("fixture", WIRE, ids=IDS)
def test_golden_stream_equals_its_body_when_every_input_parsed(fixture: Fixture) -> None:
    """A non-streaming body of the same Message gives the same turn (digest included),
    except where streamed input failed to parse (a body cannot carry invalid input)."""
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    body_turn = parse_response(turn.to_message(), baseline=fixture.contract_revision)
    if any(r.partial_input and r.reason != "max_tokens" for r in turn.recovery_calls):
        assert body_turn.digest != turn.digest
    else:
        assert body_turn.content == turn.content
        assert body_turn.calls == turn.calls
        assert body_turn.digest == turn.digest


def test_json_body_fixture() -> None:
    (fixture,) = [f for f in all_fixtures() if f.layer == "json-body"]
    turn = parse_response(fixture.body())
    expected = fixture.expected
    assert expected is not None
    check_expected(turn, expected)
    assert parse_response(fixture.data).digest == turn.digest


def test_thinking_fixture_is_byte_exact() -> None:
    (fixture,) = [f for f in WIRE if f.name == "thinking_tool"]
    turn = parse_stream(fixture.data)
    expected = fixture.expected
    assert expected is not None
    thinking, redacted = turn.content[0], turn.content[1]
    assert thinking == {
        "type": "thinking",
        "thinking": "Need the \u00fcber weather \U0001f326.",
        "signature": expected["signature"],
    }
    assert redacted == {"type": "redacted_thinking", "data": "RVhBTVBMRS1vcGFxdWUtYmxvYg=="}


def test_large_stream_parses_the_same_in_slices_and_whole() -> None:
    from .wire import sse, tool_turn_events

    fragments = ['{"q":"', *("x" * 20_000), '"}']
    data = sse(*tool_turn_events(("big", "f", fragments), ("small", "g", ["{}"])))
    assert len(data) > 3 * (1 << 16)
    parser = Parser()
    parser.feed_bytes(data)
    whole = parser.finish()
    sliced = parse_stream(data)
    assert sliced.digest == whole.digest
    assert sliced.calls[0].arguments == {"q": "x" * 20_000}
