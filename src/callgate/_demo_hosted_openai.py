"""``callgate demo``'s hosted-tool scenario on OpenAI Responses, stateless (``store=false``).

The model searches the web (a hosted ``web_search_call``, never executed by the host),
cites what it found and calls a local function in the same turn; the gate releases only
the function call, the host runs it, and the stateless continuation replays every output
item -- the hosted item and the cited message unchanged -- before the result. The final
answer cites a second search. The scenario runs on its own mock server, whose request
checks refuse a replay that changed the hosted item or its citations.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from . import openai_responses as oai
from ._demo_wire import stream_turn
from ._results import ToolResult
from .mock import MockServer, ScriptBuilder, call

__all__ = ["scenario"]

MODEL = "gpt-demo"
QUESTION = "Should I take an umbrella in Paris today?"
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True,
}  # fmt: skip
TOOLS: list[dict[str, Any]] = [{"type": "web_search", "search_context_size": "low"}, WEATHER_TOOL]
INCLUDE = ["web_search_call.action.sources"]
FORECAST = {"city": "Paris", "forecast": "sunny", "rain_chance": 0.05}


def _script() -> ScriptBuilder:
    b = ScriptBuilder(seed=13)
    b.turn(
        "openai_responses",
        expect={"model": MODEL, "tools": ["get_weather"]},
        hosted=[{"web_search": {"query": "Paris weather today", "results": [
            {"marker": "mf", "url": "https://meteo.example/paris", "title": "Paris forecast"}]}}],
        text="The [Paris forecast](cite:mf) says it stays dry; checking live data.",
        calls=[call("get_weather", city="Paris")],
        chunking={"fixed": 6},
    )  # fmt: skip
    b.turn(
        "openai_responses",
        expect={"function_results": [{"name": "get_weather",
                                      "output": json.dumps(FORECAST, separators=(",", ":"))}]},
        hosted=[{"web_search": {"query": "Paris rain radar", "results": [
            {"marker": "rr", "url": "https://radar.example/paris", "title": "Rain radar"}]}}],
        text="No umbrella needed: [the radar is clear](cite:rr) and it is sunny.",
        chunking={"fixed": 6},
    )  # fmt: skip
    return b


def _stream(client: httpx.Client, srv: MockServer, body: dict[str, Any]) -> oai.Turn:
    url = f"{srv.openai_base_url}/responses"
    headers = {"authorization": "Bearer demo"}
    parser = oai.Parser(request=body)  # hosted items must come from declared tools
    turn: oai.Turn = stream_turn(client, url, body, headers, parser)
    return turn


def _show(turn: oai.Turn, say: Any) -> None:
    for hosted in turn.hosted_calls:
        action = hosted.raw.get("action", {})
        say(f"    hosted {hosted.tool} [{hosted.id}] {hosted.status}: {action.get('query')!r}")
    for cite in turn.citations:
        say(f"    citation {cite.kind} {cite.source} -> {turn.text[cite.start : cite.end]!r}")


def scenario(client: httpx.Client, _srv: MockServer, report: Any) -> None:
    """Run the two model turns; count a failure on ``report`` if anything is off."""
    say = report.say
    prior = [{"role": "user", "content": QUESTION}]
    body = {"model": MODEL, "input": prior, "tools": TOOLS, "include": INCLUDE,
            "store": False, "stream": True}  # fmt: skip
    with MockServer(_script().build()) as srv:
        turn = _stream(client, srv, body)
        say(f"  turn 1: {len(turn.hosted_calls)} hosted call(s), {len(turn.citations)} citation(s)")
        _show(turn, say)
        say(f"    gate released {len(turn.calls)} call(s): "
            + ", ".join(f"{c.name}[{c.call_id}]" for c in turn.calls))  # fmt: skip
        results = [ToolResult(c.call_id, json.dumps(FORECAST, separators=(",", ":")))
                   for c in turn.calls]  # fmt: skip
        follow = oai.build_stateless_continuation(
            turn, results, prior_input_items=prior, store=False, model=MODEL,
            instructions=None, tools=TOOLS,
            request_controls={"include": INCLUDE, "stream": True},
        )  # fmt: skip
        kinds = [item.get("type", "message") for item in follow["input"]]
        say(f"    continuation: stateless replay of {kinds}")
        final = _stream(client, srv, follow)
        say(f"  turn 2: {len(final.hosted_calls)} hosted call(s), released {len(final.calls)}")
        _show(final, say)
        say(f"    final answer (cited): {final.text}")
        problems = [*srv.mismatches]
    ok = (
        not problems
        and [c.name for c in turn.calls] == ["get_weather"]
        and len(turn.citations) == 1
        and len(final.citations) == 1
        and not final.calls
    )
    if not ok:
        report.failures += 1
        say("    UNEXPECTED: the hosted-tool loop did not end with a cited answer")
