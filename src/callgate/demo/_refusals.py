"""``callgate demo``'s turns scripted to go wrong: each passes only when the gate refuses
the turn and the ledger holds no effect (nothing ran).

- OpenAI Responses: ``response.incomplete`` while a call's arguments are half sent.
- Anthropic Messages: ``max_tokens`` in the middle of a ``tool_use`` input; the complete
  call of that turn is held for recovery, not released.
- Gemini Interactions: the connection closes before ``interaction.completed``.
- Gemini generateContent: ``MAX_TOKENS`` on a turn whose one call is complete.
"""

from __future__ import annotations

from typing import Any

from ..mock import MockServer, ScriptBuilder, call
from ._kit import Say, run_loop, script_done, show, tool_specs

__all__ = ["SCENARIOS"]

QUESTION = "What is the weather in Paris, and what time is it in UTC?"
BOTH = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]


def _refused(protocol: str, expected: str, say: Say, *, seed: int, **respond: Any) -> bool:
    """Serve one scripted turn; the run must end ``refused`` with ``expected`` and no effect."""
    model = {"openai_responses": "gpt-demo", "anthropic_messages": "claude-demo"}
    script = ScriptBuilder(seed=seed).turn(protocol, **respond).build()
    with MockServer(script) as server:
        trace = run_loop(
            server,
            protocol,
            QUESTION,
            tools=tool_specs(),
            model=model.get(protocol, "gemini-demo"),
            max_tokens=16,
        )
        show(trace, say)
        done = script_done(server, say)
    result = trace.result
    if result.status == "refused" and not result.effects:
        say("    the ledger holds no effect: nothing ran")
    got = type(result.error).__name__
    return done and result.status == "refused" and got == expected and not result.effects


def openai_incomplete(say: Say) -> bool:
    return _refused(
        "openai_responses",
        "ProviderError",
        say,
        seed=7,
        status="incomplete",
        calls=[{"name": "get_weather", "raw": '{"city": "Par'}],
        chunking={"fixed": 4},
    )


def anthropic_max_tokens(say: Say) -> bool:
    return _refused(
        "anthropic_messages",
        "TurnRefused",
        say,
        seed=8,
        status="max_tokens",
        calls=[call("get_time", tz="UTC"), {"name": "get_weather", "raw": '{"city": "Pa'}],
        chunking={"fixed": 4},
    )


def interactions_eof(say: Say) -> bool:
    return _refused(
        "gemini_interactions",
        "TruncatedStreamError",
        say,
        seed=9,
        calls=BOTH,
        chunking="char",
        disconnect_after=20,
    )


def generate_content_max_tokens(say: Say) -> bool:
    return _refused(
        "gemini_generate_content",
        "ProviderError",
        say,
        seed=10,
        status="MAX_TOKENS",
        calls=[call("get_time", tz="UTC")],
    )


SCENARIOS = [
    (
        "OpenAI Responses: response.incomplete in the middle of a call's arguments",
        openai_incomplete,
    ),
    ("Anthropic Messages: max_tokens in the middle of a tool_use input", anthropic_max_tokens),
    ("Gemini Interactions v1: connection closed before interaction.completed", interactions_eof),
    ("Gemini generateContent: MAX_TOKENS in the middle of the turn", generate_content_max_tokens),
]
