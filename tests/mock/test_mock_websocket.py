"""The mock's OpenAI Responses WebSocket route, through openai's ``responses.connect()``
(3.57.0, and the 2.46.0 baseline, which has ``connect()`` but no ``response.steer``: the
steering tests skip there) and a raw ``websockets`` client,
on a real socket: several responses per connection, the connection-local cache of
unstored responses, steering as the script says, request validation, faults, the journal
and sessions per test id. Wire facts: docs/contracts/openai-responses-websocket.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from websockets.exceptions import ConnectionClosedError, InvalidStatus
from websockets.sync.client import connect as ws_connect

from callgate import openai_responses as oai
from callgate.mock import MockServer, Script, ScriptBuilder, ScriptError, call

_CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": _CITY}]
STEERS = hasattr(openai.types.responses, "ResponseSteerAcceptedEvent")
needs_steer = pytest.mark.skipif(not STEERS, reason="this openai has no response.steer")


def _weather() -> Script:
    return (
        ScriptBuilder(seed=3)
        .turn("openai_responses", expect={"tools": ["get_weather"]},
              calls=[call("get_weather", city="Paris")])
        .turn("openai_responses", expect={
              "function_results": [{"name": "get_weather", "output": "sunny"}]},
              text="It is sunny.")
        .build()
    )  # fmt: skip


def _until(events: Iterator[Any], *kinds: str) -> list[Any]:
    seen = []
    for event in events:
        seen.append(event)
        if event.type in kinds:
            return seen
    raise AssertionError(f"the socket ended before {kinds}: {[e.type for e in seen]}")


def _code(event: Any) -> Any:
    """The nested error's code (openai 2.46.0 types the SSE error and keeps it a dict)."""
    error = event.error
    return error["code"] if isinstance(error, dict) else error.code


TERMINAL = ("response.completed", "response.incomplete", "response.failed", "error")


@contextlib.contextmanager
def _socket(base_url: str, **options: Any) -> Iterator[Any]:
    """An openai client's ``responses.connect()`` connection to the mock."""
    with (
        openai.OpenAI(base_url=base_url, api_key="test") as client,
        client.responses.connect(**options) as conn,
    ):
        yield conn


@pytest.fixture
def weather_server() -> Iterator[MockServer]:
    with MockServer(_weather()) as server:
        yield server


def test_two_responses_on_one_connection_continue_an_unstored_response(
    weather_server: MockServer,
) -> None:
    server = weather_server
    with openai.OpenAI(base_url=server.openai_base_url, api_key="test") as client:
        with client.responses.connect() as conn:
            conn.response.create(model="gpt-4.1", input="Weather in Paris?", tools=TOOLS,
                                 store=False)  # fmt: skip
            first = _until(conn, *TERMINAL)
            assert first[0].type == "response.created"
            done = first[-1].response
            assert first[-1].type == "response.completed", first[-1]
            # The frames are the SSE events: callgate's SSE parser releases the same call.
            parser = oai.Parser()
            for event in first:
                parser.feed_event(event)
            turn = parser.finish()
            released = [(c.name, c.arguments) for c in turn.calls]
            assert released == [("get_weather", {"city": "Paris"})]
            conn.response.create(
                model="gpt-4.1", tools=TOOLS, store=False, previous_response_id=done.id,
                input=[{"type": "function_call_output", "call_id": done.output[0].call_id,
                        "output": "sunny"}],
            )  # fmt: skip
            second = _until(conn, *TERMINAL)
        assert second[-1].type == "response.completed", second[-1]
        assert second[-1].response.output_text == "It is sunny."
        # Unstored: not retrievable over HTTP, and another connection cannot continue it.
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(done.id)
        with client.responses.connect() as other:
            other.response.create(model="gpt-4.1", input="again", previous_response_id=done.id,
                                  store=False)  # fmt: skip
            (error,) = _until(other, *TERMINAL)
    assert error.type == "error"
    assert error.status == 400
    assert _code(error) == "previous_response_not_found"
    entries = server.journal.entries()
    assert [(e.method, e.outcome) for e in entries[:2]] == [("WS", "matched")] * 2
    assert entries[0].connection == entries[1].connection != entries[-1].connection
    assert entries[0].body["type"] == "response.create"
    server.assert_script_done()


