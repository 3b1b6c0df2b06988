"""What every ``callgate demo`` scenario shares: the demo's tools, one host-loop run over
a fresh ledger, and the run told turn by turn from what the ledger recorded.

A scenario is a function ``(say) -> bool``: it prints what happened through ``say`` and
returns whether the run ended as expected. Each runs :class:`~callgate.loop.HostLoop`
against a mock server of its own (its script is the scenario's) with a SQLite ledger in
a temporary directory, so a scenario that goes wrong cannot disturb the next one.

The account of a run comes from the ledger afterwards, not from the loop's insides: the
requests it recorded (what each continuation carried), the turns it persisted (their
snapshots, parsed again by the room's public parser) and the effects with their results.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import CallgateError, UsageError
from .._protocols import room
from ..ledger import EffectClass, EffectRecord, RequestRecord, Tool, ToolContext, open_ledger
from ..loop import HostLoop, LoopResult, ProviderHTTPError, ToolSpec
from ..mock import MockServer

__all__ = [
    "TOOLS",
    "Say",
    "Trace",
    "compact",
    "demo_tool",
    "http_client",
    "one_http_client",
    "refused",
    "released",
    "run_loop",
    "script_done",
    "show",
    "tool_specs",
]

Say = Callable[[str], None]
RUN = "demo"


def _weather(city: str) -> dict[str, Any]:
    return {"city": city, "forecast": "sunny", "celsius": 21}


def _time(tz: str) -> dict[str, Any]:
    return {"tz": tz, "time": "12:00"}


# The tools of the tool-loop scenarios, looked up when a call runs (a test swaps one to
# make the mock's expectation, and so the demo, fail).
TOOLS: dict[str, Callable[..., Any]] = {"get_weather": _weather, "get_time": _time}
_DESCRIBED = {
    "get_weather": ("Current weather for a city.", {"city": {"type": "string"}}),
    "get_time": ("Current time in a time zone.", {"tz": {"type": "string"}}),
}


def compact(value: Any) -> str:
    """A tool's output as the model sees it: compact JSON."""
    return json.dumps(value, separators=(",", ":"))


def demo_tool(
    name: str, fn: Callable[..., Any], description: str, properties: Mapping[str, Any]
) -> ToolSpec:
    """A read-only ledger tool calling ``fn(**arguments)``; its output is compact JSON."""

    def run(arguments: Any, _ctx: ToolContext) -> str:
        return compact(fn(**arguments))

    schema = {"type": "object", "properties": dict(properties), "required": sorted(properties)}
    tool = Tool(name, run, effect=EffectClass.READ)
    return ToolSpec(tool, description=description, parameters=schema)


def tool_specs() -> list[ToolSpec]:
    """``get_weather`` and ``get_time``, each calling what :data:`TOOLS` holds at run time."""
    return [
        demo_tool(name, _current(name), description, props)
        for name, (description, props) in _DESCRIBED.items()
    ]


def _current(name: str) -> Callable[..., Any]:
    return lambda **arguments: TOOLS[name](**arguments)


_BASE_URL = {
    "openai_responses": "openai_base_url",
    "anthropic_messages": "anthropic_base_url",
    "gemini_interactions": "gemini_base_url",
    "gemini_generate_content": "gemini_base_url",
    "openai_chat_completions": "openai_base_url",
}


_CLIENT: contextvars.ContextVar[Any] = contextvars.ContextVar("callgate_demo_client", default=None)


@contextlib.contextmanager
def one_http_client() -> Iterator[None]:
    """One ``httpx.Client`` for every loop of the scenarios run inside: a client of its
    own per loop would build a TLS context each time (tens of ms) for a plain-HTTP mock."""
    import httpx

    with httpx.Client(timeout=60) as client:
        token = _CLIENT.set(client)
        try:
            yield
        finally:
            _CLIENT.reset(token)


def http_client() -> Any:
    """The client :func:`one_http_client` opened, or None (each loop opens its own)."""
    return _CLIENT.get()


@dataclasses.dataclass(frozen=True, slots=True)
class Trace:
    """What the ledger holds of one run, read back after it."""

    protocol: str
    result: LoopResult
    requests: tuple[RequestRecord, ...]
    turns: tuple[Any, ...]  # the persisted turns, parsed again from their snapshots

    def effects(self, turn_seq: int) -> list[EffectRecord]:
        return [e for e in self.result.effects if e.turn_seq == turn_seq]

    def continuation(self, turn_seq: int) -> RequestRecord | None:
        return next((r for r in self.requests if r.carries_turn == turn_seq), None)


