"""``callgate demo``'s Gemini generateContent scenarios: a stateless tool loop whose thought
signature is replayed on its exact part, and a ``MAX_TOKENS`` turn the gate refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from . import gemini_generate_content as ggc
from ._demo_wire import stream_turn
from ._errors import CallgateError
from ._results import ToolResult
from .mock import MockServer, ScriptBuilder, call

MODEL = "gemini-demo"
SIGNATURE = "ZGVtby10aG91Z2h0LXNpZ25hdHVyZQ=="  # opaque to callgate, replayed byte-exact
QUESTION = "What is the weather in Paris, and what time is it in UTC?"
DECLARATIONS = [
    {"name": "get_weather", "parameters": {"type": "OBJECT",
                                           "properties": {"city": {"type": "STRING"}}}},
    {"name": "get_time", "parameters": {"type": "OBJECT",
                                        "properties": {"tz": {"type": "STRING"}}}},
]  # fmt: skip
TOOLS = [{"functionDeclarations": DECLARATIONS}]


def add_turns(b: ScriptBuilder) -> None:
    """The scripted provider side of both scenarios."""
    both = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]
    reasoning = {"summary": "Two lookups are needed.", "signature": SIGNATURE}
    b.turn("gemini_generate_content", conversation="ggc-loop", expect={"model": MODEL},
           reasoning=reasoning, calls=both)  # fmt: skip
    b.turn("gemini_generate_content", conversation="ggc-loop", expect={"model": MODEL},
           text="It is sunny and 21 °C in Paris; in UTC it is 12:00.")  # fmt: skip
    b.turn("gemini_generate_content", conversation="ggc-max-tokens", status="MAX_TOKENS",
           calls=[call("get_time", tz="UTC")])  # fmt: skip


def _post(client: httpx.Client, srv: MockServer, conv: str, body: dict[str, Any]) -> ggc.Turn:
    url = f"{srv.gemini_base_url}/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    headers = {"x-goog-api-key": "demo", "x-callgate-conversation": conv}
    turn: ggc.Turn = stream_turn(client, url, body, headers, ggc.Parser())
    return turn


def loop(
    client: httpx.Client,
    srv: MockServer,
    say: Callable[[str], None],
    execute: Callable[[Any], list[ToolResult]],
) -> bool:
    """Full replay each hop: the history, the model turn as received, the results."""
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": QUESTION}]}]
    body: dict[str, Any] = {"contents": history, "tools": TOOLS}
    for hop in range(1, 4):
        turn = _post(client, srv, "ggc-loop", body)
        names = ", ".join(f"{c.name}[{c.call_id}]" for c in turn.calls) or "none"
        say(f"  turn {hop}: finishReason={turn.finish_reason}")
        say(f"    gate released {len(turn.calls)} call(s): {names}")
        if not turn.calls:
            say(f"    final answer: {turn.text}")
            return True
        signed = [p for p in turn.parts if "thoughtSignature" in p]
        say(f"    {len(signed)} part(s) carry a thought signature, replayed on the same part")
        request = ggc.build_continuation(
            turn, execute(turn.calls), history=history, model=MODEL, tools=TOOLS,
            tool_config=None, system_instruction=None, generation_config=None,
            safety_settings=None,
        )  # fmt: skip
        body = request["body"]
        history = body["contents"]
        say(f"    continuation: full replay, {len(history)} contents")
    say("    UNEXPECTED: no final answer after 3 turns")
    return False


def max_tokens(client: httpx.Client, srv: MockServer, say: Callable[[str], None]) -> bool:
    """A complete call in a turn that stopped at MAX_TOKENS is never released."""
    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}], "tools": TOOLS}
    try:
        turn = _post(client, srv, "ggc-max-tokens", body)
    except CallgateError as exc:
        say(f"    gate refused: {type(exc).__name__}: {exc.message}")
        return True
    say(f"    UNEXPECTED: the gate released {json.dumps([c.name for c in turn.calls])}")
    return False
