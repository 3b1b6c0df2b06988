"""Official SDK conformance: the unmodified SDKs against the mock server over a real socket.

Every scripted scenario (text only; one call; three parallel calls interleaved; a
zero-argument call; a multi-turn tool loop; reasoning/thinking/thought replayed) is driven
through every SDK path (OpenAI ``responses.create(stream=True)``, the ``responses.stream()``
helper, non-streaming ``create``, and the plain client on the Azure v1 route; Anthropic
``messages.stream()``, ``create`` and ``create(stream=True)``; google-genai
``interactions.create`` streaming and not), with strict response validation on wherever the
SDK has it (openai, anthropic). Per turn:

- the SDK decodes the response without error;
- callgate's parser, fed the very bytes that left the server, releases the same calls
  (call id, name, arguments), text and signatures as the SDK objects hold, and the same as
  the script says;
- for a raw SDK stream, feeding the SDK's event objects to ``Parser.feed_event`` gives the
  same turn as the bytes;
- the next request is built by callgate's continuation builder, sent through the SDK, and
  must satisfy the next turn's ``expect`` (the mock answers 400 otherwise).

The same module runs against the current SDKs and the 2026-07-21 baseline SDKs; the
installed generation picks the script's and the parsers' contract baseline.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import anthropic
import openai
import pytest
from google import genai

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.contracts import REVISIONS, get_baseline
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.sse import SSEDecoder

from .conftest import Exchange, RecordingApp, conversation_problems, recording_mock_server

# -- SDK generation -> contract baseline ------------------------------------------------------


def _installed_revision(protocol: str) -> str:
    """The contract revision whose SDK release has the installed SDK's major version."""
    sdk = get_baseline(protocol).sdk_name
    installed = importlib.metadata.version(sdk)
    for revision in REVISIONS:
        pinned = get_baseline(protocol, revision).sdk_version
        if pinned.split(".")[0] == installed.split(".")[0]:
            return revision
    raise RuntimeError(f"{sdk} {installed} belongs to no contract baseline in {REVISIONS}")


PROTOCOLS = ("openai_responses", "anthropic_messages", "gemini_interactions")
BASELINE = {protocol: _installed_revision(protocol) for protocol in PROTOCOLS}


# -- scenarios --------------------------------------------------------------------------------

MODEL = "callgate-conformance-model"
INSTRUCTIONS = "Answer briefly."
USER_TEXT = "What is the weather in Paris right now?"
# Opaque, base64-like, with the characters a careless re-encoding would touch.
SIGNATURE = "EqQBCkgIBxABGAIqQG+/vT0c2lnbmF0dXJl/w==+Zürich"

TOOL_SPECS = {
    "get_weather": {"city": "string", "unit": "string"},
    "get_time": {"tz": "string"},
    "get_news": {"topic": "string", "limit": "integer"},
    "now": {},
}
TOOL_NAMES = sorted(TOOL_SPECS)


def _schema(fields: Mapping[str, str]) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()}}


@dataclasses.dataclass(frozen=True)
class Step:
    """One scripted model turn and the results the host answers its calls with."""

    respond: Mapping[str, Any]
    results: tuple[tuple[str, Any, bool], ...] = ()  # (function name, output, is_error)

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [(c["name"], c["arguments"]) for c in self.respond.get("calls", ())]


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    stateless: bool = False  # continue by full replay instead of a previous id

    def __str__(self) -> str:
        return self.name


