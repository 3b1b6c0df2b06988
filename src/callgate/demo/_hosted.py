"""``callgate demo``'s hosted-tool scenarios: the provider runs a tool (web search, code
execution) and cites what it found; the host loop declares it with ``hosted_tools=``,
the gate releases only the client's own calls, and a continuation replays what the
provider produced unchanged (the mock's request checks refuse a replay that changed it).

- OpenAI Responses, stateless: a web search and a cited call in one turn, the stateless
  continuation replays every output item before the result, the answer cites a second
  search. ``include`` asks for the search's sources on the first request only: the loop
  builds continuations with its own request controls, and the replay needs none. The
  function tool is declared as every ``ToolSpec`` is, without ``strict``.
- Anthropic Messages: a web search with citations, then a client tool, then the answer;
  the server blocks (with their encrypted content) go back in the history as received.
- Gemini generateContent: a grounded answer with no client call; each citation's UTF-8
  byte range must be exactly its cited text.

The mock plays the provider: callgate never searches or runs anything itself.
"""

from __future__ import annotations

from typing import Any

from ..mock import MockServer, ScriptBuilder, call
from ._kit import Say, compact, demo_tool, run_loop, script_done, show

__all__ = ["SCENARIOS"]

CITY = {"city": {"type": "string"}}
FORECAST = {"city": "Paris", "forecast": "sunny", "rain_chance": 0.05}
WEATHER = {"city": "Paris", "forecast": "sunny", "celsius": 21}


def _searches(turn: Any, say: Say) -> None:
    """OpenAI: each web search with its query, each citation with the text it covers."""
    for hosted in turn.hosted_calls:
        query = hosted.raw.get("action", {}).get("query")
        say(f"    hosted {hosted.tool} [{hosted.id}] {hosted.status}: {query!r}")
    for cite in turn.citations:
        say(f"    citation {cite.kind} {cite.source} -> {turn.text[cite.start : cite.end]!r}")


# -- OpenAI Responses ---------------------------------------------------------------------


def _web_search(query: str, marker: str, url: str, title: str) -> dict[str, Any]:
    """A scripted OpenAI web search with one result, cited in the text as ``cite:marker``."""
    result = {"marker": marker, "url": url, "title": title}
    return {"web_search": {"query": query, "results": [result]}}


def _openai_script() -> Any:
    first = _web_search(
        "Paris weather today", "mf", "https://meteo.example/paris", "Paris forecast"
    )
    second = _web_search("Paris rain radar", "rr", "https://radar.example/paris", "Rain radar")
    results = [{"name": "get_weather", "output": compact(FORECAST)}]
    b = ScriptBuilder(seed=13)
    b.turn(
        "openai_responses",
        expect={"model": "gpt-demo", "tools": ["get_weather"]},
        hosted=[first],
        text="The [Paris forecast](cite:mf) says it stays dry; checking live data.",
        calls=[call("get_weather", city="Paris")],
        chunking={"fixed": 6},
    )
    b.turn(
        "openai_responses",
        expect={"previous_id": "absent", "function_results": results},
        hosted=[second],
        text="No umbrella needed: [the radar is clear](cite:rr) and it is sunny.",
        chunking={"fixed": 6},
    )
    return b.build()


def openai_web_search(say: Say) -> bool:
    weather = demo_tool("get_weather", lambda city: FORECAST, "Current weather for a city.", CITY)
    request = {
        "input": [{"role": "user", "content": "Should I take an umbrella in Paris today?"}],
        "include": ["web_search_call.action.sources"],
    }
    with MockServer(_openai_script()) as server:
        trace = run_loop(
            server,
            "openai_responses",
            request,
            tools=[weather],
            model="gpt-demo",
            store=False,
            hosted_tools=[{"type": "web_search", "search_context_size": "low"}],
        )
        show(trace, say, details=_searches, final="final answer (cited)")
        done = script_done(server, say)
    turns = trace.turns
    return (
        done
        and trace.result.status == "final"
        and len(turns) == 2
        and [c.name for c in turns[0].calls] == ["get_weather"]
        and [len(t.citations) for t in turns] == [1, 1]
    )


# -- Anthropic Messages -------------------------------------------------------------------


def _anthropic_script() -> Any:
    search = {
        "tool": "web_search",
        "query": "Louvre opening hours today",
        "results": [
            {
                "url": "https://louvre.example/hours",
                "title": "Opening hours",
                "page_age": "1 day",
                "marker": "hours",
            }
        ],
    }
    cited = {
        "text": "The Louvre is open today from 9:00 to 18:00.",
        "cite": [{"marker": "hours", "quote": "open 9:00-18:00"}],
    }
    b = ScriptBuilder(seed=14)
    b.turn("anthropic_messages", hosted=[search, cited], calls=[call("get_weather", city="Paris")])
    b.turn(
        "anthropic_messages",
        expect={"function_results": [{"name": "get_weather", "output": compact(WEATHER)}]},
        text="The Louvre is open until 18:00, and Paris is sunny at 21 °C.",
    )
    return b.build()


