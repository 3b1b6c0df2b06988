"""Anthropic server tools through the official SDK over a real socket, strict validation.

Runs under both SDK generations (anthropic 2.14.0 and 0.117.0: it is in the Makefile's
BASELINE_TESTS). Every scenario (a web search with cited text; a mixed turn of web search,
bash code execution and a client tool; a ``pause_turn`` loop; a server call left pending
beside a client call) goes through ``messages.create`` streamed and not, and
``messages.stream()``. Per response:

- the strict SDK decodes it;
- callgate's parser, fed the bytes that crossed the socket, holds the same blocks as the
  SDK's message, and its ``hosted_calls`` / ``citations`` are what the SDK exposes;
- for a raw SDK stream, the SDK's event objects fed to ``Parser.feed_event`` give the
  same turn as the bytes;
- the next request is callgate's ``build_continuation``, sent through the SDK, and must
  satisfy the mock's ``expect`` and its replay checks (a 400 otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate.mock import MockServer, ScriptBuilder, call

from ...conftest import RecordingApp, conversation_problems, recording_mock_server

MODEL = "hosted-model"
TOOLS: list[dict[str, Any]] = [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    {"type": "web_fetch_20250910", "name": "web_fetch"},
    {"type": "code_execution_20250825", "name": "code_execution"},
    {"name": "get_weather", "input_schema": {"type": "object"}},
]
FIRST = [{"role": "user", "content": "Tide tables for Brest, then the weather?"}]
SEARCH = {"tool": "web_search", "query": "brest tides",
          "results": [{"url": "https://tides.example/brest", "title": "Brest tides",
                       "page_age": "2 days", "marker": "t"},
                      {"url": "https://tides.example/all", "title": "All tides"}]}  # fmt: skip
CITED = {"text": "High tide is at 14:02.", "cite": [{"marker": "t", "quote": "14:02"}]}
CALLED = {**SEARCH, "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_c"}}
BASH = {"tool": "bash", "command": "python tides.py", "stdout": "14:02\n",
        "files": ["file_tides_csv"]}  # fmt: skip
WEATHER = [{"name": "get_weather", "output": "rain"}]

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "search": [{"hosted": [SEARCH, CITED]}],
    "programmatic": [
        {"hosted": [{"tool": "python", "code": "search()", "id": "srvtoolu_c"}, CALLED, CITED]}
    ],
    "mixed": [
        {"hosted": [SEARCH, BASH, CITED], "calls": [call("get_weather", city="Brest")]},
        {"expect": {"function_results": WEATHER}, "text": "Rain, and high tide at 14:02."},
    ],
    "pause": [
        {"hosted": [SEARCH], "status": "pause_turn"},
        {
            "hosted": [
                {
                    "tool": "web_fetch",
                    "url": "https://tides.example/brest",
                    "document": {"text": "Brest: high tide 14:02.", "title": "Brest"},
                    "marker": "d",
                },
                {"text": "14:02.", "cite": [{"marker": "d", "quote": "14:02"}]},
            ]
        },
    ],
    "pending": [
        {
            "hosted": [{**SEARCH, "id": "srvtoolu_pending01", "pending": True}],
            "calls": [call("get_weather", city="Brest")],
        },
        {
            "expect": {"function_results": WEATHER},
            "hosted": [{**SEARCH, "result_for": "srvtoolu_pending01"}, CITED],
        },
    ],
}
MODES = ("create", "create_stream", "stream_helper")


def _script() -> Any:
    b = ScriptBuilder(seed=14)
    for name, turns in SCENARIOS.items():
        for mode in MODES:
            for turn in turns:
                respond = {k: v for k, v in turn.items() if k != "expect"}
                b.turn("anthropic_messages", conversation=f"{name}-{mode}",
                       expect=turn.get("expect"), **respond)  # fmt: skip
    return b.build()


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[MockServer, RecordingApp]]:
    with recording_mock_server(_script()) as running:
        yield running


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _send(client: anthropic.Anthropic, mode: str, request: dict[str, Any]) -> tuple[Any, Any]:
    """The SDK's final message and, for a raw stream, callgate's turn from its events."""
    if mode == "create":
        return client.messages.create(**request), None
    if mode == "stream_helper":
        with client.messages.stream(**request) as stream:
            for _ in stream:
                pass
            return stream.get_final_message(), None
    parser = am.Parser()
    with client.messages.create(**request, stream=True) as events:
        for event in events:
            parser.feed_event(event.to_dict(mode="json"))
    turn = parser.finish()
    return None, turn


def _check_projection(turn: am.Turn, content: list[dict[str, Any]]) -> None:
    """``hosted_calls`` and ``citations`` are exactly what the SDK's blocks say."""
    calls = [b for b in content if b["type"] == "server_tool_use"]
    results = {b["tool_use_id"]: b for b in content if b["type"].endswith("_tool_result")}
    own = [(b["name"], b["id"]) for b in calls]
    own += [(b["type"], i) for i, b in results.items() if i not in {c["id"] for c in calls}]
    assert sorted((h.tool, h.id) for h in turn.hosted_calls) == sorted(own)
    for hosted in turn.hosted_calls:
        result = results.get(hosted.id or "")
        if result is None:
            assert hosted.status is None
        elif isinstance(result["content"], dict) and "error_code" in result["content"]:
            assert hosted.status == "error:" + result["content"]["error_code"]
        else:
            assert hosted.status == "completed"
    cited = [c for b in content if b["type"] == "text" for c in b.get("citations", [])]
    assert [_drop_none(c.raw) for c in turn.citations] == cited
    assert all(c.kind == raw["type"] for c, raw in zip(turn.citations, cited, strict=True))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_sdk_decodes_server_tools_and_callgate_continues(
    served: tuple[MockServer, RecordingApp], scenario: str, mode: str
) -> None:
    server, recorder = served
    conversation = f"{scenario}-{mode}"
    client = anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=0,
        _strict_response_validation=True,
        default_headers={"x-callgate-conversation": conversation},
    )  # fmt: skip
    history: list[dict[str, Any]] = list(FIRST)
    request: dict[str, Any] = {"model": MODEL, "max_tokens": 512, "tools": TOOLS,
                               "messages": history}  # fmt: skip
    with client:
        for _ in SCENARIOS[scenario]:
            message, event_turn = _send(client, mode, request)
            wire = recorder.of(conversation)[-1]
            assert wire.status == 200, wire.response_body
            raw = wire.response_body
            turn = am.parse_stream(raw) if mode != "create" else am.parse_response(raw)
            if message is not None:
                sdk_content = [
                    b.model_dump(mode="json", exclude_none=True) for b in message.content
                ]
                assert _drop_none(list(turn.content)) == sdk_content
                assert message.stop_reason == turn.stop_reason
                if message.usage.server_tool_use is not None:
                    assert (
                        message.usage.server_tool_use.model_dump() == turn.usage["server_tool_use"]
                    )
                if message.container is not None:
                    assert message.container.id == turn.container_id
            else:
                assert event_turn.content == turn.content
                assert event_turn.hosted_calls == turn.hosted_calls
                assert event_turn.citations == turn.citations
                sdk_content = _drop_none(list(turn.content))
            _check_projection(turn, sdk_content)
            assert turn.calls == () or turn.stop_reason == "tool_use"
            results = [ToolResult(c.call_id, "rain") for c in turn.calls]
            if not turn.calls and not turn.send_back_unchanged:
                break
            request = am.build_continuation(
                turn, results, history=history, model=MODEL, max_tokens=512, tools=TOOLS
            )
            history = request["messages"]
    assert conversation_problems(server, conversation) == []


def test_pause_turn_continuation_sends_the_content_back_unchanged_last(
    served: tuple[MockServer, RecordingApp],
) -> None:
    _server, recorder = served
    sent = recorder.of("pause-create")
    assert len(sent) == 2
    first = am.parse_response(sent[0].response_body)
    assert first.stop_reason == "pause_turn"
    assert first.calls == ()
    body = sent[1].request_json()
    assert body["messages"][-1] == {"role": "assistant", "content": list(first.content)}
    assert body["tools"] == TOOLS


def test_mixed_turn_releases_only_the_client_call(
    served: tuple[MockServer, RecordingApp],
) -> None:
    _server, recorder = served
    first = am.parse_response(recorder.of("mixed-create")[0].response_body)
    assert [c.name for c in first.calls] == ["get_weather"]
    assert [h.tool for h in first.hosted_calls] == ["web_search", "bash_code_execution"]
    assert first.container_id is not None
    body = recorder.of("mixed-create")[1].request_json()
    answered = [b["tool_use_id"] for b in body["messages"][-1]["content"]]
    assert answered == [first.calls[0].call_id]  # no tool_result for a server id
    assert body["container"] == first.container_id