PARALLEL = (
    call("get_weather", city="Paris", unit="celsius"),
    call("get_time", tz="Europe/Paris"),
    call("get_news", topic="weather", limit=3),
)
TOOL_LOOP = (
    Step(
        {
            "text": "Let me check.",
            "calls": [call("get_weather", city="Paris")],
            "chunking": {"fixed": 2},
        },
        results=(("get_weather", {"sky": "clear", "celsius": 21}, False),),
    ),
    Step(
        {
            "calls": [call("get_time", tz="Europe/Paris"), call("now")],
            "chunking": {"random": {"seed": 7, "max": 5}},
            "interleave": "round_robin",
        },
        results=(("get_time", "12:00", False), ("now", "clock unavailable", True)),
    ),
    Step({"text": "Clear and 21 °C in Paris at noon.", "chunking": "char"}),
)
SCENARIOS = (
    Scenario("text_only", (Step({"text": "Sunny in Paris, 21 °C.", "chunking": "char"}),)),
    Scenario(
        "one_call",
        (
            Step(
                {
                    "calls": [call("get_weather", city="Paris", unit="celsius")],
                    "chunking": {"fixed": 3},
                }
            ),
        ),
    ),
    Scenario(
        "parallel_interleaved",
        (
            Step(
                {"calls": list(PARALLEL), "chunking": "char", "interleave": "round_robin"},
                results=(
                    ("get_weather", "sunny", False),
                    ("get_time", {"time": "12:00"}, False),
                    ("get_news", {"items": []}, False),
                ),
            ),
            Step({"text": "Sunny at noon; no news.", "chunking": {"fixed": 4}}),
        ),
    ),
    Scenario("zero_arguments", (Step({"calls": [call("now")], "chunking": "char"}),)),
    Scenario("tool_loop", TOOL_LOOP),
    Scenario("tool_loop_replayed", TOOL_LOOP, stateless=True),
    Scenario(
        "reasoning_replayed",
        (
            Step(
                {
                    "reasoning": {"summary": "Weather first, then answer.", "signature": SIGNATURE},
                    "calls": [call("get_weather", city="Zürich")],
                    "chunking": "char",
                },
                results=(("get_weather", "snow", False),),
            ),
            Step({"text": "Snow in Zürich.", "chunking": "whole"}),
        ),
        stateless=True,
    ),
)
# Anthropic has no previous-id continuation: a "replayed" tool loop is the tool loop again.
ANTHROPIC_SCENARIOS = tuple(s for s in SCENARIOS if s.name != "tool_loop_replayed")

OPENAI_MODES = ("create_stream", "stream_helper", "create", "azure_stream", "azure_create")
ANTHROPIC_MODES = ("stream_helper", "create_stream", "create")
GEMINI_MODES = ("create_stream", "create")
STREAMING = frozenset({"create_stream", "stream_helper", "azure_stream"})


def _conversation(scenario: Scenario, mode: str) -> str:
    return f"{scenario.name}/{mode}"


def _respond(protocol: str, step: Step) -> dict[str, Any]:
    respond = dict(step.respond)
    if protocol == "anthropic_messages":
        respond.pop("interleave", None)  # content blocks are strictly sequential
    return respond


def _results_expect(protocol: str, step: Step) -> list[dict[str, Any]]:
    expected = []
    for name, output, is_error in step.results:
        spec: dict[str, Any] = {"name": name, "output": output}
        if protocol != "openai_responses":  # function_call_output has no error flag
            spec["is_error"] = is_error
        expected.append(spec)
    return expected


def _script(protocol: str, scenarios: Sequence[Scenario], modes: Sequence[str]) -> Any:
    builder = ScriptBuilder(seed=6, baseline=BASELINE[protocol])
    instructions_key = "system" if protocol == "anthropic_messages" else "instructions"
    for scenario, mode in itertools.product(scenarios, modes):
        for k, step in enumerate(scenario.steps):
            expect: dict[str, Any] = {
                "model": MODEL,
                "tools": TOOL_NAMES,
                "stream": mode in STREAMING,
                instructions_key: INSTRUCTIONS,
            }
            if k == 0:
                expect["text_contains"] = "weather in Paris"
            else:
                expect["function_results"] = _results_expect(protocol, scenario.steps[k - 1])
            if protocol != "anthropic_messages":
                stateful = k > 0 and not scenario.stateless
                expect["previous_id"] = "previous" if stateful else "absent"
            builder.turn(
                protocol,
                expect=expect,
                conversation=_conversation(scenario, mode),
                **_respond(protocol, step),
            )
    return builder.build()


