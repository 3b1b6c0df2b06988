"""``callgate demo``'s tool loops: the same question on every protocol, two tool calls in
one turn, each continuation mode the protocol has, and the final answer.

Each runs :class:`~callgate.loop.HostLoop` to the end: the strict parser reads the stream
as it arrives, the gate releases the calls at the terminal event, the ledger runs each
once and the continuation is built from its results. The mock's ``expect`` checks refuse
a continuation whose results differ from what the tools returned, or a stateful one that
does not name the previous turn (a stateless one that does).
"""

from __future__ import annotations

from typing import Any

from ..mock import MockServer, Script, ScriptBuilder, call
from ._kit import Say, compact, run_loop, script_done, show, tool_specs

__all__ = ["SCENARIOS"]

QUESTION = "What is the weather in Paris, and what time is it in UTC?"
INSTRUCTIONS = "You are a concise assistant. Use tools for facts."
FINAL = "It is sunny and 21 °C in Paris; in UTC it is 12:00."
TOOL_NAMES = ["get_weather", "get_time"]
BOTH = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]
# What the model must get back: the tools' outputs as the demo's tools compute them.
RESULTS = [
    {
        "name": "get_weather",
        "output": compact({"city": "Paris", "forecast": "sunny", "celsius": 21}),
    },
    {"name": "get_time", "output": compact({"tz": "UTC", "time": "12:00"})},
]
REASONING = {"summary": "Two lookups are needed.", "signature": "b3BhcXVlLXNpZ25hdHVyZQ=="}
SIGNATURE = "ZGVtby10aG91Z2h0LXNpZ25hdHVyZQ=="  # opaque to callgate, replayed byte-exact


def _openai(store: bool, seed: int | None = None) -> Script:
    # A seed per scenario: ids differ between them.
    b = ScriptBuilder(seed=seed if seed is not None else 1 if store else 2)
    b.turn(
        "openai_responses",
        expect={"model": "gpt-demo", "tools": TOOL_NAMES, "instructions": INSTRUCTIONS},
        reasoning=REASONING,
        calls=BOTH,
        chunking="char",
        interleave="round_robin",
    )
    b.turn(
        "openai_responses",
        expect={
            "previous_id": "previous" if store else "absent",
            "function_results": RESULTS,
            "instructions": INSTRUCTIONS,
            "tools": TOOL_NAMES,
        },
        text=FINAL,
        chunking={"fixed": 8},
    )
    return b.build()


def _anthropic() -> Script:
    b = ScriptBuilder(seed=3)
    b.turn(
        "anthropic_messages",
        expect={"model": "claude-demo", "tools": TOOL_NAMES, "system": INSTRUCTIONS},
        reasoning=REASONING,
        text="Let me look both up.",
        calls=BOTH,
        chunking={"fixed": 3},
    )
    b.turn(
        "anthropic_messages",
        expect={"function_results": RESULTS, "system": INSTRUCTIONS, "tools": TOOL_NAMES},
        text=FINAL,
        chunking={"fixed": 8},
    )
    return b.build()


def _interactions(store: bool) -> Script:
    b = ScriptBuilder(seed=4 if store else 5)
    b.turn(
        "gemini_interactions",
        expect={"model": "gemini-demo", "tools": TOOL_NAMES},
        reasoning=REASONING,
        calls=BOTH,
        chunking={"random": {"seed": 7, "max": 4}},
        interleave="round_robin",
    )
    b.turn(
        "gemini_interactions",
        expect={
            "previous_id": "previous" if store else "absent",
            "function_results": RESULTS,
            "tools": TOOL_NAMES,
        },
        text=FINAL,
        chunking={"fixed": 8},
    )
    return b.build()


def _generate_content() -> Script:
    b = ScriptBuilder(seed=6)
    b.turn(
        "gemini_generate_content",
        expect={"model": "gemini-demo"},
        reasoning={"summary": "Two lookups are needed.", "signature": SIGNATURE},
        calls=BOTH,
    )
    b.turn("gemini_generate_content", expect={"model": "gemini-demo"}, text=FINAL)
    return b.build()