def test_a_stored_response_continues_on_another_connection_and_lanes_echo() -> None:
    script = (
        ScriptBuilder(seed=1)
        .turn("openai_responses", text="one")
        .turn("openai_responses", expect={"previous_id": "previous"}, text="two")
        .build()
    )
    with MockServer(script) as server:
        with _socket(server.openai_base_url) as conn:
            conn.send({"type": "response.create", "model": "m", "input": "hi",
                       "stream_id": "lane.A"})  # fmt: skip
            first = _until(conn, *TERMINAL)
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="m", input="more",
                                 previous_response_id=first[-1].response.id)  # fmt: skip
            second = _until(conn, *TERMINAL)
        server.assert_script_done()
    assert {e.stream_id for e in first} == {"lane.A"}
    assert second[-1].response.output_text == "two"
    assert all(getattr(e, "stream_id", None) is None for e in second)


def _steer_script(outcome: str, **steer: Any) -> Script:
    return (
        ScriptBuilder(seed=2)
        .turn(
            "openai_responses",
            text="Going north along the river.",
            steer={"outcome": outcome, **steer},
        )
        .turn("openai_responses", expect={"text_contains": "go south"}, text="Going south.")
        .build()
    )


@needs_steer
def test_a_steer_ends_the_response_steered_and_starts_its_successor() -> None:
    with MockServer(_steer_script("steered", after=4)) as server:
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="gpt-4.1", input="Walk somewhere.")
            head = [conn.recv() for _ in range(4)]
            rid = head[0].response.id
            conn.response.steer(input="go south", previous_response_id=rid)
            steered = _until(conn, "response.incomplete")
            successor = _until(conn, *TERMINAL)
        server.assert_script_done()
        entries = server.journal.entries()
    accepted = steered[0]
    assert accepted.type == "response.steer.accepted"
    assert accepted.steer.previous_response_id == rid
    ended = steered[-1].response
    assert (ended.id, ended.status) == (rid, "incomplete")
    assert ended.incomplete_details.reason == "steered"
    seqs = [e.sequence_number for e in head + steered]
    assert seqs == list(range(len(seqs)))  # the steer numbers on; nothing is skipped
    assert successor[0].type == "response.created"
    assert successor[-1].response.output_text == "Going south."
    assert [e.outcome for e in entries] == ["matched", "steer", "matched"]
    assert entries[1].body == {"type": "response.steer", "previous_response_id": rid,
                               "input": "go south"}  # fmt: skip
    assert entries[2].body["previous_response_id"] == rid
    assert len({e.connection for e in entries}) == 1


@needs_steer
def test_a_pending_steer_asks_for_the_tool_outputs_and_goes_first_in_the_next_create() -> None:
    script = (
        ScriptBuilder(seed=4)
        .turn("openai_responses", calls=[call("get_weather", city="Paris")],
              steer={"outcome": "pending"})
        .turn("openai_responses", expect={
              "text_contains": "in Celsius",
              "function_results": [{"name": "get_weather", "output": "sunny"}]},
              text="Sunny, 21 C.")
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="gpt-4.1", input="Weather?", tools=TOOLS)
            created = conn.recv()
            rid = created.response.id
            conn.response.steer(input="in Celsius", previous_response_id=rid)
            rest = _until(conn, "response.steer.pending")
            kinds = [e.type for e in rest]
            assert kinds[-3:] == ["response.steer.accepted", "response.completed",
                                      "response.steer.pending"]  # fmt: skip
            pending = rest[-1]
            (stub,) = pending.required_input
            assert (stub.type, stub.name) == ("function_call_output", "get_weather")
            conn.response.create(
                    model="gpt-4.1", tools=TOOLS, previous_response_id=rid,
                    input=[{"type": "function_call_output", "call_id": stub.call_id,
                            "output": "sunny"}],
                )  # fmt: skip
            answer = _until(conn, *TERMINAL)
        server.assert_script_done()
    assert answer[-1].response.output_text == "Sunny, 21 C."