# -- what one side decoded, in one comparable shape --------------------------------------------


@dataclasses.dataclass(frozen=True)
class Decoded:
    """Calls (call id, name, arguments) in order, the answer text, the signatures."""

    calls: list[tuple[str, str, dict[str, Any]]]
    text: str
    signatures: list[str]


@dataclasses.dataclass
class Harness:
    server: MockServer
    recorder: RecordingApp
    protocol: str
    driven: set[str] = dataclasses.field(default_factory=set)

    @property
    def baseline(self) -> str:
        return BASELINE[self.protocol]


@dataclasses.dataclass(frozen=True)
class SdkView:
    """What the SDK decoded from one response, and its raw stream events (wire dicts)."""

    decoded: Decoded
    events: list[dict[str, Any]] | None  # None: not a raw event stream


def _results(protocol: str, turn_calls: Sequence[Any], step: Step) -> list[ToolResult]:
    """The host's answers, bound to the released calls by function name."""
    # OpenAI's function_call_output has no error flag: a failure is only its output text.
    by_name = {c.name: c.call_id for c in turn_calls}
    assert len(by_name) == len(turn_calls) == len(step.results)
    return [
        ToolResult(by_name[name], output, is_error and protocol != "openai_responses")
        for name, output, is_error in step.results
    ]


def _delta_keys(protocol: str, sse: bytes) -> list[Any]:
    """For each argument delta on the wire, in order, the key of the call it belongs to."""
    keys = []
    for event in SSEDecoder().feed(sse):
        obj = json.loads(event.data)
        if protocol == "openai_responses":
            if obj["type"] == "response.function_call_arguments.delta":
                keys.append(obj["item_id"])
        elif protocol == "anthropic_messages":
            if obj["type"] == "content_block_delta" and obj["delta"]["type"] == "input_json_delta":
                keys.append(obj["index"])
        elif obj["event_type"] == "step.delta" and obj["delta"]["type"] == "arguments_delta":
            keys.append(obj["index"])
    return keys


# -- OpenAI Responses -------------------------------------------------------------------------


