"""`callgate demo`: the whole host tool loop against the embedded mock server, over HTTP.

Each scenario starts from a user request, strictly parses the provider's stream as it
arrives, releases calls only through the terminal gate, executes small local tools,
binds the results exactly, builds the continuation and repeats until the final answer.
The last scenarios are scripted to go wrong (truncated arguments, EOF before the
terminal) and pass only when the gate refuses to release anything.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from typing import Any

import httpx

from . import _demo_ggc, _demo_hosted_anthropic, _demo_hosted_gemini, _demo_hosted_openai
from . import anthropic_messages as am
from . import gemini_interactions as gi
from . import openai_responses as oai
from ._demo_wire import stream_turn
from ._errors import CallgateError
from ._results import ToolResult
from .mock import MockServer, Script, ScriptBuilder, call

__all__ = ["run_demo"]

QUESTION = "What is the weather in Paris, and what time is it in UTC?"
INSTRUCTIONS = "You are a concise assistant. Use tools for facts."


def _weather(city: str) -> dict[str, Any]:
    return {"city": city, "forecast": "sunny", "celsius": 21}


def _time(tz: str) -> dict[str, Any]:
    return {"tz": tz, "time": "12:00"}


TOOLS: dict[str, Callable[..., Any]] = {"get_weather": _weather, "get_time": _time}
SCHEMAS = {
    "get_weather": ("Current weather for a city.", {"city": {"type": "string"}}),
    "get_time": ("Current time in a time zone.", {"tz": {"type": "string"}}),
}
WEATHER = json.dumps(_weather("Paris"), separators=(",", ":"))
TIME = json.dumps(_time("UTC"), separators=(",", ":"))


def _schema(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


OPENAI_TOOLS = [
    {"type": "function", "name": n, "description": d, "parameters": _schema(p)}
    for n, (d, p) in SCHEMAS.items()
]
ANTHROPIC_TOOLS = [
    {"name": n, "description": d, "input_schema": _schema(p)} for n, (d, p) in SCHEMAS.items()
]
GEMINI_TOOLS = [
    {"type": "function", "name": n, "description": d, "parameters": _schema(p)}
    for n, (d, p) in SCHEMAS.items()
]
HEADERS = {
    "openai_responses": {"authorization": "Bearer demo"},
    "anthropic_messages": {"x-api-key": "demo", "anthropic-version": "2026-10-21"},
    "gemini_interactions": {"x-goog-api-key": "demo"},
}


def _script() -> Script:
    b = ScriptBuilder(seed=2026)
    both = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]
    results = [
        {"name": "get_weather", "output": WEATHER},
        {"name": "get_time", "output": TIME},
    ]
    final = "It is sunny and 21 °C in Paris; in UTC it is 12:00."
    reasoning = {"summary": "Two lookups are needed.", "signature": "b3BhcXVlLXNpZ25hdHVyZQ=="}
    for name, previous in (("openai-stateful", "previous"), ("openai-stateless", "absent")):
        b.turn(
            "openai_responses",
            conversation=name,
            expect={"model": "gpt-demo", "tools": list(TOOLS), "instructions": INSTRUCTIONS},
            reasoning=reasoning,
            calls=both,
            chunking="char",
            interleave="round_robin",
        )
        b.turn("openai_responses", conversation=name,
               expect={"previous_id": previous, "function_results": results,
                       "instructions": INSTRUCTIONS, "tools": list(TOOLS)},
               text=final, chunking={"fixed": 8})  # fmt: skip
    b.turn(
        "anthropic_messages",
        conversation="anthropic",
        expect={"model": "claude-demo", "tools": list(TOOLS), "system": INSTRUCTIONS},
        reasoning=reasoning,
        text="Let me look both up.",
        calls=both,
        chunking={"fixed": 3},
    )
    b.turn("anthropic_messages", conversation="anthropic",
           expect={"function_results": results, "system": INSTRUCTIONS, "tools": list(TOOLS)},
           text=final, chunking={"fixed": 8})  # fmt: skip
    for name, previous in (("gemini-stateful", "previous"), ("gemini-stateless", "absent")):
        b.turn(
            "gemini_interactions",
            conversation=name,
            expect={"model": "gemini-demo", "tools": list(TOOLS)},
            reasoning=reasoning,
            calls=both,
            chunking={"random": {"seed": 7, "max": 4}},
            interleave="round_robin",
        )
        b.turn("gemini_interactions", conversation=name,
               expect={"previous_id": previous, "function_results": results,
                       "tools": list(TOOLS)},
               text=final, chunking={"fixed": 8})  # fmt: skip
    # Scripted failures: the gate must refuse.
    b.turn(
        "openai_responses",
        conversation="openai-truncated",
        status="incomplete",
        calls=[{"name": "get_weather", "raw": '{"city": "Par'}],
        chunking={"fixed": 4},
    )
    b.turn(
        "anthropic_messages",
        conversation="anthropic-max-tokens",
        status="max_tokens",
        calls=[call("get_time", tz="UTC"), {"name": "get_weather", "raw": '{"city": "Pa'}],
        chunking={"fixed": 4},
    )
    b.turn("gemini_interactions", conversation="gemini-eof", calls=both,
           chunking="char", disconnect_after=20)  # fmt: skip
    _demo_ggc.add_turns(b)
    return b.build()


@dataclasses.dataclass
class _Report:
    lines: list[str] = dataclasses.field(default_factory=list)
    failures: int = 0

    def say(self, text: str) -> None:
        self.lines.append(text)
        print(text, flush=True)


def _execute(calls: Iterable[Any], report: _Report) -> list[ToolResult]:
    results = []
    for c in calls:
        try:
            output = json.dumps(TOOLS[c.name](**c.arguments), separators=(",", ":"))
            results.append(ToolResult(c.call_id, output))
        except Exception as exc:  # a tool's own failure goes back to the model as an error
            results.append(ToolResult(c.call_id, f"{type(exc).__name__}: {exc}", is_error=True))
        report.say(f"      ran {c.name}({json.dumps(c.arguments)}) -> {results[-1].output}")
    return results


def _stream(
    client: httpx.Client, url: str, body: dict[str, Any], protocol: str, conv: str, parser: Any
) -> Any:
    headers = {**HEADERS[protocol], "x-callgate-conversation": conv}
    return stream_turn(client, url, {**body, "stream": True}, headers, parser)


def _released(report: _Report, turn: Any) -> None:
    names = ", ".join(f"{c.name}[{c.call_id}]" for c in turn.calls) or "none"
    report.say(f"    gate released {len(turn.calls)} call(s): {names}")


def _openai(client: httpx.Client, srv: MockServer, report: _Report, stateless: bool) -> None:
    conv = "openai-stateless" if stateless else "openai-stateful"
    url = f"{srv.openai_base_url}/responses"
    prior = [{"role": "user", "content": QUESTION}]
    body: dict[str, Any] = {"model": "gpt-demo", "input": prior, "tools": OPENAI_TOOLS,
                            "instructions": INSTRUCTIONS, "store": not stateless}  # fmt: skip
    for hop in range(1, 5):
        turn = _stream(client, url, body, "openai_responses", conv, oai.Parser())
        report.say(f"  turn {hop}: response {turn.response_id} status={turn.status}")
        _released(report, turn)
        if not turn.calls:
            report.say(f"    final answer: {turn.text}")
            return
        results = _execute(turn.calls, report)
        common: dict[str, Any] = {
            "model": "gpt-demo",
            "instructions": INSTRUCTIONS,
            "tools": OPENAI_TOOLS,
        }
        if stateless:
            body = oai.build_stateless_continuation(
                turn, results, prior_input_items=prior, store=False, **common
            )
            prior = body["input"]
            report.say(f"    continuation: stateless, {len(prior)} input items replayed")
        else:
            body = oai.build_stateful_continuation(
                turn, results, previous_response_was_stored=True, store=True, **common
            )
            report.say(f"    continuation: stateful, previous_response_id={turn.response_id}")
    raise RuntimeError("no final answer after 4 turns")


def _anthropic(client: httpx.Client, srv: MockServer, report: _Report) -> None:
    url = f"{srv.anthropic_base_url}/v1/messages"
    history: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    common: dict[str, Any] = {"model": "claude-demo", "max_tokens": 1024, "tools": ANTHROPIC_TOOLS,
              "system": INSTRUCTIONS}  # fmt: skip
    body: dict[str, Any] = {**common, "messages": history}
    for hop in range(1, 5):
        turn = _stream(client, url, body, "anthropic_messages", "anthropic", am.Parser())
        report.say(f"  turn {hop}: message {turn.message_id} stop_reason={turn.stop_reason}")
        _released(report, turn)
        if not turn.calls:
            text = "".join(b.get("text", "") for b in turn.content if b.get("type") == "text")
            report.say(f"    final answer: {text}")
            return
        results = _execute(turn.calls, report)
        body = am.build_continuation(turn, results, history=history, **common)
        history = body["messages"]
        kept = [b["type"] for b in history[-2]["content"]]
        report.say(f"    continuation: full history, assistant blocks replayed {kept}")
    raise RuntimeError("no final answer after 4 turns")


def _gemini(client: httpx.Client, srv: MockServer, report: _Report, stateless: bool) -> None:
    conv = "gemini-stateless" if stateless else "gemini-stateful"
    url = f"{srv.gemini_base_url}/v1/interactions"
    prior = [{"type": "user_input", "content": [{"type": "text", "text": QUESTION}]}]
    body: dict[str, Any] = {"model": "gemini-demo", "input": prior, "tools": GEMINI_TOOLS,
                            "store": not stateless}  # fmt: skip
    for hop in range(1, 5):
        turn = _stream(client, url, body, "gemini_interactions", conv, gi.Parser())
        report.say(f"  turn {hop}: interaction {turn.interaction_id} status={turn.status}")
        _released(report, turn)
        if not turn.calls:
            text = "".join(
                c.get("text", "")
                for s in turn.steps
                if s.get("type") == "model_output"
                for c in s.get("content", [])
            )
            report.say(f"    final answer: {text}")
            return
        results = _execute(turn.calls, report)
        if stateless:
            body = gi.build_stateless_continuation(
                turn, results, snapshot_source=turn.origin, prior_input_steps=prior,
                model="gemini-demo", tools=GEMINI_TOOLS,
            )  # fmt: skip
            prior = body["input"]
            report.say(f"    continuation: stateless, {len(prior)} steps replayed")
        else:
            body = gi.build_stateful_continuation(
                turn, results, previous_interaction_was_stored=True, store=True,
                model="gemini-demo", tools=GEMINI_TOOLS,
            )  # fmt: skip
            report.say(f"    continuation: stateful, previous_interaction_id={turn.interaction_id}")
    raise RuntimeError("no final answer after 4 turns")


def _refusal(client: httpx.Client, srv: MockServer, report: _Report, which: str) -> None:
    if which == "openai-truncated":
        parser: Any = oai.Parser()
        url, protocol = f"{srv.openai_base_url}/responses", "openai_responses"
        body: dict[str, Any] = {"model": "gpt-demo", "input": QUESTION, "tools": OPENAI_TOOLS}
    elif which == "anthropic-max-tokens":
        url, protocol, parser = (
            f"{srv.anthropic_base_url}/v1/messages",
            "anthropic_messages",
            am.Parser(),
        )
        body = {"model": "claude-demo", "max_tokens": 16, "tools": ANTHROPIC_TOOLS,
                "messages": [{"role": "user", "content": QUESTION}]}  # fmt: skip
    else:
        url, protocol, parser = (
            f"{srv.gemini_base_url}/v1/interactions",
            "gemini_interactions",
            gi.Parser(),
        )
        body = {"model": "gemini-demo", "input": QUESTION, "tools": GEMINI_TOOLS}
    try:
        turn = _stream(client, url, body, protocol, which, parser)
    except CallgateError as exc:
        report.say(f"    gate refused: {type(exc).__name__}: {exc.message}")
        return
    recovery = getattr(turn, "recovery_calls", ())
    if not turn.calls and recovery:
        names = ", ".join(f"{r.name}[{r.call_id}]" for r in recovery)
        report.say(
            f"    gate released 0 calls; stop_reason={turn.stop_reason}, "
            f"{len(recovery)} call(s) held for recovery (answered with is_error): {names}"
        )
        return
    report.failures += 1
    report.say(f"    UNEXPECTED: the gate released {len(turn.calls)} call(s)")


def _ggc(which: str) -> Callable[[httpx.Client, MockServer, _Report], None]:
    def scenario(client: httpx.Client, srv: MockServer, report: _Report) -> None:
        if which == "loop":
            ok = _demo_ggc.loop(client, srv, report.say, lambda calls: _execute(calls, report))
        else:
            ok = _demo_ggc.max_tokens(client, srv, report.say)
        report.failures += not ok

    return scenario


def _on_loop(name: str) -> Callable[[httpx.Client, MockServer, _Report], None]:
    """A scenario of ``_demo_loop`` (the host loop over the ledger, its own mock server)."""

    def scenario(client: httpx.Client, srv: MockServer, report: _Report) -> None:
        from . import _demo_loop as _scenarios

        if not getattr(_scenarios, name)(report.say):
            report.failures += 1
            report.say("    UNEXPECTED: the scenario did not end as the ledger promises")

    return scenario


SCENARIOS: list[tuple[str, Callable[[httpx.Client, MockServer, _Report], None]]] = [
    ("OpenAI Responses, stateful (previous_response_id)",
     lambda c, s, r: _openai(c, s, r, stateless=False)),
    ("OpenAI Responses, stateless (store=false, full item replay)",
     lambda c, s, r: _openai(c, s, r, stateless=True)),
    ("Anthropic Messages (full-history replay)", _anthropic),
    ("Gemini Interactions v1, stateful (previous_interaction_id)",
     lambda c, s, r: _gemini(c, s, r, stateless=False)),
    ("Gemini Interactions v1, stateless (canonical step array)",
     lambda c, s, r: _gemini(c, s, r, stateless=True)),
    ("OpenAI Responses: response.incomplete in the middle of a call's arguments",
     lambda c, s, r: _refusal(c, s, r, "openai-truncated")),
    ("Anthropic Messages: max_tokens in the middle of a tool_use input",
     lambda c, s, r: _refusal(c, s, r, "anthropic-max-tokens")),
    ("Gemini Interactions v1: connection closed before interaction.completed",
     lambda c, s, r: _refusal(c, s, r, "gemini-eof")),
    ("Gemini generateContent, stateless (full replay, thought signature on its part)",
     _ggc("loop")),
    ("Gemini generateContent: MAX_TOKENS in the middle of the turn", _ggc("max_tokens")),
    ("Host loop + ledger: SIGKILL after a refund applied, before its result was sent",
     _on_loop("crash_scenario")),
    ("Host loop + ledger: an approval-gated tool", _on_loop("approval_scenario")),
    ("OpenAI Responses: web search, a cited call, a cited answer", _demo_hosted_openai.scenario),
    ("Anthropic Messages: web search with citations, then a client tool", _demo_hosted_anthropic.scenario),  # noqa: E501
    ("Gemini generateContent: a grounded answer with citations", _demo_hosted_gemini.scenario),
]  # fmt: skip


def run_demo() -> int:
    """Run every scenario; 0 when all ended as expected, 1 otherwise."""
    report = _Report()
    script = _script()
    with MockServer(script) as server, httpx.Client(timeout=30) as client:
        report.say(f"callgate demo: mock provider on {server.url}\n")
        for number, (title, scenario) in enumerate(SCENARIOS, 1):
            report.say(f"[{number}/{len(SCENARIOS)}] {title}")
            try:
                scenario(client, server, report)
            except Exception as exc:  # report and go on: the summary says what failed
                report.failures += 1
                report.say(f"    FAILED: {type(exc).__name__}: {exc}")
            report.say("")
        for mismatch in server.mismatches:
            report.failures += 1
            report.say(f"server recorded a mismatch: {'; '.join(mismatch.problems)}")
        left = {k: v for k, v in server.state.remaining().items() if v}
        if left:
            report.failures += 1
            report.say(f"scripted turns never requested: {left}")
    if report.failures:
        report.say(f"demo FAILED: {report.failures} scenario(s) did not end as expected")
        return 1
    report.say(f"demo passed: all {len(SCENARIOS)} scenarios ended as expected")
    return 0
