"""The connection parser on a real socket, against the mock's WebSocket route.

Every frame a raw ``websockets`` client receives is fed to one ``Connection``: two
responses on one socket, a steer that ends the response ``steered`` and starts its
successor, a pending steer answered from the saved result, a close mid-response with a
code, an error event. The mock and the parser are written from the same wire facts
(docs/contracts/openai-responses-websocket.md); this is where they must agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import ToolResult, TruncatedStreamError
from callgate import openai_responses as oai
from callgate.mock import MockServer, Script, ScriptBuilder, call

websockets = pytest.importorskip("websockets")
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": CITY}]


class Socket:
    """A raw client whose every received frame goes through one Connection."""

    def __init__(self, server: MockServer) -> None:
        url = server.openai_base_url.replace("http://", "ws://") + "/responses"
        self.ws = connect(url, additional_headers={"Authorization": "Bearer test"})
        self.conn = oai.Connection()
        self.events: list[dict[str, Any]] = []

    def send(self, **message: Any) -> None:
        self.ws.send(json.dumps(message))

    def until_turn(self) -> oai.Turn:
        while True:
            frame = self.ws.recv()
            self.events.append(json.loads(frame))
            turns = self.conn.feed_message(frame)
            if turns:
                (turn,) = turns
                return turn

    def until(self, kind: str) -> None:
        while not self.events or self.events[-1]["type"] != kind:
            frame = self.ws.recv()
            self.events.append(json.loads(frame))
            assert self.conn.feed_message(frame) == ()

    def close(self) -> None:
        self.ws.close()
        self.conn.close(1000)


def _weather() -> Script:
    return (
        ScriptBuilder(seed=3)
        .turn("openai_responses", calls=[call("get_weather", city="Paris")])
        .turn("openai_responses", expect={
              "function_results": [{"name": "get_weather", "output": "sunny"}]},
              text="It is sunny.")
        .build()
    )  # fmt: skip


def test_two_responses_on_one_socket_continue_by_token() -> None:
    with MockServer(_weather()) as server:
        sock = Socket(server)
        sock.send(type="response.create", model="m", input="Weather?", tools=TOOLS, store=False)
        first = sock.until_turn()
        assert [(c.name, c.arguments) for c in first.calls] == [("get_weather", {"city": "Paris"})]
        body = oai.build_stateful_continuation(
            first, [ToolResult(call_id=first.calls[0].call_id, output="sunny")],
            previous_response_was_stored=False, connection=sock.conn.token(),
            store=False, model="m", instructions=None, tools=TOOLS,
        )  # fmt: skip
        sock.send(type="response.create", **body)
        second = sock.until_turn()
        sock.close()
        server.assert_script_done()
    assert second.text == "It is sunny."


def test_a_steered_response_and_its_successor_from_the_mock() -> None:
    script = (
        ScriptBuilder(seed=2)
        .turn("openai_responses", text="Going north along the river.",
              steer={"outcome": "steered", "after": 4})
        .turn("openai_responses", expect={"text_contains": "go south"}, text="Going south.")
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        sock = Socket(server)
        sock.send(type="response.create", model="m", input="Walk somewhere.")
        sock.until("response.in_progress")
        rid = sock.events[0]["response"]["id"]
        sock.send(type="response.steer", previous_response_id=rid, input="go south")
        steered = sock.until_turn()
        successor = sock.until_turn()
        sock.close()
        server.assert_script_done()
    assert steered.response_id == rid
    assert steered.status == "incomplete"
    assert steered.error is not None
    assert steered.error.code == "steered"
    assert steered.calls == ()
    assert successor.text == "Going south."
    (steer,) = sock.conn.steers
    assert (steer.status, steer.successor_id) == ("committed", successor.response_id)


def test_a_pending_steer_from_the_mock_names_the_released_call() -> None:
    script = (
        ScriptBuilder(seed=4)
        .turn("openai_responses", calls=[call("get_weather", city="Paris")],
              steer={"outcome": "pending"})
        .turn("openai_responses", expect={"text_contains": "in Celsius"}, text="Sunny, 21 C.")
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        sock = Socket(server)
        sock.send(type="response.create", model="m", input="Weather?", tools=TOOLS)
        sock.until("response.created")
        rid = sock.events[0]["response"]["id"]
        sock.send(type="response.steer", previous_response_id=rid, input="in Celsius")
        parent = sock.until_turn()
        sock.until("response.steer.pending")
        (steer,) = sock.conn.steers
        assert steer.status == "pending"
        assert [s["call_id"] for s in steer.required_input] == [parent.calls[0].call_id]
        output = {"type": "function_call_output", "call_id": parent.calls[0].call_id,
                  "output": "sunny"}  # fmt: skip
        sock.send(type="response.create", model="m", tools=TOOLS, previous_response_id=rid,
                  input=[output])  # fmt: skip
        answer = sock.until_turn()
        sock.close()
        server.assert_script_done()
    assert answer.text == "Sunny, 21 C."
    assert sock.conn.steers[0].status == "committed"


def test_a_close_mid_response_from_the_mock_is_a_truncation() -> None:
    script = (
        ScriptBuilder(seed=1)
        .turn("openai_responses", calls=[call("get_weather", city="Paris")],
              fault={"type": "disconnect", "after": 6, "close_code": 1011})
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        sock = Socket(server)
        sock.send(type="response.create", model="m", input="Weather?", tools=TOOLS)
        with pytest.raises(ConnectionClosed) as closed:
            sock.until_turn()
        code = closed.value.rcvd.code if closed.value.rcvd is not None else None
        with pytest.raises(TruncatedStreamError, match="code 1011") as cut:
            sock.conn.close(code)
        sock.ws.close()
    assert len(sock.events) == 6
    assert cut.value.turn is not None
    assert cut.value.turn.calls == ()


def test_an_error_event_from_the_mock_ends_the_response_and_the_socket_goes_on() -> None:
    script = (
        ScriptBuilder(seed=1)
        .turn("openai_responses", text="err", fault={"type": "error_event", "after": 2,
                                                     "code": "server_error"})
        .turn("openai_responses", text="fine")
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        sock = Socket(server)
        sock.send(type="response.create", model="m", input="a")
        errored = sock.until_turn()
        sock.send(type="response.create", model="m", input="b")
        fine = sock.until_turn()
        sock.close()
        server.assert_script_done()
    assert errored.error is not None
    assert errored.error.code == "server_error"
    assert errored.calls == ()
    assert fine.text == "fine"