class OpenAIDriver:
    protocol = "openai_responses"
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "type": "function",
            "name": name,
            "description": f"{name} tool",
            "parameters": _schema(fields),
        }
        for name, fields in TOOL_SPECS.items()
    ]

    def __init__(self, harness: Harness) -> None:
        self.h = harness

    @staticmethod
    def path(mode: str) -> str:
        azure = "/azure-openai" if mode.startswith("azure_") else ""
        return f"{azure}/openai/v1/responses"

    def client(self, mode: str, conversation: str) -> openai.OpenAI:
        base = self.h.server.openai_base_url
        if mode.startswith("azure_"):
            base = self.h.server.azure_openai_base_url
        return openai.OpenAI(
            base_url=base,
            api_key="test-key",
            max_retries=0,
            _strict_response_validation=True,
            default_headers={CONVERSATION: conversation},
        )

    def first_request(self, scenario: Scenario) -> dict[str, Any]:
        request = {
            "model": MODEL,
            "instructions": INSTRUCTIONS,
            "tools": self.tools,
            "input": [{"role": "user", "content": USER_TEXT}],
            "store": not scenario.stateless,
        }
        if scenario.stateless:
            request["include"] = ["reasoning.encrypted_content"]
        return request

    def send(self, client: openai.OpenAI, mode: str, request: dict[str, Any]) -> SdkView:
        if mode in ("create_stream", "azure_stream"):
            with client.responses.create(**request, stream=True) as stream:
                events = list(stream)
            assert events[-1].type == "response.completed"
            response = events[-1].response
            self._check_stream_events(events, response)
            return SdkView(self._decoded(response), [e.to_dict() for e in events])
        if mode == "stream_helper":
            with client.responses.stream(**request) as stream:
                events = list(stream)
                response = stream.get_final_response()
            assert events[-1].type == "response.completed"
            self._check_stream_events(events, response)
            return SdkView(self._decoded(response), None)
        return SdkView(self._decoded(client.responses.create(**request)), None)

    def _check_stream_events(self, events: Sequence[Any], response: Any) -> None:
        """The SDK's per-event view (deltas, ``.done``) agrees with its final Response."""
        for item in response.output:
            if item.type == "message":
                deltas = [
                    e.delta
                    for e in events
                    if e.type == "response.output_text.delta" and e.item_id == item.id
                ]
                assert "".join(deltas) == "".join(part.text for part in item.content)
            if item.type != "function_call":
                continue
            deltas = [
                e.delta
                for e in events
                if e.type == "response.function_call_arguments.delta" and e.item_id == item.id
            ]
            done = [
                e
                for e in events
                if e.type == "response.function_call_arguments.done" and e.item_id == item.id
            ]
            assert [e.arguments for e in done] == [item.arguments]
            assert "".join(deltas) == item.arguments
            # The 2026-07-21 SDK requires `name` on `.done`; from 2026-11 the wire omits it.
            name = item.name if self.h.baseline == "2026-07-21" else None
            assert [e.to_dict().get("name") for e in done] == [name]

    @staticmethod
    def _decoded(response: Any) -> Decoded:
        assert response.status == "completed"
        return Decoded(
            calls=[
                (item.call_id, item.name, json.loads(item.arguments))
                for item in response.output
                if item.type == "function_call"
            ],
            text=response.output_text,
            signatures=[i.encrypted_content for i in response.output if i.type == "reasoning"],
        )

    def parse(self, body: bytes, stream: bool) -> tuple[oai.Turn, Decoded]:
        if stream:
            turn = oai.parse_stream(body, baseline=self.h.baseline)
        else:
            turn = oai.parse_response(json.loads(body), baseline=self.h.baseline)
        assert turn.status == "completed"
        assert turn.baseline == self.h.baseline
        calls = [(c.call_id, c.name, c.arguments) for c in turn.calls]
        signatures = [item.get("encrypted_content") for item in turn.reasoning]
        return turn, Decoded(calls, turn.text, signatures)

    def feed(self, events: Sequence[dict[str, Any]]) -> oai.Turn:
        parser = oai.Parser(baseline=self.h.baseline)
        for event in events:
            parser.feed_event(event)
        return parser.finish()

    def continuation(
        self,
        turn: oai.Turn,
        results: list[ToolResult],
        request: dict[str, Any],
        scenario: Scenario,
        stream: bool,
    ) -> dict[str, Any]:
        head = {"model": MODEL, "instructions": INSTRUCTIONS, "tools": self.tools}
        if scenario.stateless:
            return oai.build_stateless_continuation(
                turn,
                results,
                prior_input_items=request["input"],
                store=False,
                request_controls={"include": ["reasoning.encrypted_content"]},
                **head,
            )
        return oai.build_stateful_continuation(
            turn, results, previous_response_was_stored=True, store=True, **head
        )

    @staticmethod
    def reasoning_of(turn: oai.Turn) -> list[dict[str, Any]]:
        return list(turn.reasoning)

    @staticmethod
    def replayed_reasoning(sent: dict[str, Any]) -> list[dict[str, Any]]:
        return [item for item in sent["input"] if item.get("type") == "reasoning"]

    @staticmethod
    def signature(reasoning: dict[str, Any]) -> Any:
        return reasoning["encrypted_content"]


# -- Anthropic Messages -----------------------------------------------------------------------


