"""Fifty concurrent conversations through one server: no cross-talk, nothing lost.

Conversation ``k`` (of 50) runs in session ``t{k % 10}`` (so every session holds five
conversations at once and ten sessions run side by side) on protocol ``k % 3``,
alternating streamed and JSON turns. Each is a three-turn tool loop whose arguments,
results and final text all carry ``k``; every continuation is built by callgate's own
builders from the turn callgate's parser read off the wire. All 50 start together behind
a barrier and yield to each other between every body chunk they read.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import (
    CONVERSATION_HEADER,
    PROTOCOLS,
    TEST_ID_HEADER,
    MockServer,
    ScriptBuilder,
    call,
)

from .conftest import AUTH, PATHS

N_CONVERSATIONS = 50
N_SESSIONS = 10
MODEL = "concurrency-model"
TOOLS = ("get_weather", "get_time", "lookup")


def protocol_of(k: int) -> str:
    return PROTOCOLS[k % 3]


def session_of(k: int) -> str:
    return f"t{k % N_SESSIONS}"


def conversation_of(k: int) -> str:
    return f"c{k:02d}"


def streamed(k: int, turn: int) -> bool:
    return (k + turn) % 2 == 0


def steps(k: int) -> list[tuple[dict[str, Any], list[tuple[str, str]]]]:
    """(respond, results the host sends for its calls by function name) per turn."""
    return [
        (
            {
                "calls": [call("get_weather", city=f"city-{k}"), call("get_time", tz=f"tz-{k}")],
                "chunking": {"fixed": 3},
            },
            [("get_weather", f"weather-{k}"), ("get_time", f"time-{k}")],
        ),
        ({"calls": [call("lookup", q=f"q-{k}")], "chunking": "char"}, [("lookup", f"found-{k}")]),
        ({"text": f"answer for conversation {k}", "chunking": {"fixed": 5}}, []),
    ]


def build_script() -> Any:
    builder = ScriptBuilder(seed=50)
    for k in range(N_CONVERSATIONS):
        protocol = protocol_of(k)
        previous: list[tuple[str, str]] = []
        for n, (respond, results) in enumerate(steps(k)):
            expect: dict[str, Any] = {
                "model": MODEL,
                "tools": list(TOOLS),
                "stream": streamed(k, n),
            }
            if n == 0:
                expect["text_contains"] = f"question {k}"
            else:
                expect["function_results"] = [{"name": f, "output": o} for f, o in previous]
            if protocol != "anthropic_messages":
                expect["previous_id"] = "previous" if n else "absent"
            builder.turn(protocol, expect=expect, conversation=conversation_of(k), **respond)
            previous = results
    return builder.build()


def tool_decls(protocol: str) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {}}
    if protocol == "anthropic_messages":
        return [{"name": name, "input_schema": schema} for name in TOOLS]
    return [{"type": "function", "name": name, "parameters": schema} for name in TOOLS]


def first_request(k: int) -> dict[str, Any]:
    protocol, text = protocol_of(k), f"question {k}: what now?"
    if protocol == "openai_responses":
        return {"model": MODEL, "tools": tool_decls(protocol), "input": text}
    if protocol == "anthropic_messages":
        messages = [{"role": "user", "content": text}]
        return {
            "model": MODEL,
            "max_tokens": 64,
            "tools": tool_decls(protocol),
            "messages": messages,
        }
    return {"model": MODEL, "tools": tool_decls(protocol), "input": text}


def parse(protocol: str, body: bytes, stream: bool) -> Any:
    if protocol == "openai_responses":
        return oai.parse_stream(body) if stream else oai.parse_response(json.loads(body))
    if protocol == "anthropic_messages":
        return am.parse_stream(body) if stream else am.parse_response(body)
    return gi.parse_stream(body) if stream else gi.parse_interaction(body, source="create")


def id_of(turn: Any) -> str:
    if isinstance(turn, oai.Turn):
        return str(turn.response_id)
    return str(turn.message_id if isinstance(turn, am.Turn) else turn.interaction_id)


def text_of(turn: Any) -> str:
    if isinstance(turn, oai.Turn):
        return turn.text
    if isinstance(turn, am.Turn):
        return "".join(b["text"] for b in turn.content if b["type"] == "text")
    outputs = [s for s in turn.steps if s["type"] == "model_output"]
    return "".join(c["text"] for s in outputs for c in s["content"] if c["type"] == "text")


def continuation(
    protocol: str, turn: Any, results: list[ToolResult], request: dict[str, Any]
) -> dict[str, Any]:
    tools = tool_decls(protocol)
    if protocol == "openai_responses":
        return oai.build_stateful_continuation(
            turn,
            results,
            previous_response_was_stored=True,
            store=True,
            model=MODEL,
            instructions=None,
            tools=tools,
        )
    if protocol == "anthropic_messages":
        return am.build_continuation(
            turn, results, history=request["messages"], model=MODEL, max_tokens=64, tools=tools
        )
    return gi.build_stateful_continuation(
        turn, results, previous_interaction_was_stored=True, store=True, model=MODEL, tools=tools
    )


async def converse(
    client: httpx.AsyncClient, server: MockServer, k: int, go: asyncio.Event
) -> list[tuple[dict[str, Any], bytes]]:
    """Run conversation ``k``; check every turn against its own script; return what was
    sent and received, per turn."""
    protocol = protocol_of(k)
    headers = {
        **AUTH[protocol],
        TEST_ID_HEADER: session_of(k),
        CONVERSATION_HEADER: conversation_of(k),
    }
    request = first_request(k)
    exchanged = []
    await go.wait()
    for n, (respond, results) in enumerate(steps(k)):
        body = {**request, "stream": streamed(k, n)}
        chunks = []
        async with client.stream(
            "POST", server.url + PATHS[protocol], json=body, headers=headers
        ) as response:
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
                await asyncio.sleep(0)  # let the other 49 in between every chunk
        raw = b"".join(chunks)
        assert response.status_code == 200, raw
        exchanged.append((body, raw))

        turn = parse(protocol, raw, streamed(k, n))
        served = [s for s in server.state.served_turns() if s.test_id == session_of(k)]
        mine = [s for s in served if s.conversation == conversation_of(k)]
        rendered = mine[n].rendered
        # Ids and calls are this conversation's own: the ones rendered for its turn n.
        assert id_of(turn) == rendered.response_id
        expected = [(c["name"], c["arguments"]) for c in respond.get("calls", ())]
        assert [(c.name, c.arguments) for c in turn.calls] == expected
        assert [(c.call_id, c.name) for c in turn.calls] == list(rendered.calls)
        assert text_of(turn) == respond.get("text", "")
        by_name = {c.name: c.call_id for c in turn.calls}
        tool_results = [ToolResult(by_name[name], output) for name, output in results]
        if n + 1 < len(steps(k)):
            request = continuation(protocol, turn, tool_results, request)
    return exchanged


def distinct_leading_conversations(entries: list[Any], count: int) -> int:
    """How many different conversations the first ``count`` journal entries belong to.

    Run one after another, three-turn conversations would give ``ceil(count / 3)``; run
    side by side, the first requests of many conversations arrive before any second turn.
    """
    return len({(e.test_id, e.conversation) for e in entries[:count]})


def test_fifty_concurrent_conversations_do_not_cross_talk_and_are_all_journaled() -> None:
    script = build_script()

    async def main(server: MockServer) -> list[list[tuple[dict[str, Any], bytes]]]:
        go = asyncio.Event()
        limits = httpx.Limits(max_connections=N_CONVERSATIONS)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            tasks = [
                asyncio.create_task(converse(client, server, k, go)) for k in range(N_CONVERSATIONS)
            ]
            await asyncio.sleep(0)
            go.set()
            return await asyncio.gather(*tasks)

    with MockServer(script) as server:
        exchanged = asyncio.run(main(server))

        assert server.mismatches == []
        entries = server.journal.entries()
        turns = len(steps(0))
        assert len(entries) == N_CONVERSATIONS * turns
        assert sorted(e.seq for e in entries) == list(range(len(entries)))
        assert {e.outcome for e in entries} == {"matched"}
        assert {e.status for e in entries} == {200}
        # The conversations really ran side by side: one after another would give 7.
        assert distinct_leading_conversations(entries, 20) >= 12
        per_session = N_CONVERSATIONS // N_SESSIONS
        for k in range(N_CONVERSATIONS):
            test_id, conversation = session_of(k), conversation_of(k)
            assert len(server.journal.requests(test_id=test_id)) == per_session * turns
            mine = server.journal.assert_requests(turns, test_id=test_id, conversation=conversation)
            assert [e.protocol for e in mine] == [protocol_of(k)] * turns
            assert [e.location for e in mine] == [
                f"/conversations/{conversation}/{n}" for n in range(turns)
            ]
            for entry, (sent, raw) in zip(mine, exchanged[k], strict=True):
                assert entry.body == sent  # the very request, not a neighbour's
                if sent["stream"]:
                    assert entry.response == raw.decode()
                else:
                    assert entry.response == json.loads(raw)
            # This session consumed this conversation and nothing else of any other.
            left = server.state.remaining(test_id)
            assert left[conversation] == 0
            in_session = {conversation_of(j) for j in range(N_CONVERSATIONS) if j % 10 == k % 10}
            assert all(left[name] == turns for name in left if name not in in_session)
        assert server.state.remaining("never-used") == {
            conversation_of(k): turns for k in range(N_CONVERSATIONS)
        }
        # Every request was served from its own session's cursor, exactly once per turn.
        served = {(s.test_id, s.conversation, s.turn_number) for s in server.state.served_turns()}
        assert served == {
            (session_of(k), conversation_of(k), n)
            for k in range(N_CONVERSATIONS)
            for n in range(turns)
        }


@pytest.mark.parametrize("k", [0, 1, 2])
def test_a_wrong_session_header_is_a_mismatch_not_a_neighbours_turn(k: int) -> None:
    """The check above can fail: the same request in another session's cursor position
    (its turn 1 sent as that session's turn 0) is refused and journaled as a mismatch."""
    script = build_script()
    with MockServer(script) as server:
        protocol = protocol_of(k)
        headers = {
            **AUTH[protocol],
            TEST_ID_HEADER: "other",
            CONVERSATION_HEADER: conversation_of(k),
        }
        body = {**first_request(k), "stream": streamed(k, 1)}
        response = httpx.post(server.url + PATHS[protocol], json=body, headers=headers, timeout=10)
        assert response.status_code == 400
        assert "stream is" in response.text
        assert [m.test_id for m in server.mismatches] == ["other"]
        assert server.journal.last(test_id="other").outcome == "mismatch"