def run_loop(
    server: MockServer, protocol: str, request: Any, *, tools: Sequence[ToolSpec], **options: Any
) -> Trace:
    """Run the host loop once over a new SQLite ledger; ``options`` go to HostLoop."""
    base_url = getattr(server, _BASE_URL[protocol])
    with tempfile.TemporaryDirectory(prefix="callgate-demo-") as tmp:
        db = f"sqlite:///{Path(tmp) / 'ledger.db'}"
        with open_ledger(db) as ledger:
            with HostLoop(
                protocol=protocol,
                base_url=base_url,
                api_key="demo",
                ledger=ledger,
                tools=tools,
                client=http_client(),
                **options,
            ) as loop:
                result = loop.run(RUN, request)
            turns = tuple(
                _parsed(protocol, ledger.turn_snapshot(RUN, seq))
                for seq in range(1, result.turns + 1)
            )
            return Trace(protocol, result, ledger.requests(RUN), turns)


def _parsed(protocol: str, snapshot: Mapping[str, Any]) -> Any:
    """A stored snapshot (the raw stream, a socket's events, or a body fetched back) as the
    room parses it."""
    module = room(protocol)
    if "body" in snapshot:
        return module.parse_response(snapshot["body"])
    if "events" in snapshot:  # a WebSocket's frames: the decoded events of one response
        parser = module.Parser()
        for event in snapshot["events"]:
            parser.feed_event(event)
        return parser.finish()
    return module.parse_stream(snapshot["sse"].encode("utf-8"))


def script_done(server: MockServer, say: Say) -> bool:
    """Whether the mock served every scripted turn and saw no request it did not expect."""
    try:
        server.assert_script_done()
    except UsageError as exc:
        say(f"    UNEXPECTED: {exc}")
        return False
    return True


# -- telling a run ------------------------------------------------------------------------


def _header(protocol: str, turn: Any) -> str:
    if protocol == "openai_responses":
        return f"response {turn.response_id} status={turn.status}"
    if protocol == "anthropic_messages":
        return f"message {turn.message_id} stop_reason={turn.stop_reason}"
    if protocol == "gemini_interactions":
        return f"interaction {turn.interaction_id} status={turn.status}"
    if protocol == "openai_chat_completions":
        return f"completion {turn.completion_id} finish_reason={turn.finish_reason}"
    return f"finishReason={turn.finish_reason}"


def _carried(protocol: str, body: Mapping[str, Any]) -> str:
    """What a recorded continuation carried, in one line."""
    if protocol == "openai_responses":
        if "previous_response_id" in body:
            return f"stateful, previous_response_id={body['previous_response_id']}"
        kinds = [item.get("type", "message") for item in body["input"]]
        return f"stateless, {len(kinds)} input items replayed {kinds}"
    if protocol == "anthropic_messages":
        kept = [block["type"] for block in body["messages"][-2]["content"]]
        return f"full history, assistant blocks replayed {kept}"
    if protocol == "gemini_interactions":
        if "previous_interaction_id" in body:
            return f"stateful, previous_interaction_id={body['previous_interaction_id']}"
        return f"stateless, {len(body['input'])} steps replayed"
    if protocol == "openai_chat_completions":
        roles = [message["role"] for message in body["messages"]]
        return f"full history, {len(roles)} messages replayed {roles}"
    contents = body["body"]["contents"]
    signed = sum("thoughtSignature" in part for part in contents[-2]["parts"])
    return f"full replay, {len(contents)} contents; {signed} thought signature(s) on their part"


def released(turn: Any) -> str:
    names = ", ".join(f"{c.name}[{c.call_id}]" for c in turn.calls) or "none"
    return f"gate released {len(turn.calls)} call(s): {names}"


def show(
    trace: Trace,
    say: Say,
    *,
    details: Callable[[Any, Say], None] | None = None,
    final: str = "final answer",
) -> None:
    """Tell the run: per turn, what the gate released, what ran, what the continuation
    carried; then the answer, or why the gate refused. ``details`` adds a turn's own lines
    (hosted calls, citations)."""
    for seq, turn in enumerate(trace.turns, 1):
        say(f"  turn {seq}: {_header(trace.protocol, turn)}")
        if details is not None:
            details(turn, say)
        say(f"    {released(turn)}")
        for effect in trace.effects(seq):
            output = effect.result.output if effect.result is not None else effect.state.value
            say(f"      ran {effect.tool}({json.dumps(effect.arguments)}) -> {output}")
        request = trace.continuation(seq)
        if request is not None:
            say(f"    continuation: {_carried(trace.protocol, request.body)}")
    result = trace.result
    if result.status == "final":
        say(f"    {final}: {result.text}")
    elif result.status == "refused" and isinstance(result.error, CallgateError):
        refused(result.error, say)
    else:
        say(f"    run {result.status}: {result.detail}")


def refused(error: CallgateError, say: Say) -> None:
    """Why the gate refused the turn (or the provider the request), and the calls a
    refused Anthropic turn held back."""
    if isinstance(error, ProviderHTTPError):
        say(f"    request refused: {error.message}: {error.body[:300]}")
        return
    say(f"    gate refused: {type(error).__name__}: {error.message}")
    held = getattr(getattr(error, "turn", None), "recovery_calls", ())
    if held:
        names = ", ".join(f"{c.name}[{c.call_id}]" for c in held)
        say(f"    {len(held)} call(s) held for recovery, none released: {names}")