class AnthropicDriver:
    protocol = "anthropic_messages"
    tools: ClassVar[list[dict[str, Any]]] = [
        {"name": name, "description": f"{name} tool", "input_schema": _schema(fields)}
        for name, fields in TOOL_SPECS.items()
    ]
    max_tokens = 512

    def __init__(self, harness: Harness) -> None:
        self.h = harness

    @staticmethod
    def path(mode: str) -> str:
        return "/anthropic/v1/messages"

    def client(self, mode: str, conversation: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.h.server.anthropic_base_url,
            api_key="test-key",
            max_retries=0,
            _strict_response_validation=True,
            default_headers={CONVERSATION: conversation},
        )

    def first_request(self, scenario: Scenario) -> dict[str, Any]:
        return {
            "model": MODEL,
            "max_tokens": self.max_tokens,
            "system": INSTRUCTIONS,
            "tools": self.tools,
            "messages": [{"role": "user", "content": USER_TEXT}],
        }

    def send(self, client: anthropic.Anthropic, mode: str, request: dict[str, Any]) -> SdkView:
        if mode == "stream_helper":
            with client.messages.stream(**request) as stream:
                events = list(stream)
                message = stream.get_final_message()
            assert events[-1].type == "message_stop"
            return SdkView(self._decoded(message.content, message.stop_reason), None)
        if mode == "create_stream":
            with client.messages.create(**request, stream=True) as stream:
                events = list(stream)
            return SdkView(self._accumulated(events), [e.to_dict() for e in events])
        message = client.messages.create(**request)
        return SdkView(self._decoded(message.content, message.stop_reason), None)

    @staticmethod
    def _decoded(blocks: Sequence[Any], stop_reason: Any) -> Decoded:
        calls = [(b.id, b.name, b.input) for b in blocks if b.type == "tool_use"]
        assert stop_reason == ("tool_use" if calls else "end_turn")
        return Decoded(
            calls=calls,
            text="".join(b.text for b in blocks if b.type == "text"),
            signatures=[b.signature for b in blocks if b.type == "thinking"],
        )

    @staticmethod
    def _accumulated(events: Sequence[Any]) -> Decoded:
        """What the raw SDK event objects hold, assembled by block index."""
        blocks: dict[int, dict[str, Any]] = {}
        stop_reason = None
        for event in events:
            if event.type == "content_block_start":
                block = event.content_block
                blocks[event.index] = {"type": block.type, "block": block, "parts": []}
            elif event.type == "content_block_delta":
                delta, parts = event.delta, blocks[event.index]["parts"]
                if delta.type == "text_delta":
                    parts.append(delta.text)
                elif delta.type == "input_json_delta":
                    parts.append(delta.partial_json)
                elif delta.type == "signature_delta":
                    blocks[event.index]["signature"] = delta.signature
            elif event.type == "message_delta":
                stop_reason = event.delta.stop_reason
        assert events[-1].type == "message_stop"
        ordered = [blocks[i] for i in sorted(blocks)]
        calls = [
            (b["block"].id, b["block"].name, json.loads("".join(b["parts"])))
            for b in ordered
            if b["type"] == "tool_use"
        ]
        assert stop_reason == ("tool_use" if calls else "end_turn")
        return Decoded(
            calls=calls,
            text="".join("".join(b["parts"]) for b in ordered if b["type"] == "text"),
            signatures=[b["signature"] for b in ordered if b["type"] == "thinking"],
        )

    def parse(self, body: bytes, stream: bool) -> tuple[am.Turn, Decoded]:
        if stream:
            turn = am.parse_stream(body, baseline=self.h.baseline)
        else:
            turn = am.parse_response(body, baseline=self.h.baseline)
        assert turn.complete
        assert turn.baseline == self.h.baseline
        assert turn.recovery_calls == ()
        return turn, Decoded(
            calls=[(c.call_id, c.name, c.arguments) for c in turn.calls],
            text="".join(b["text"] for b in turn.content if b["type"] == "text"),
            signatures=[b["signature"] for b in turn.content if b["type"] == "thinking"],
        )

    def feed(self, events: Sequence[dict[str, Any]]) -> am.Turn:
        parser = am.Parser(baseline=self.h.baseline)
        for event in events:
            parser.feed_event(event)
        return parser.finish()

    def continuation(
        self,
        turn: am.Turn,
        results: list[ToolResult],
        request: dict[str, Any],
        scenario: Scenario,
        stream: bool,
    ) -> dict[str, Any]:
        return am.build_continuation(
            turn,
            results,
            history=request["messages"],
            model=MODEL,
            max_tokens=self.max_tokens,
            tools=self.tools,
            system=INSTRUCTIONS,
        )

    @staticmethod
    def reasoning_of(turn: am.Turn) -> list[dict[str, Any]]:
        return [b for b in turn.content if b["type"] == "thinking"]

    @staticmethod
    def replayed_reasoning(sent: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            block
            for message in sent["messages"]
            if message["role"] == "assistant"
            for block in message["content"]
            if block["type"] == "thinking"
        ]

    @staticmethod
    def signature(reasoning: dict[str, Any]) -> Any:
        return reasoning["signature"]


