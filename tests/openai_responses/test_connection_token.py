"""``previous_response_id`` of an unstored response: only on the live connection that holds it.

OpenAI keeps recent responses in a connection-local cache: with ``store=false`` an id
resolves on the socket that produced it and nowhere else (docs/contracts/
openai-responses-websocket.md §5). The stateful builder takes that only with a token of
that live connection naming its most recent response; every other case is the HTTP rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from callgate import ContinuationError, JSONError, ToolResult, UsageError
from callgate.openai_responses import (
    Connection,
    ConnectionToken,
    Turn,
    build_stateful_continuation,
)

from .ws import call_response, feed_frames, text_response

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def build(turn: Turn, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "previous_response_was_stored": False,
        "store": False,
        "model": "gpt-test",
        "instructions": None,
        "tools": TOOLS,
    }
    kwargs.update(overrides)
    results = [ToolResult(call_id=c.call_id, output="sunny") for c in turn.calls]
    return build_stateful_continuation(turn, results, **kwargs)


def live(rid: str = "resp_1") -> tuple[Connection, Turn]:
    conn = Connection()
    (turn,) = feed_frames(conn, call_response(rid).events)
    return conn, turn


def test_an_unstored_response_continues_on_its_live_connection() -> None:
    conn, turn = live()
    token = conn.token()
    assert isinstance(token, ConnectionToken)
    assert token.response_id == "resp_1"
    body = build(turn, connection=token)
    assert body["previous_response_id"] == "resp_1"
    assert body["store"] is False
    assert body["input"] == [
        {"type": "function_call_output", "call_id": "call_resp_1_0", "output": "sunny"}
    ]


def test_without_a_token_an_unstored_response_is_the_http_rule_refusal() -> None:
    _conn, turn = live()
    with pytest.raises(ContinuationError, match="stored prior response"):
        build(turn)


@pytest.mark.parametrize("fake", [True, "resp_1", object()])
def test_a_flag_or_anything_but_a_token_is_a_usage_error(fake: object) -> None:
    _conn, turn = live()
    with pytest.raises(UsageError, match="ConnectionToken"):
        build(turn, connection=fake)


def test_a_token_of_a_closed_connection_is_refused() -> None:
    conn, turn = live()
    token = conn.token()
    conn.close(1000)
    with pytest.raises(ContinuationError, match="closed"):
        build(turn, connection=token)
    with pytest.raises(ContinuationError, match="closed"):
        conn.token()


def test_a_token_of_a_failed_connection_is_refused() -> None:
    conn, turn = live()
    token = conn.token()
    with pytest.raises(JSONError):  # any protocol error fails the socket
        conn.feed_message("not json")
    with pytest.raises(ContinuationError, match="closed"):
        build(turn, connection=token)


def test_a_token_of_another_connection_is_refused_even_for_an_equal_turn() -> None:
    conn_a, _turn_a = live()
    _conn_b, turn_b = live()  # byte-identical frames: equal turns, ids and digests
    assert turn_b == _turn_a
    with pytest.raises(ContinuationError, match="not the token's response"):
        build(turn_b, connection=conn_a.token())


def test_a_token_is_stale_once_another_response_was_created() -> None:
    conn, turn = live()
    token = conn.token()
    feed_frames(conn, text_response("resp_2").events[:1])  # created, still running
    with pytest.raises(ContinuationError, match="no longer"):
        build(turn, connection=token)
    with pytest.raises(ContinuationError, match="has not ended"):
        conn.token()


def test_a_token_of_an_earlier_response_is_refused() -> None:
    conn, first = live()
    feed_frames(conn, call_response("resp_2").events)
    with pytest.raises(ContinuationError, match="not the token's response"):
        build(first, connection=conn.token())


def test_no_token_before_any_response_ended() -> None:
    with pytest.raises(ContinuationError, match="has not ended"):
        Connection().token()


def test_a_token_is_checked_even_when_the_prior_response_was_stored() -> None:
    conn, turn = live()
    token = conn.token()
    assert build(turn, previous_response_was_stored=True)["previous_response_id"] == "resp_1"
    conn.close(1000)
    with pytest.raises(ContinuationError, match="closed"):
        build(turn, previous_response_was_stored=True, connection=token)


def test_the_token_names_the_lane_for_the_continuation() -> None:
    conn = Connection()
    events = [dict(e, stream_id="lane.A") for e in call_response("resp_1").events]
    feed_frames(conn, events)
    assert conn.token().stream_id == "lane.A"
