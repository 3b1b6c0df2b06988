"""Golden fixtures: whole, as events, through the SDK (byte by byte and at random splits:
tests/test_golden_chunking.py, for every room)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from callgate import CallgateError, ProviderError, SequenceError
from callgate.contracts import Fixture, load_fixtures
from callgate.openai_responses import Parser, Turn, parse_response, parse_stream

FIXTURES = load_fixtures(Path(__file__).resolve().parent.parent / "fixtures" / "openai_responses")
BY_NAME = {f.name: f for f in FIXTURES}
COMPLETED = [f for f in FIXTURES if (f.expected or {}).get("outcome") == "completed"]
FAILING = [f for f in FIXTURES if (f.expected or {}).get("outcome") != "completed"]


def outcome(fixture: Fixture, chunks: list[bytes]) -> Turn | CallgateError:
    parser = Parser(baseline=fixture.contract_revision)
    try:
        for chunk in chunks:
            parser.feed_bytes(chunk)
        return parser.finish()
    except CallgateError as exc:
        return exc


def same(a: Turn | CallgateError, b: Turn | CallgateError) -> bool:
    if isinstance(a, Turn) or isinstance(b, Turn):
        return a == b
    return type(a) is type(b) and a.message == b.message and a.turn == b.turn


def test_fixture_set_covers_both_outcomes_and_baselines() -> None:
    assert len(COMPLETED) >= 5
    assert len(FAILING) >= 2
    assert {f.contract_revision for f in FIXTURES} == {"2026-07-21", "2026-11"}


@pytest.mark.parametrize("fixture", COMPLETED, ids=lambda f: f.name)
def test_completed_fixture_gives_expected_turn(fixture: Fixture) -> None:
    expected = fixture.expected
    assert expected is not None
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert turn.status == "completed"
    assert turn.response_id == expected["response_id"]
    assert [item["type"] for item in turn.items] == expected["item_types"]
    assert [
        {"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in turn.calls
    ] == expected["calls"]
    assert turn.text == expected["text"]
    assert turn.usage is not None
    assert turn.usage["total_tokens"] == 30
    for call in turn.calls:
        assert turn.items[call.output_index] is call.item
        assert call.call_id == call.item["call_id"] != call.item_id


@pytest.mark.parametrize("fixture", FAILING, ids=lambda f: f.name)
def test_failing_fixture_releases_nothing(fixture: Fixture) -> None:
    expected = fixture.expected
    assert expected is not None
    with pytest.raises(ProviderError) as info:
        parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert info.value.error_code == expected["error_code"]
    assert info.value.turn is not None
    assert info.value.turn.calls == ()
    assert len(info.value.turn.items) == expected["done_items"]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_fixture_as_decoded_events_equals_bytes(fixture: Fixture) -> None:
    parser = Parser(baseline=fixture.contract_revision)
    result: Turn | CallgateError
    try:
        for _, event in fixture.wire_events():
            assert isinstance(event, dict)
            parser.feed_event(event)
        result = parser.finish()
    except CallgateError as exc:
        result = exc
    assert same(result, outcome(fixture, [fixture.data]))


@pytest.mark.parametrize("fixture", COMPLETED, ids=lambda f: f.name)
def test_non_streaming_body_gives_the_same_turn(fixture: Fixture) -> None:
    streamed = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert streamed.response is not None
    body = parse_response(streamed.response, baseline=fixture.contract_revision)
    assert body.digest == streamed.digest
    assert body.calls == streamed.calls


# -- the official SDK decodes the same bytes; its events give the same turn ---------------


def sdk_client(data: bytes) -> openai.OpenAI:
    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/responses"
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    return openai.OpenAI(
        api_key="test-key",
        base_url="http://mock.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        _strict_response_validation=True,
    )


def sdk_events(data: bytes) -> list[dict[str, Any]]:
    client = sdk_client(data)
    with client.responses.create(model="gpt-test", input="hi", stream=True) as stream:
        return [event.to_dict() for event in stream]


SDK_CASES = [f for f in FIXTURES if f.contract_revision == "2026-11" and f in COMPLETED]


@pytest.mark.parametrize("fixture", SDK_CASES, ids=lambda f: f.name)
def test_sdk_events_fed_as_dicts_give_the_same_turn_as_bytes(fixture: Fixture) -> None:
    events = sdk_events(fixture.data)
    assert len(events) == len(fixture.wire_events())
    parser = Parser(baseline=fixture.contract_revision)
    for event in events:
        parser.feed_event(event)
    assert parser.finish() == parse_stream(fixture.data, baseline=fixture.contract_revision)


def test_sdk_helper_accepts_a_stream_callgate_refuses() -> None:
    # Why a strict gate is needed: the SDK stream helper returns a final response whose
    # call arguments contradict the streamed deltas; callgate refuses the same bytes.
    raw = BY_NAME["sequence_gaps_resumed"].data.replace(b'"delta":":7}"', b'"delta":":8}"')
    with sdk_client(raw).responses.stream(model="gpt-test", input="hi") as stream:
        final = stream.get_final_response()
    assert final.output[0].type == "function_call"
    assert final.output[0].arguments == '{"id":7}'
    with pytest.raises(SequenceError):
        parse_stream(raw)


def test_fixture_files_match_their_generator() -> None:
    from .make_fixtures import CASES

    assert set(CASES) == set(BY_NAME)
    for name, make in CASES.items():
        data, metadata = make()
        assert BY_NAME[name].data == data, name
        assert BY_NAME[name].expected == metadata["expected"], name