# -- Gemini Interactions ----------------------------------------------------------------------


class GeminiDriver:
    protocol = "gemini_interactions"
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "type": "function",
            "name": name,
            "description": f"{name} tool",
            "parameters": _schema(fields),
        }
        for name, fields in TOOL_SPECS.items()
    ]

    def __init__(self, harness: Harness) -> None:
        self.h = harness

    @staticmethod
    def path(mode: str) -> str:
        return "/gemini/v1/interactions"  # the stable v1 route the client was told to use

    def client(self, mode: str, conversation: str) -> genai.Client:
        return genai.Client(
            api_key="test-key",
            http_options={
                "base_url": self.h.server.gemini_base_url,
                "api_version": "v1",
                "headers": {CONVERSATION: conversation},
            },
        )

    def first_request(self, scenario: Scenario) -> dict[str, Any]:
        return {
            "model": MODEL,
            "system_instruction": INSTRUCTIONS,
            "tools": self.tools,
            "input": [{"type": "user_input", "content": [{"type": "text", "text": USER_TEXT}]}],
            "store": not scenario.stateless,
        }

    def send(self, client: genai.Client, mode: str, request: dict[str, Any]) -> SdkView:
        if mode == "create_stream":
            with client.interactions.create(**request, stream=True) as stream:
                events = list(stream)
            return SdkView(self._accumulated(events), [e.to_dict() for e in events])
        interaction = client.interactions.create(**request)
        steps = interaction.steps or []
        calls = [(s.id, s.name, s.arguments) for s in steps if s.type == "function_call"]
        assert interaction.status == ("requires_action" if calls else "completed")
        return SdkView(
            Decoded(
                calls=calls,
                text="".join(c.text for s in steps if s.type == "model_output" for c in s.content),
                signatures=[s.signature for s in steps if s.type == "thought"],
            ),
            None,
        )

    @staticmethod
    def _accumulated(events: Sequence[Any]) -> Decoded:
        """What the SDK's stream event objects hold, assembled by step index."""
        steps: dict[int, dict[str, Any]] = {}
        for event in events:
            if event.event_type == "step.start":
                steps[event.index] = {"step": event.step, "parts": [], "signature": None}
            elif event.event_type == "step.delta":
                delta, entry = event.delta, steps[event.index]
                if delta.type in ("text", "arguments_delta"):
                    entry["parts"].append(delta.text if delta.type == "text" else delta.arguments)
                elif delta.type == "thought_signature":
                    entry["signature"] = delta.signature
        last = events[-1]
        assert last.event_type == "interaction.completed"
        ordered = [steps[i] for i in sorted(steps)]
        calls = [
            (e["step"].id, e["step"].name, json.loads("".join(e["parts"])))
            for e in ordered
            if e["step"].type == "function_call"
        ]
        assert last.interaction.status == ("requires_action" if calls else "completed")
        return Decoded(
            calls=calls,
            text="".join("".join(e["parts"]) for e in ordered if e["step"].type == "model_output"),
            signatures=[e["signature"] for e in ordered if e["step"].type == "thought"],
        )

    def parse(self, body: bytes, stream: bool) -> tuple[gi.Turn, Decoded]:
        if stream:
            turn = gi.parse_stream(body, baseline=self.h.baseline)
        else:
            turn = gi.parse_interaction(body, source="create", baseline=self.h.baseline)
        assert turn.baseline == self.h.baseline
        return turn, Decoded(
            calls=[(c.call_id, c.name, c.arguments) for c in turn.calls],
            text="".join(
                c["text"]
                for s in turn.steps
                if s["type"] == "model_output"
                for c in s["content"]
                if c["type"] == "text"
            ),
            signatures=[s["signature"] for s in turn.steps if s["type"] == "thought"],
        )

    def feed(self, events: Sequence[dict[str, Any]]) -> gi.Turn:
        parser = gi.Parser(baseline=self.h.baseline)
        for event in events:
            parser.feed_event(event)
        return parser.finish()

    def continuation(
        self,
        turn: gi.Turn,
        results: list[ToolResult],
        request: dict[str, Any],
        scenario: Scenario,
        stream: bool,
    ) -> dict[str, Any]:
        head = {"model": MODEL, "tools": self.tools, "system_instruction": INSTRUCTIONS}
        if scenario.stateless:
            return gi.build_stateless_continuation(
                turn,
                results,
                snapshot_source="stream" if stream else "create",
                prior_input_steps=request["input"],
                **head,
            )
        return gi.build_stateful_continuation(
            turn, results, previous_interaction_was_stored=True, store=True, **head
        )

    @staticmethod
    def reasoning_of(turn: gi.Turn) -> list[dict[str, Any]]:
        return [s for s in turn.steps if s["type"] == "thought"]

    @staticmethod
    def replayed_reasoning(sent: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for s in sent["input"] if s.get("type") == "thought"]

    @staticmethod
    def signature(reasoning: dict[str, Any]) -> Any:
        return reasoning["signature"]


