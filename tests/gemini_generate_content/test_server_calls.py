"""Function calls the server executes itself (generateContent with ``mcpServers``).

With a remote MCP server declared as a tool, Gemini runs that server's tools itself and the
model turn carries the ``functionCall`` *and* its ``functionResponse`` (the shape the brief
of issue 24 describes; docs/deviations.md says what is and is not pinned). Such a call is
no client call. The room does not gate server-executed calls: a turn holding a
``functionResponse`` is refused, typed, and nothing of it is released; in particular a
stream cut after the chunk with the server's ``functionCall`` never releases that call.
"""

from __future__ import annotations

from typing import Any

import pytest

from callgate import TruncatedStreamError, UnsupportedProviderState
from callgate.gemini_generate_content import Parser, parse_response, parse_stream

from .wire import call, chunk, sse, text

BASELINES = ("2026-07-21", "2026-11")
# The server's call to an MCP tool and the server's answer, then the model's text.
MCP_CALL = call("get_weather", {"city": "Boston", "date": "2026-02-02"}, "mcp-1")
MCP_ANSWER = {
    "functionResponse": {
        "id": "mcp-1",
        "name": "get_weather",
        "response": {"content": [{"type": "text", "text": "Snow, -3 C"}]},
    }
}
CLIENT_CALL = call("book_taxi", {"to": "airport"}, "fc-1")


def _refused(run: Any) -> UnsupportedProviderState:
    with pytest.raises(UnsupportedProviderState) as info:
        run()
    err = info.value
    assert "executed itself" in err.message
    assert err.turn is None or err.turn.calls == ()
    return err


@pytest.mark.parametrize("baseline", BASELINES)
def test_a_body_with_a_server_executed_call_releases_nothing(baseline: str) -> None:
    body = chunk(MCP_CALL, MCP_ANSWER, text("Snow in Boston."), finish="STOP")
    _refused(lambda: parse_response(body, baseline=baseline))


@pytest.mark.parametrize("baseline", BASELINES)
def test_a_client_call_beside_a_server_executed_one_is_not_released(baseline: str) -> None:
    body = chunk(MCP_CALL, MCP_ANSWER, CLIENT_CALL, finish="STOP")
    _refused(lambda: parse_response(body, baseline=baseline))


@pytest.mark.parametrize("baseline", BASELINES)
def test_a_stream_of_a_server_executed_call_releases_nothing(baseline: str) -> None:
    data = sse(chunk(MCP_CALL), chunk(MCP_ANSWER), chunk(text("Snow."), finish="STOP"))
    _refused(lambda: parse_stream(data, baseline=baseline))


@pytest.mark.parametrize("baseline", BASELINES)
def test_a_stream_cut_after_the_servers_call_never_releases_it(baseline: str) -> None:
    """Cut before the answer arrived: the call cannot be told from a client call, and the
    turn has no finishReason, so nothing is released."""
    parser = Parser(baseline=baseline)
    parser.feed_bytes(sse(chunk(text("Checking.")), chunk(MCP_CALL)))
    with pytest.raises(TruncatedStreamError) as info:
        parser.finish()
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


@pytest.mark.parametrize("baseline", BASELINES)
def test_a_stream_cut_after_the_servers_answer_is_refused_at_the_answer(baseline: str) -> None:
    parser = Parser(baseline=baseline)
    _refused(lambda: parser.feed_bytes(sse(chunk(MCP_CALL), chunk(MCP_ANSWER))))
    with pytest.raises(UnsupportedProviderState):  # the parser stays failed
        parser.finish()
