"""google-genai's ``interactions.create`` against the mock's hosted steps, over a real socket.

Runs in both SDK generations (3.6.1 here, 2.12.1 in the baseline venv; the Makefile's
``BASELINE_TESTS``), streamed and not: the SDK decodes every event and body; callgate's
parser, fed the very bytes that left the server, projects hosted calls and citations equal
to the hosted steps and annotations the SDK exposes (steps from ``interaction.steps``, or
``step.start`` + the step's own deltas when streamed). A tool turn that mixes hosted steps
and a function call is continued statelessly (hosted steps and signatures replayed
verbatim through the SDK) and statefully.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import Any

import pytest
from google import genai

from callgate import ContinuationError, ToolResult
from callgate import gemini_interactions as gi
from callgate.gemini_interactions._hosted import PAIRS
from callgate.mock import MockServer, ScriptBuilder, call

from ...conftest import RecordingApp, recording_mock_server

GENERATION = int(importlib.metadata.version("google-genai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
MODEL = "gemini-3-flash-preview"
TEXT = "Paris — la capitale de la France, voilà."
RESULTS = [{"marker": "s1", "uri": "https://a.example/paris", "title": "Paris"}]
SEARCH = {"tool": "google_search", "queries": ["capital"], "signature": "c2ln", "results": RESULTS}
CODE = {"tool": "code_execution", "code": "print(2*2)", "outcome": "ok", "output": "4\n"}
URLS = {
    "tool": "url_context",
    "results": [{"marker": "u1", "url": "https://b.example", "status": "paywall"}],
}
CHUNK = {"marker": "f1", "store": "fileSearchStores/s", "document": "d.pdf", "text": "chunk"}
FILES = {"tool": "file_search", "chunks": [CHUNK]}
CITE = [
    {"marker": "s1", "span": "Paris"},
    {"marker": "f1", "span": "France"},
    {"marker": "u1", "span": "à"},
]
HOSTED_TOOLS = [
    {"type": "google_search"},
    {"type": "code_execution"},
    {"type": "url_context"},
    {"type": "file_search", "file_search_store_names": ["fileSearchStores/s"], "top_k": 2},
]
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
TOOLS = [*HOSTED_TOOLS, WEATHER]
USER = {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}
MODES = ("stream", "json")
FORMS = {"start": {}, "delta": {"stream_as": "delta"}}


def _script() -> Any:
    b = ScriptBuilder(seed=11, baseline=BASELINE)
    for mode in MODES:
        for form, extra in FORMS.items():
            tools = [{**t, **extra} for t in (SEARCH, CODE, URLS, FILES)]
            hosted = {"tools": tools, "cite": CITE}
            b.turn(
                "gemini_interactions",
                conversation=f"answer-{mode}-{form}",
                text=TEXT,
                hosted=hosted,
            )
        for how in ("stateless", "stateful"):
            name = f"replay-{mode}-{how}"
            hosted = {"tools": [SEARCH, {**CODE, "stream_as": "delta"}], "cite": CITE[:1]}
            b.turn(
                "gemini_interactions",
                conversation=name,
                text="Paris: checking the weather.",
                hosted=hosted,
                calls=[call("get_weather", city="Paris")],
            )
            b.turn(
                "gemini_interactions",
                conversation=name,
                expect={"function_results": [{"name": "get_weather", "output": "sunny"}]},
                text="Sunny in Paris.",
            )
    files = {"tools": [FILES], "cite": [CITE[1]]}
    b.turn(
        "gemini_interactions",
        conversation="chunks",
        text=TEXT,
        hosted=files,
        calls=[call("get_weather", city="Paris")],
    )
    return b.build()


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[MockServer, RecordingApp]]:
    with recording_mock_server(_script()) as running:
        yield running


_CLIENTS: list[genai.Client] = []


def _client(server: MockServer, conversation: str) -> genai.Client:
    options = {
        "base_url": server.gemini_base_url,
        "api_version": "v1",
        "headers": {"x-callgate-conversation": conversation},
    }
    client = genai.Client(api_key="k", http_options=options)  # type: ignore[arg-type]
    _CLIENTS.append(client)
    return client


def _dump(obj: Any) -> Any:
    """The SDK object as JSON, after checking the SDK decoded it as a known, typed variant
    (an ``Unknown*`` fallback would dump its raw dict and hide a decoding gap)."""
    assert getattr(obj, "type", None) != "UNKNOWN", obj
    for annotation in _annotations_of(obj):
        assert annotation.type != "UNKNOWN", annotation
    return obj.model_dump(mode="json", by_alias=True, exclude_none=True)


def _annotations_of(obj: Any) -> list[Any]:
    found = list(getattr(obj, "annotations", None) or [])
    for block in getattr(obj, "content", None) or []:
        found.extend(getattr(block, "annotations", None) or [])
    return found


def _sdk_stream_steps(events: list[Any]) -> list[dict[str, Any]]:
    """The hosted steps and annotated text the SDK's stream events carry, by index: a
    start's step with its own-type deltas' fields, text deltas joined, annotations kept."""
    steps: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.event_type == "step.start":
            steps[event.index] = _dump(event.step)
        elif event.event_type == "step.delta":
            step, delta = steps[event.index], _dump(event.delta)
            kind = delta.pop("type")
            if kind == step["type"]:
                step.update(delta)
            elif kind == "text":
                step.setdefault("content", []).append({"type": "text", "text": delta["text"]})
            elif kind == "text_annotation_delta":
                step["content"][-1]["annotations"] = delta.get("annotations", [])
    assert events[-1].event_type == "interaction.completed"
    return [steps[i] for i in sorted(steps)]


def _sdk_projection(steps: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    results = {s["call_id"]: s for s in steps if s["type"] in PAIRS.values()}
    hosted = [
        (s["type"][: -len("_call")], s["id"], s, results.get(s["id"]))
        for s in steps
        if s["type"] in PAIRS
    ]
    annotations = [
        a
        for s in steps
        if s["type"] == "model_output"
        for block in s.get("content", [])
        for a in block.get("annotations", [])
    ]
    return hosted, annotations


def _ours(turn: gi.Turn) -> tuple[list[Any], list[Any]]:
    hosted = [(c.tool, c.id, c.raw["call"], c.raw["result"]) for c in turn.hosted_calls]
    return hosted, [c.raw for c in turn.citations]


def _create(server: MockServer, conversation: str, mode: str, request: dict[str, Any]) -> Any:
    client = _client(server, conversation)
    if mode == "stream":
        with client.interactions.create(**request, stream=True) as stream:
            return list(stream)
    return client.interactions.create(**request)


def _parse(recorder: RecordingApp, conversation: str, mode: str, hop: int = 0) -> gi.Turn:
    sent = recorder.of(conversation)[hop].response_body
    if mode == "stream":
        return gi.parse_stream(sent, baseline=BASELINE)
    return gi.parse_interaction(sent, source="create", baseline=BASELINE)


def _sdk_steps(mode: str, got: Any) -> list[dict[str, Any]]:
    return _sdk_stream_steps(got) if mode == "stream" else [_dump(s) for s in got.steps]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("mode", MODES)
def test_sdk_decodes_hosted_steps_and_callgate_projects_the_same(
    served: tuple[MockServer, RecordingApp], mode: str, form: str
) -> None:
    server, recorder = served
    conversation = f"answer-{mode}-{form}"
    got = _create(server, conversation, mode, {"model": MODEL, "input": "hi", "tools": TOOLS})
    turn = _parse(recorder, conversation, mode)
    sdk_hosted, sdk_annotations = _sdk_projection(_sdk_steps(mode, got))
    assert _ours(turn) == (sdk_hosted, sdk_annotations)
    assert [h[0] for h in sdk_hosted] == [
        "google_search",
        "code_execution",
        "url_context",
        "file_search",
    ]
    spans = [TEXT.encode()[c.start : c.end].decode() for c in turn.citations]  # type: ignore[misc]
    assert spans == ["Paris", "France", "à"]
    assert [c.status for c in turn.hosted_calls] == ["completed"] * 4
    if mode == "json":
        assert got.status == "completed"
        assert got.usage.grounding_tool_count[0].count == 1


@pytest.mark.parametrize("how", ["stateless", "stateful"])
@pytest.mark.parametrize("mode", MODES)
def test_a_hosted_and_function_call_turn_continues_through_the_sdk(
    served: tuple[MockServer, RecordingApp], mode: str, how: str
) -> None:
    server, recorder = served
    conversation = f"replay-{mode}-{how}"
    stored = how == "stateful"
    first = {"model": MODEL, "input": [USER], "tools": TOOLS, "store": stored}
    got = _create(server, conversation, mode, first)
    turn = _parse(recorder, conversation, mode)
    assert [c.name for c in turn.calls] == ["get_weather"]  # hosted calls never released
    assert [c.tool for c in turn.hosted_calls] == ["google_search", "code_execution"]
    sdk_hosted, _ = _sdk_projection(_sdk_steps(mode, got))
    assert _ours(turn)[0] == sdk_hosted
    results = [ToolResult(turn.calls[0].call_id, "sunny")]
    head = {"model": MODEL, "tools": TOOLS}
    if stored:
        request = gi.build_stateful_continuation(
            turn, results, previous_interaction_was_stored=True, store=True, **head
        )
    else:
        request = gi.build_stateless_continuation(
            turn, results, snapshot_source=turn.origin, prior_input_steps=[USER], **head
        )
    second = _client(server, conversation).interactions.create(**request)
    assert second.status == "completed"
    sent = recorder.of(conversation)[1].request_json()
    if stored:
        assert [s["type"] for s in sent["input"]] == ["function_result"]
    else:
        # hosted steps, their signatures and the annotated text went back verbatim
        assert sent["input"][1:-1] == list(turn.steps)
        assert sent["input"][1]["signature"] == "c2ln"


def test_a_streamed_file_search_result_is_refused_for_replay_with_its_reason(
    served: tuple[MockServer, RecordingApp],
) -> None:
    server, recorder = served
    first = {"model": MODEL, "input": [USER], "tools": TOOLS, "store": False}
    events = _create(server, "chunks", "stream", first)
    turn = _parse(recorder, "chunks", "stream")
    assert _ours(turn)[0] == _sdk_projection(_sdk_stream_steps(events))[0]
    assert [turn.steps[p]["type"] for p in turn.opaque] == ["file_search_result"]
    with pytest.raises(ContinuationError, match="file_search_result delta field 'result'"):
        gi.build_stateless_continuation(
            turn,
            [ToolResult(turn.calls[0].call_id, "sunny")],
            snapshot_source="stream",
            prior_input_steps=[USER],
            model=MODEL,
            tools=TOOLS,
        )