# -- the conversation loop, the same for every SDK path ---------------------------------------


CONVERSATION = "x-callgate-conversation"
INTERLEAVES = {"openai_responses", "gemini_interactions"}  # Anthropic blocks are sequential


def _drive(driver: Any, scenario: Scenario, mode: str) -> None:
    h: Harness = driver.h
    protocol = driver.protocol
    conversation = _conversation(scenario, mode)
    h.driven.add(conversation)
    stream = mode in STREAMING
    request = driver.first_request(scenario)
    previous_turn: Any = None
    with driver.client(mode, conversation) as client:
        for k, step in enumerate(scenario.steps):
            sdk = driver.send(client, mode, request)

            exchange: Exchange = h.recorder.of(conversation)[k]
            rendered = [
                s.rendered for s in h.server.state.served_turns() if s.conversation == conversation
            ][k]
            assert exchange.path == driver.path(mode)
            if protocol == "anthropic_messages":
                # The SDK announces the API version its contract baseline was read from.
                assert (
                    exchange.headers["anthropic-version"]
                    == get_baseline(protocol, h.baseline).api_version
                )
            assert exchange.status == 200
            # The SDK sent exactly the request it was given (plus its own stream flag).
            received = exchange.request_json()
            assert received.pop("stream", False) is stream
            assert received == request
            # What left the server is what the renderer produced.
            if stream:
                assert exchange.response_body == rendered.sse
            else:
                assert json.loads(exchange.response_body) == rendered.body

            turn, parsed = driver.parse(exchange.response_body, stream)
            assert [name for _, name in rendered.calls] == [name for name, _ in step.calls]
            expected_calls = [
                (call_id, name, arguments)
                for (call_id, name), (_, arguments) in zip(rendered.calls, step.calls, strict=True)
            ]
            assert parsed.calls == expected_calls
            assert parsed.text == step.respond.get("text", "")
            signature = step.respond.get("reasoning", {}).get("signature")
            assert parsed.signatures == ([signature] if signature else [])
            # The SDK decoded the same turn from the same bytes.
            assert sdk.decoded == parsed
            if sdk.events is not None:
                # The gate fed with the SDK's own event objects agrees with the bytes.
                assert driver.feed(sdk.events).digest == turn.digest

            if stream and len(step.calls) > 1:
                keys = _delta_keys(protocol, exchange.response_body)
                runs = len([key for key, _ in itertools.groupby(keys)])
                if protocol in INTERLEAVES and step.respond.get("interleave") == "round_robin":
                    assert runs > len(set(keys)) == len(step.calls)  # A/B/A on the wire
                else:
                    assert runs == len(set(keys)) == len(step.calls)

            if k > 0 and scenario.stateless and "reasoning" in scenario.steps[k - 1].respond:
                # The continuation the server received replays the reasoning byte-exact.
                replayed = driver.replayed_reasoning(received)
                assert replayed == driver.reasoning_of(previous_turn)
                assert [driver.signature(r) for r in replayed] == [SIGNATURE]

            if step.results:
                results = _results(protocol, turn.calls, step)
                request = driver.continuation(turn, results, request, scenario, stream)
            previous_turn = turn
    assert len(h.recorder.of(conversation)) == len(scenario.steps)
    assert conversation_problems(h.server, conversation) == []


