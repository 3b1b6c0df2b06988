"""Agent frameworks run their own tool loops against the mock: the OpenAI Agents SDK and
pydantic-ai (the ``frameworks`` extra, light enough for ``make test``; pydantic-ai's
``GoogleModel`` on the dev extra's google-genai), each through the example under
``examples/frameworks/`` that docs/frameworks.md points at; openai-agents also over its
Responses WebSocket transport (``use_responses_websocket=True``).

Skipped when the extra is missing, except under ``CI=true``, where a missing framework
fails: CI installs ``.[dev]``, which includes it. LangChain, LiteLLM and the Vercel AI SDK
are checked by hand (docs/frameworks.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from callgate import gemini_generate_content as ggc
from callgate.mock import MockServer, load_script

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "frameworks"


def _example(name: str, framework: str) -> ModuleType:
    if importlib.util.find_spec(framework) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{framework} is not installed: CI installs callgate[dev] (frameworks)")
        pytest.skip(f"{framework} is not installed (pip install 'callgate[frameworks]')")
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "framework"),
    [("openai_agents_weather", "agents"), ("pydantic_ai_weather", "pydantic_ai")],
)
def test_framework_tool_loop_runs_through_the_mock(name: str, framework: str) -> None:
    example = _example(name, framework)
    with MockServer(load_script(example.SCRIPT)) as server:
        answer = example.run(server.openai_base_url)
        server.assert_script_done()  # both turns served, no mismatch
        entries = server.journal.entries()
    assert answer == "It is sunny in Paris."
    assert [e.outcome for e in entries] == ["matched", "matched"]
    # The framework sent the tool's result back in the second request.
    outputs = [i for i in entries[1].body["input"] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["sunny"]


def test_openai_agents_websocket_transport_runs_the_tool_loop_on_one_socket() -> None:
    """openai-agents' ``use_responses_websocket=True``: both model calls are
    ``response.create`` messages on one connection (it sends ``stream: true`` too)."""
    example = _example("openai_agents_websocket_weather", "agents")
    with MockServer(load_script(example.SCRIPT)) as server:
        answer = example.run(server.openai_base_url)
        server.assert_script_done()
        entries = server.journal.entries()
    assert answer == "It is sunny in Paris."
    assert [(e.method, e.outcome) for e in entries] == [("WS", "matched")] * 2
    assert entries[0].connection is not None
    assert entries[0].connection == entries[1].connection
    assert all(e.body["type"] == "response.create" for e in entries)
    outputs = [i for i in entries[1].body["input"] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["sunny"]


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_pydantic_ai_google_model_runs_two_parallel_calls_through_the_mock(stream: bool) -> None:
    example = _example("pydantic_ai_google_weather", "pydantic_ai")
    with MockServer(load_script(example.SCRIPT)) as server:
        answer = example.run(server.gemini_base_url, stream=stream)
        server.assert_script_done()  # both turns served, no mismatch
        entries = server.journal.entries()
    assert answer == "It is sunny in Paris and in Rome."
    method = "streamGenerateContent" if stream else "generateContent"
    assert [e.path.rsplit(":", 1)[1] for e in entries] == [method, method]
    first = entries[0].response
    model, answers = entries[1].body["contents"][1:3]
    # The replayed model turn carries the signature the mock put on the first call (the
    # SDK re-encodes it URL-safe), not Google's placeholder; the second call none.
    sent = ggc.parse_stream(first.encode()) if stream else ggc.parse_response(first)
    emitted = sent.calls[0].part["thoughtSignature"]
    replayed = [p.get("thoughtSignature", p.get("thought_signature")) for p in model["parts"]]
    assert ggc.same_signature(replayed[0], emitted)
    assert replayed[1:] == [None]
    results = [p.get("functionResponse", p.get("function_response")) for p in answers["parts"]]
    assert [r["name"] for r in results] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize(
    ("name", "framework"),
    [("pydantic_ai_chat_weather", "pydantic_ai"), ("openai_agents_chat_weather", "agents")],
)
def test_chat_completions_models_run_two_parallel_calls_through_the_mock(
    name: str, framework: str, stream: bool
) -> None:
    """pydantic-ai ``OpenAIChatModel`` and openai-agents ``OpenAIChatCompletionsModel``."""
    example = _example(name, framework)
    with MockServer(load_script(example.SCRIPT)) as server:
        answer = example.run(server.openai_base_url, stream=stream)
        server.assert_script_done()  # both turns served, no mismatch
        entries = server.journal.entries()
    assert answer == "It is sunny in Paris and in Rome."
    assert [e.path for e in entries] == ["/openai/v1/chat/completions"] * 2
    assert [e.body.get("stream", False) for e in entries] == [stream, stream]
    # The framework replayed the assistant's two calls and answered each, in call order.
    messages = entries[1].body["messages"]
    asked = [c["id"] for c in messages[-3]["tool_calls"]]
    answers = messages[-2:]
    assert [m["role"] for m in answers] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in answers] == asked
    assert [m["content"] for m in answers] == ["sunny in Paris", "sunny in Rome"]