def _server_tools(turn: Any, say: Say) -> None:
    """Anthropic: what the server ran, and where each citation points."""
    for hosted in turn.hosted_calls:
        say(f"    server ran {hosted.tool}[{hosted.id}]: status={hosted.status}")
    for cite in turn.citations:
        say(f"    citation {cite.kind} -> {cite.source}")


def anthropic_web_search(say: Say) -> bool:
    weather = demo_tool("get_weather", lambda city: WEATHER, "Current weather for a city.", CITY)
    hosted = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]
    question = "Is the Louvre open today, and what is the weather in Paris?"
    with MockServer(_anthropic_script()) as server:
        trace = run_loop(
            server,
            "anthropic_messages",
            question,
            tools=[weather],
            model="claude-demo",
            hosted_tools=hosted,
        )
        show(trace, say, details=_server_tools)
        done = script_done(server, say)
    first = trace.turns[0] if trace.turns else None
    return (
        done
        and trace.result.status == "final"
        and first is not None
        and [h.tool for h in first.hosted_calls] == ["web_search"]
        and len(first.citations) == 1
    )


# -- Gemini generateContent ---------------------------------------------------------------

HOSTED = {
    "search": {
        "queries": ["euro 2024 winner"],
        "results": [
            {"id": "uefa", "uri": "https://www.uefa.com/euro2024/", "domain": "uefa.com"},
            {
                "id": "wiki",
                "uri": "https://en.wikipedia.org/wiki/UEFA_Euro_2024",
                "title": "UEFA Euro 2024 - Wikipedia",
            },
        ],
    },
    "code": [{"code": "print(3 + 4 * 5)", "outcome": "OUTCOME_OK", "output": "23\n"}],
    "tool_use_tokens": 57,
}
ANSWER = (
    "Spain won Euro 2024, beating England 2–1 in Berlin.[[uefa,wiki]] "
    "It was their fourth European title.[[wiki]] And 3 + 4 × 5 = 23."
)


def _cited_bytes(turn: Any) -> bytes:
    """The answer part the grounding supports index, as UTF-8 (their ranges are bytes)."""
    parts = [p for p in turn.parts if type(p.get("text")) is str and not p.get("thought")]
    return parts[0]["text"].encode("utf-8") if parts else b""


def _grounding(turn: Any, say: Say) -> None:
    """The hosted calls, and each citation with the bytes its range covers."""
    for hosted in turn.hosted_calls:
        say(f"    hosted {hosted.tool}: status={hosted.status}")
    data = _cited_bytes(turn)
    for cite in turn.citations:
        quote = data[cite.start : cite.end].decode("utf-8")
        say(f"    [{cite.kind}] {cite.source} bytes {cite.start}-{cite.end}: {quote!r}")


def _exact(turn: Any) -> bool:
    data = _cited_bytes(turn)
    return all(
        data[c.start : c.end].decode("utf-8") == c.raw["segment"]["text"] for c in turn.citations
    )


def generate_content_grounded(say: Say) -> bool:
    b = ScriptBuilder(seed=2026)
    b.turn(
        "gemini_generate_content",
        expect={"model": "gemini-demo", "stream": True},
        text=ANSWER,
        hosted=HOSTED,
        chunking={"fixed": 12},
    )
    question = "Who won Euro 2024, and what is 3 + 4 × 5?"
    with MockServer(b.build()) as server:
        trace = run_loop(
            server,
            "gemini_generate_content",
            question,
            tools=[],
            model="gemini-demo",
            hosted_tools=[{"googleSearch": {}}, {"codeExecution": {}}],
        )
        show(trace, say, details=_grounding)
        done = script_done(server, say)
    turn = trace.turns[0] if trace.turns else None
    ok = turn is not None and len(turn.citations) == 3 and len(turn.hosted_calls) == 2
    if ok and not _exact(turn):
        say("    UNEXPECTED: the citations do not cover exactly the cited text")
        ok = False
    return done and trace.result.status == "final" and ok


SCENARIOS = [
    ("OpenAI Responses: web search, a cited call, a cited answer", openai_web_search),
    ("Anthropic Messages: web search with citations, then a client tool", anthropic_web_search),
    ("Gemini generateContent: a grounded answer with citations", generate_content_grounded),
]