def _harness(
    protocol: str, scenarios: Sequence[Scenario], modes: Sequence[str]
) -> Iterator[Harness]:
    script = _script(protocol, scenarios, modes)
    with recording_mock_server(script) as (server, recorder):
        harness = Harness(server, recorder, protocol)
        yield harness
        if harness.driven == set(script.conversations):
            # Every conversation ran: nothing may be left over, nothing stray may have come.
            server.assert_script_done()


@pytest.fixture(scope="module")
def openai_harness() -> Iterator[Harness]:
    yield from _harness("openai_responses", SCENARIOS, OPENAI_MODES)


@pytest.fixture(scope="module")
def anthropic_harness() -> Iterator[Harness]:
    yield from _harness("anthropic_messages", ANTHROPIC_SCENARIOS, ANTHROPIC_MODES)


@pytest.fixture(scope="module")
def gemini_harness() -> Iterator[Harness]:
    yield from _harness("gemini_interactions", SCENARIOS, GEMINI_MODES)


@pytest.mark.parametrize("mode", OPENAI_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_openai_sdk_decodes_and_continues(
    openai_harness: Harness, scenario: Scenario, mode: str
) -> None:
    _drive(OpenAIDriver(openai_harness), scenario, mode)


@pytest.mark.parametrize("mode", ANTHROPIC_MODES)
@pytest.mark.parametrize("scenario", ANTHROPIC_SCENARIOS, ids=str)
def test_anthropic_sdk_decodes_and_continues(
    anthropic_harness: Harness, scenario: Scenario, mode: str
) -> None:
    _drive(AnthropicDriver(anthropic_harness), scenario, mode)


@pytest.mark.parametrize("mode", GEMINI_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_gemini_sdk_decodes_and_continues(
    gemini_harness: Harness, scenario: Scenario, mode: str
) -> None:
    _drive(GeminiDriver(gemini_harness), scenario, mode)


def test_installed_sdks_are_the_releases_a_baseline_was_read_from() -> None:
    # The conformance claims above are for the pinned SDK releases of each contract baseline.
    for protocol in PROTOCOLS:
        baseline = get_baseline(protocol, BASELINE[protocol])
        assert importlib.metadata.version(baseline.sdk_name) == baseline.sdk_version
