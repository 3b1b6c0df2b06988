"""``callgate demo``'s grounded generateContent answer: hosted tools and citations.

The mock plays a model that searched the web and ran code on the server side (scripted
results: callgate never searches or runs anything), streamed over HTTP. The strict parser
projects the turn: the hosted calls (the code execution with its outcome, each executed
search query), and one citation per grounding support and source, whose UTF-8 byte range
is checked to be exactly the cited text. Nothing is released for the host to execute.
"""

from __future__ import annotations

from typing import Any

import httpx

from . import gemini_generate_content as ggc
from ._demo_wire import stream_turn
from .mock import MockServer, ScriptBuilder

__all__ = ["scenario"]

MODEL = "gemini-demo"
QUESTION = "Who won Euro 2024, and what is 3 + 4 × 5?"
HOSTED = {
    "search": {
        "queries": ["euro 2024 winner"],
        "results": [
            {"id": "uefa", "uri": "https://www.uefa.com/euro2024/", "domain": "uefa.com"},
            {"id": "wiki", "uri": "https://en.wikipedia.org/wiki/UEFA_Euro_2024",
             "title": "UEFA Euro 2024 - Wikipedia"},
        ],
    },
    "code": [{"code": "print(3 + 4 * 5)", "outcome": "OUTCOME_OK", "output": "23\n"}],
    "tool_use_tokens": 57,
}  # fmt: skip
ANSWER = (
    "Spain won Euro 2024, beating England 2–1 in Berlin.[[uefa,wiki]] "
    "It was their fourth European title.[[wiki]] And 3 + 4 × 5 = 23."
)
TOOLS: list[dict[str, Any]] = [{"googleSearch": {}}, {"codeExecution": {}}]


def _server() -> MockServer:
    b = ScriptBuilder(seed=2026)
    b.turn("gemini_generate_content", expect={"model": MODEL, "stream": True},
           text=ANSWER, hosted=HOSTED, chunking={"fixed": 12})  # fmt: skip
    return MockServer(b.build())


def _post(client: httpx.Client, srv: MockServer) -> ggc.Turn:
    url = f"{srv.gemini_base_url}/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}], "tools": TOOLS}
    turn: ggc.Turn = stream_turn(client, url, body, {"x-goog-api-key": "demo"}, ggc.Parser())
    return turn


def _show(turn: ggc.Turn, say: Any) -> bool:
    say(f"  finishReason={turn.finish_reason}; gate released {len(turn.calls)} call(s)")
    for hosted in turn.hosted_calls:
        say(f"    hosted {hosted.tool}: status={hosted.status}")
    cited = [p for p in turn.parts if type(p.get("text")) is str and not p.get("thought")]
    data = cited[0]["text"].encode() if cited else b""
    exact = True
    for citation in turn.citations:
        quote = data[citation.start : citation.end].decode()
        exact &= quote == citation.raw["segment"]["text"]
        span = f"bytes {citation.start}-{citation.end}"
        say(f"    [{citation.kind}] {citation.source} {span}: {quote!r}")
    say(f"    answer: {turn.text}")
    return exact and not turn.calls and len(turn.citations) == 3 and len(turn.hosted_calls) == 2


def scenario(client: httpx.Client, _srv: MockServer, report: Any) -> None:
    """The demo scenario (its own mock server: a hosted-tool script)."""
    with _server() as srv:
        ok = _show(_post(client, srv), report.say)
        srv.assert_script_done()
    if not ok:
        report.failures += 1
        report.say("    UNEXPECTED: the citations do not cover exactly the cited text")