def _chat_completions() -> Script:
    b = ScriptBuilder(seed=8)
    b.turn(
        "openai_chat_completions",
        expect={"model": "gpt-demo", "tools": TOOL_NAMES, "instructions": INSTRUCTIONS},
        calls=BOTH,
        chunking={"fixed": 3},
        interleave="round_robin",
    )
    b.turn(
        "openai_chat_completions",
        expect={"function_results": RESULTS, "instructions": INSTRUCTIONS, "tools": TOOL_NAMES},
        text=FINAL,
        chunking={"fixed": 8},
    )
    return b.build()


def _loop(protocol: str, script: Script, say: Say, **options: Any) -> bool:
    """Two turns: both calls released and run once each, then the final answer."""
    with MockServer(script) as server:
        trace = run_loop(server, protocol, QUESTION, tools=tool_specs(), **options)
        show(trace, say)
        done = script_done(server, say)
    ran = [e.tool for e in trace.result.effects]
    return done and trace.result.status == "final" and ran == TOOL_NAMES


def openai_stateful(say: Say) -> bool:
    return _loop(
        "openai_responses",
        _openai(store=True),
        say,
        model="gpt-demo",
        store=True,
        instructions=INSTRUCTIONS,
    )


def openai_stateless(say: Say) -> bool:
    return _loop(
        "openai_responses",
        _openai(store=False),
        say,
        model="gpt-demo",
        store=False,
        instructions=INSTRUCTIONS,
    )


def openai_websocket(say: Say) -> bool:
    """The stateless loop again, over one WebSocket: each request a response.create frame,
    each response read by the room's connection parser."""
    with MockServer(_openai(store=False, seed=9)) as server:
        trace = run_loop(
            server,
            "openai_responses",
            QUESTION,
            tools=tool_specs(),
            model="gpt-demo",
            store=False,
            instructions=INSTRUCTIONS,
            transport="websocket",
        )
        show(trace, say)
        done = script_done(server, say)
        entries = server.journal.entries()
    sockets = {e.connection for e in entries}
    frames = [e.body.get("type") for e in entries]
    say(f"    socket: {len(frames)} frame(s) {sorted(set(frames))} on {len(sockets)} connection")
    ran = [e.tool for e in trace.result.effects]
    one_socket = len(sockets) == 1 and frames == ["response.create"] * 2
    return done and one_socket and trace.result.status == "final" and ran == TOOL_NAMES


def anthropic(say: Say) -> bool:
    return _loop(
        "anthropic_messages", _anthropic(), say, model="claude-demo", instructions=INSTRUCTIONS
    )


def interactions_stateful(say: Say) -> bool:
    return _loop(
        "gemini_interactions", _interactions(store=True), say, model="gemini-demo", store=True
    )


def interactions_stateless(say: Say) -> bool:
    return _loop(
        "gemini_interactions", _interactions(store=False), say, model="gemini-demo", store=False
    )


def generate_content(say: Say) -> bool:
    return _loop("gemini_generate_content", _generate_content(), say, model="gemini-demo")


def chat_completions(say: Say) -> bool:
    return _loop(
        "openai_chat_completions",
        _chat_completions(),
        say,
        model="gpt-demo",
        instructions=INSTRUCTIONS,
    )


SCENARIOS = [
    ("OpenAI Responses, stateful (previous_response_id)", openai_stateful),
    ("OpenAI Responses, stateless (store=false, full item replay)", openai_stateless),
    ("OpenAI Responses over WebSocket (one socket, response.create frames)", openai_websocket),
    ("Anthropic Messages (full-history replay)", anthropic),
    ("Gemini Interactions v1, stateful (previous_interaction_id)", interactions_stateful),
    ("Gemini Interactions v1, stateless (canonical step array)", interactions_stateless),
    (
        "Gemini generateContent, stateless (full replay, thought signature on its part)",
        generate_content,
    ),
    (
        "OpenAI Chat Completions, stateless (full history, one tool message per call)",
        chat_completions,
    ),
]
