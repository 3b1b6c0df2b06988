"""The Chat Completions fault matrix of ``examples/frameworks/chat_matrix.py``.

The frameworks themselves are checked by hand (docs/frameworks.md); what the table there
says each scenario sends is pinned here: every scenario script is served by the mock,
and the official openai SDK, over a real socket, sees exactly the cut, the finish reason
or the error the table describes. The gate refuses every fault scenario.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import openai
import pytest

from callgate import ProviderError, TruncatedStreamError
from callgate.mock import MockServer, Script, ScriptBuilder
from callgate.openai_chat_completions import parse_response, parse_stream

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "frameworks"


def _matrix() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_matrix", EXAMPLES / "chat_matrix.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["chat_matrix"] = module
    spec.loader.exec_module(module)
    return module


matrix = _matrix()


def _final_answer(text: str, expect: Any) -> dict[str, Any]:  # as smolagents' script has it
    return matrix.turn({"calls": [{"name": "final_answer", "arguments": {"answer": text}}]}, expect)


@pytest.fixture(scope="module")
def server() -> Any:
    with MockServer(ScriptBuilder().turn("openai_chat_completions", text="-").build()) as srv:
        yield srv


def _create(server: MockServer, name: str, stream: bool) -> tuple[list[Any], bytes]:
    """Register scenario ``name`` under a test id of its own, then create: what the SDK
    saw (a streamed call's chunks, then the error it raised, if any) and a body's bytes."""
    test_id = f"{name}-{stream}"
    server.register(test_id, Script.from_dict(matrix.scenarios()[name][1]))
    headers = {"x-callgate-test-id": test_id}
    ask: dict[str, Any] = {"model": matrix.MODEL, "tools": matrix.OPENAI_TOOLS}
    ask["messages"] = [{"role": "user", "content": matrix.QUESTION}]
    seen: list[Any] = []
    raw = b""
    with openai.OpenAI(base_url=server.openai_base_url, api_key="t", max_retries=0) as client:
        if not stream:
            answer = client.chat.completions.with_raw_response.create(**ask, extra_headers=headers)
            seen.append(answer.parse())
            raw = answer.content
        else:
            try:
                for chunk in client.chat.completions.create(
                    **ask, stream=True, extra_headers=headers
                ):
                    seen.append(chunk)
            except openai.APIError as exc:
                seen.append(exc)
    server.drop(test_id)
    return seen, raw


def _arguments(chunks: list[Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for chunk in chunks:
        if isinstance(chunk, openai.types.chat.ChatCompletionChunk) and chunk.choices:
            for delta in chunk.choices[0].delta.tool_calls or []:
                out[delta.index] = out.get(delta.index, "") + (delta.function.arguments or "")
    return out


def test_every_scenario_script_is_served_with_either_closing_turn(server: MockServer) -> None:
    for final in (matrix.text_turn, _final_answer):
        for name, (streams, script) in matrix.scenarios(final).items():
            assert streams
            server.register(f"check-{name}", Script.from_dict(script))
            server.drop(f"check-{name}")


def test_truncate_cuts_the_second_call_and_finishes_with_length(server: MockServer) -> None:
    seen, _ = _create(server, "truncate", True)
    assert _arguments(seen) == {0: '{"city":"Paris"}', 1: '{"city":"Rom'}
    finishes = [c.choices[0].finish_reason for c in seen if c.choices]
    assert finishes[-1] == "length"


def test_eof_ends_on_the_same_cut_without_a_finish_reason(server: MockServer) -> None:
    seen, _ = _create(server, "eof", True)
    assert _arguments(seen) == {0: '{"city":"Paris"}', 1: '{"city":"Rom'}
    assert {c.choices[0].finish_reason for c in seen if c.choices} == {None}


def test_error_follows_two_whole_calls(server: MockServer) -> None:
    seen, _ = _create(server, "error", True)
    assert isinstance(seen[-1], openai.APIError)
    assert _arguments(seen[:-1]) == {0: '{"city":"Paris"}', 1: '{"city":"Rome"}'}


def test_length_body_carries_two_whole_calls(server: MockServer) -> None:
    (completion,), raw = _create(server, "length", False)
    choice = completion.choices[0]
    assert choice.finish_reason == "length"
    assert [c.function.arguments for c in choice.message.tool_calls] == [
        '{"city":"Paris"}',
        '{"city":"Rome"}',
    ]
    with pytest.raises(ProviderError):
        parse_response(raw)


@pytest.mark.parametrize("name", ["truncate", "eof", "error"])
def test_the_gate_releases_nothing_in_a_fault_scenario(server: MockServer, name: str) -> None:
    test_id = f"gate-{name}"
    server.register(test_id, Script.from_dict(matrix.scenarios()[name][1]))
    request = {"model": matrix.MODEL, "tools": matrix.OPENAI_TOOLS, "stream": True}
    request["messages"] = [{"role": "user", "content": matrix.QUESTION}]
    answer = httpx.post(
        f"{server.openai_base_url}/chat/completions",
        json=request,
        headers={"authorization": "Bearer t", "x-callgate-test-id": test_id},
    )
    server.drop(test_id)
    with pytest.raises((TruncatedStreamError, ProviderError)):
        parse_stream(answer.content)
