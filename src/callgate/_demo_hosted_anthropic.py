"""``callgate demo``'s Anthropic server-tool scenario: the provider searches the web and
cites what it found, the gate releases only the client tool, and the continuation sends
the server blocks (with their encrypted content) back unchanged for the final answer.

It runs on its own embedded mock server (its script is the scenario's own)."""

from __future__ import annotations

import json
from typing import Any, Protocol

import httpx

from . import anthropic_messages as am
from ._demo_wire import stream_turn
from ._results import ToolResult
from .mock import MockServer, ScriptBuilder, call

__all__ = ["scenario"]

MODEL = "claude-demo"
QUESTION = "Is the Louvre open today, and what is the weather in Paris?"
TOOLS: list[dict[str, Any]] = [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
    {"name": "get_weather", "description": "Current weather for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                      "required": ["city"]}},
]  # fmt: skip
SEARCH = {"tool": "web_search", "query": "Louvre opening hours today",
          "results": [{"url": "https://louvre.example/hours", "title": "Opening hours",
                       "page_age": "1 day", "marker": "hours"}]}  # fmt: skip
CITED = {"text": "The Louvre is open today from 9:00 to 18:00.",
         "cite": [{"marker": "hours", "quote": "open 9:00-18:00"}]}  # fmt: skip
WEATHER = {"city": "Paris", "forecast": "sunny", "celsius": 21}


class Reporter(Protocol):
    failures: int

    def say(self, text: str) -> None: ...


def _script() -> Any:
    b = ScriptBuilder(seed=14)
    b.turn("anthropic_messages", conversation="hosted", hosted=[SEARCH, CITED],
           calls=[call("get_weather", city="Paris")])  # fmt: skip
    expect = {"function_results": [{"name": "get_weather", "output": json.dumps(WEATHER)}]}
    b.turn("anthropic_messages", conversation="hosted", expect=expect,
           text="The Louvre is open until 18:00, and Paris is sunny at 21 °C.")  # fmt: skip
    return b.build()


def _post(client: httpx.Client, srv: MockServer, body: dict[str, Any]) -> am.Turn:
    headers = {"x-api-key": "demo", "anthropic-version": "2023-06-01",
               "x-callgate-conversation": "hosted"}  # fmt: skip
    url = f"{srv.anthropic_base_url}/v1/messages"
    turn: am.Turn = stream_turn(client, url, {**body, "stream": True}, headers, am.Parser())
    return turn


def _describe(turn: am.Turn, say: Any) -> None:
    for hosted in turn.hosted_calls:
        say(f"    server ran {hosted.tool}[{hosted.id}]: status={hosted.status}")
    for citation in turn.citations:
        say(f"    citation {citation.kind} -> {citation.source}")
    released = ", ".join(f"{c.name}[{c.call_id}]" for c in turn.calls) or "none"
    say(f"    gate released {len(turn.calls)} client call(s): {released}")


def scenario(client: httpx.Client, _shared: MockServer, report: Reporter) -> None:
    """Search with citations -> the client tool -> the final answer."""
    say = report.say
    history: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "tools": TOOLS,
                            "messages": history}  # fmt: skip
    with MockServer(_script()) as srv:
        for hop in range(1, 4):
            turn = _post(client, srv, body)
            say(f"  turn {hop}: message {turn.message_id} stop_reason={turn.stop_reason}")
            _describe(turn, say)
            if not turn.calls:
                say(f"    final answer: {turn.text}")
                problems = [m.problems for m in srv.mismatches]
                report.failures += bool(problems or any(srv.state.remaining().values()))
                return
            results = [ToolResult(c.call_id, json.dumps(WEATHER)) for c in turn.calls]
            for c in turn.calls:
                say(f"      ran {c.name}({json.dumps(c.arguments)}) -> {json.dumps(WEATHER)}")
            body = am.build_continuation(turn, results, history=history, model=MODEL,
                                         max_tokens=1024, tools=TOOLS)  # fmt: skip
            history = body["messages"]
            kept = [b["type"] for b in history[-2]["content"]]
            say(f"    continuation: server blocks replayed unchanged {kept}")
    raise RuntimeError("no final answer after 3 turns")