@needs_steer
def test_failed_steers_leave_the_response_running() -> None:
    with MockServer(_steer_script("failed", code="too_many_pending_steers")) as server:
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="gpt-4.1", input="Walk somewhere.")
            rid = conn.recv().response.id
            # Not a user message; a response this connection never had: refused first.
            bad = [{"type": "function_call_output", "call_id": "c", "output": "x"}]
            conn.response.steer(input=bad, previous_response_id=rid)  # type: ignore[arg-type]
            conn.response.steer(input="go south", previous_response_id="resp_unknown")
            conn.response.steer(input="go south", previous_response_id=rid)
            events = _until(conn, *TERMINAL)
            conn.response.steer(input="go south", previous_response_id=rid)
            late = conn.recv()
            conn.response.create(model="gpt-4.1", input="go south, please")
            _until(conn, *TERMINAL)
        server.assert_script_done()
    failures = [e for e in events if e.type == "response.steer.failed"]
    assert [f.error.code for f in failures] == [
        "invalid_input",
        "response_not_found",
        "too_many_pending_steers",
    ]
    assert failures[-1].steer.input == "go south"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Going north along the river."
    assert (late.type, late.error.code) == ("response.steer.failed", "response_already_completed")


def test_refusals_are_error_events_and_the_connection_goes_on() -> None:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="fine").build()
    with MockServer(script) as server:
        url = server.openai_base_url.replace("http://", "ws://") + "/responses"
        headers = {"Authorization": "Bearer test"}
        with ws_connect(url, additional_headers=headers) as ws:
            answers = []
            for message in (
                "{not json",
                json.dumps({"type": "response.cancel"}),
                json.dumps({"type": "response.create", "model": "m", "input": "x",
                            "temperature": "hot"}),
                json.dumps({"type": "response.create", "model": "m", "input": "x",
                            "stream_id": "no spaces"}),
                json.dumps({"type": "response.create", "model": "m", "input": "x",
                            "background": True}),
            ):  # fmt: skip
                ws.send(message)
                answers.append(json.loads(ws.recv()))
            ws.send(json.dumps({"type": "response.create", "model": "m", "input": "x"}))
            events = [json.loads(ws.recv()) for _ in range(2)]
        with pytest.raises(InvalidStatus) as refused:  # no credentials: the upgrade's answer
            ws_connect(url).close()
        entries = server.journal.entries()
    assert [a["type"] for a in answers] == ["error"] * 5
    assert all(a["status"] == 400 and a["error"]["type"] == "invalid_request_error"
               for a in answers)  # fmt: skip
    codes = [a["error"].get("code") for a in answers]
    assert (codes[0], codes[3]) == ("invalid_json", "invalid_stream_id")
    assert answers[2]["error"]["param"] == "temperature"
    assert [e["type"] for e in events] == ["response.created", "response.in_progress"]
    assert refused.value.response.status_code == 401
    assert [e.outcome for e in entries] == ["rejected"] * 5 + ["matched", "rejected"]


def test_faults_close_with_the_code_send_error_events_and_pace_frames() -> None:
    script = (
        ScriptBuilder(seed=1)
        .turn("openai_responses", text="cut", fault={"type": "disconnect", "after": 3,
                                                       "close_code": 4000})
        .turn("openai_responses", text="err", fault={"type": "error_event", "after": 2,
                                                       "code": "server_error", "shape": "flat"})
        .turn("openai_responses", text="slow", chunking="char", pacing={"event_delay_ms": 1})
        .build()
    )  # fmt: skip
    with MockServer(script) as server:
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="m", input="a")
            got = [conn.recv() for _ in range(3)]
            with pytest.raises(ConnectionClosedError) as closed:
                conn.recv()
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="m", input="b")
            errored = _until(conn, "error")
            conn.response.create(model="m", input="c")
            slow = _until(conn, *TERMINAL)
        server.assert_script_done()
    assert len(got) == 3
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4000
    assert len(errored) == 3
    assert _code(errored[-1]) == "server_error"  # nested on the socket
    deltas = [e.delta for e in slow if e.type == "response.output_text.delta"]
    assert deltas == list("slow")


def test_sessions_by_test_id_on_the_upgrade_request() -> None:
    default = ScriptBuilder(seed=1).turn("openai_responses", text="default").build()
    own = ScriptBuilder(seed=1).turn("openai_responses", text="own").build()
    with MockServer(default) as server:
        server.register("t-1", own)
        headers = {"x-callgate-test-id": "t-1"}
        with _socket(server.azure_openai_base_url, extra_headers=headers) as conn:
            conn.response.create(model="m", input="hi")
            events = _until(conn, *TERMINAL)
        assert events[-1].response.output_text == "own"
        assert server.status("t-1")["done"]
        (entry,) = server.journal.entries(test_id="t-1")
        assert entry.path == "/azure-openai/openai/v1/responses"
        assert entry.headers["authorization"] == "<redacted>"


def test_async_sdk_runs_a_two_call_loop_on_one_connection(weather_server: MockServer) -> None:
    async def main() -> str:
        base_url = weather_server.openai_base_url
        async with (
            openai.AsyncOpenAI(base_url=base_url, api_key="test") as client,
            client.responses.connect() as conn,
        ):
            await conn.response.create(model="gpt-4.1", input="Weather?", tools=TOOLS)
            async for event in conn:
                if event.type == "response.completed":
                    done = event.response
                    break
            await conn.response.create(
                model="gpt-4.1", tools=TOOLS, previous_response_id=done.id,
                input=[{"type": "function_call_output",
                        "call_id": done.output[0].call_id, "output": "sunny"}],
            )  # fmt: skip
            async for event in conn:
                if event.type == "response.completed":
                    return str(event.response.output_text)
        raise AssertionError("no second response")

    assert asyncio.run(main()) == "It is sunny."
    weather_server.assert_script_done()


@pytest.mark.parametrize(
    ("respond", "says"),
    [
        ({"steer": {"outcome": "later"}}, "outcome"),
        ({"steer": {"after": 0}}, "after"),
        ({"steer": {"when": 1}}, "unknown"),
        ({"steer": {"code": ""}}, "code"),
        ({"fault": {"type": "disconnect", "after": 1, "close_code": 999}}, "close_code"),
    ],
)
def test_the_loader_refuses_a_bad_steer_or_close_code(respond: dict[str, Any], says: str) -> None:
    with pytest.raises(ScriptError) as refused:
        ScriptBuilder().turn("openai_responses", text="x", **respond).build()
    assert says in str(refused.value)


def test_a_steer_spec_is_refused_on_another_protocol_and_ignored_over_http() -> None:
    with pytest.raises(ScriptError):
        ScriptBuilder().turn("anthropic_messages", text="x", steer={}).build()
    script = ScriptBuilder().turn("openai_responses", text="plain", steer={}).build()
    with (
        MockServer(script) as server,
        openai.OpenAI(base_url=server.openai_base_url, api_key="test") as client,
    ):
        assert client.responses.create(model="m", input="hi").output_text == "plain"


def test_a_runtime_http_error_is_an_error_event_with_its_status_and_headers() -> None:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="after the 429").build()
    with MockServer(script) as server:
        fault = {"type": "http_error", "status": 429, "retry_after": 2}
        armed = httpx.post(f"{server.url}/_callgate/faults", json={"fault": fault})
        assert armed.status_code == 200
        with _socket(server.openai_base_url) as conn:
            conn.response.create(model="m", input="hi")
            (limited,) = _until(conn, *TERMINAL)
            conn.response.create(model="m", input="hi")  # the turn was not consumed
            served = _until(conn, *TERMINAL)
        server.assert_script_done()
    assert (limited.type, limited.status) == ("error", 429)
    headers = limited.error["headers"] if isinstance(limited.error, dict) else limited.error.headers
    assert headers["retry-after"] == "2"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert served[-1].response.output_text == "after the 429"


def _sse_events(body: str) -> list[Any]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize(
    "respond",
    [
        {"text": "Hello there.", "chunking": "char"},
        {"calls": [call("a", x=1), call("b", y="two")], "interleave": "round_robin",
         "chunking": {"fixed": 3}},
        {"reasoning": {"summary": "think", "signature": "sig"}, "text": "done",
         "calls": [call("c")]},
    ],
    ids=["text", "parallel-calls", "reasoning"],
)  # fmt: skip
def test_the_frames_are_the_events_the_sse_stream_carries(respond: dict[str, Any]) -> None:
    """The socket sends, one frame each, exactly the events of the same turn over SSE."""
    script = ScriptBuilder(seed=9).turn("openai_responses", **respond).build()
    ask = {"model": "gpt-4.1", "input": "hi", "stream": True}
    with MockServer(script) as server:
        sse = httpx.post(f"{server.openai_base_url}/responses", json=ask,
                         headers={"authorization": "Bearer test"})  # fmt: skip
    with MockServer(script) as server:
        url = server.openai_base_url.replace("http://", "ws://") + "/responses"
        with ws_connect(url, additional_headers={"authorization": "Bearer test"}) as ws:
            ws.send(json.dumps({"type": "response.create", **ask}))
            frames = []
            while not frames or frames[-1]["type"] != "response.completed":
                frames.append(json.loads(ws.recv()))
    assert sse.status_code == 200
    assert frames == _sse_events(sse.text)
