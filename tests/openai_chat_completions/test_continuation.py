"""build_continuation: full-history replay, every control explicit, observed names declared,
the digest re-checked, results bound exactly, error results distinguishable."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate.openai_chat_completions import build_continuation, parse_response, parse_stream

from .wire import BODY, body, sse, two_calls

TOOLS = [
    {
        "type": "function",
        "function": {"name": "get", "parameters": {"type": "object"}, "strict": False},
    },
    {
        "type": "function",
        "function": {"name": "put", "parameters": {"type": "object"}, "strict": True},
    },
]
HISTORY = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "go"}]
RESULTS = [ToolResult("call_a", "A"), ToolResult("call_b", {"ok": True})]


def _build(turn: Any = None, results: Any = RESULTS, **changes: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "messages": HISTORY,
        "model": "gpt-4o-mini",
        "tools": TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "response_format": None,
        "max_completion_tokens": 256,
        **changes,
    }
    return build_continuation(turn or parse_stream(sse(two_calls())), results, **options)


def test_the_request_replays_history_the_assistant_message_and_one_tool_message_per_call() -> None:
    request = _build()
    assert request["model"] == "gpt-4o-mini"
    assert request["messages"][:2] == HISTORY
    assistant = request["messages"][2]
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get", "arguments": '{"a":1}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "put", "arguments": '{"b":2}'},
            },
        ],
    }
    assert request["messages"][3:] == [
        {"role": "tool", "tool_call_id": "call_a", "content": "A"},
        {"role": "tool", "tool_call_id": "call_b", "content": '{"ok":true}'},
    ]
    assert request["tools"] == TOOLS
    assert (
        request["tool_choice"],
        request["parallel_tool_calls"],
        request["max_completion_tokens"],
    ) == ("auto", True, 256)
    assert "response_format" not in request
    json.dumps(request)  # JSON-ready


def test_results_are_put_in_call_order_and_an_error_result_is_never_success_text() -> None:
    request = _build(
        results=[ToolResult("call_b", "fine"), ToolResult("call_a", "disk full", is_error=True)]
    )
    tool = request["messages"][3:]
    assert [m["tool_call_id"] for m in tool] == ["call_a", "call_b"]
    assert json.loads(tool[0]["content"]) == {"error": "disk full"}
    assert tool[1]["content"] == "fine"


def test_a_body_turn_continues_the_same_way() -> None:
    request = _build(parse_response(BODY))
    assert [m["role"] for m in request["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]


@pytest.mark.parametrize(
    "results",
    [[ToolResult("call_a", "A")], [*RESULTS, ToolResult("call_c", "C")], [RESULTS[0], RESULTS[0]]],
)
def test_results_must_match_the_calls_exactly(results: list[ToolResult]) -> None:
    with pytest.raises(BindingError):
        _build(results=results)


def test_a_mutated_turn_is_refused() -> None:
    turn = parse_stream(sse(two_calls()))
    turn.tool_calls[0]["function"]["arguments"] = '{"a":2}'
    with pytest.raises(ContinuationError, match="digest"):
        _build(turn)
    turn = parse_stream(sse(two_calls()))
    with pytest.raises(ContinuationError, match="digest"):
        _build(dataclasses.replace(turn, content="smuggled"))


def test_a_turn_without_released_calls_cannot_be_continued() -> None:
    text = parse_response(body({"content": "done"}, "stop"))
    with pytest.raises(ContinuationError, match="released"):
        _build(text, results=[])


def test_every_observed_name_must_be_declared() -> None:
    with pytest.raises(ContinuationError, match="put"):
        _build(tools=TOOLS[:1])
    earlier = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "old", "arguments": "{}"}}
        ],
    }
    history = [*HISTORY, earlier, {"role": "tool", "tool_call_id": "c0", "content": "x"}]
    with pytest.raises(ContinuationError, match="old"):
        _build(messages=history)
    with pytest.raises(ContinuationError, match="tool_choice names"):
        _build(tool_choice={"type": "function", "function": {"name": "nope"}})


def test_tools_must_state_strict() -> None:
    loose = [{"type": "function", "function": {"name": "get"}}, TOOLS[1]]
    with pytest.raises(UsageError, match="strict"):
        _build(tools=loose)
    with pytest.raises(UsageError, match="declared twice"):
        _build(tools=[*TOOLS, TOOLS[0]])


@pytest.mark.parametrize(
    ("history", "match"),
    [
        ([*HISTORY, {"role": "tool", "tool_call_id": "ghost", "content": "x"}], "answers no call"),
        (
            [
                *HISTORY,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c9",
                            "type": "function",
                            "function": {"name": "get", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "?"},
            ],
            "have no tool message",
        ),
        ([*HISTORY, {"role": "assistant", "content": "hi"}], "must end with"),
        ([], "at least"),
    ],
)
def test_a_broken_history_is_refused(history: list[dict[str, Any]], match: str) -> None:
    with pytest.raises(ContinuationError, match=match):
        _build(messages=history)


@pytest.mark.parametrize(
    "changes",
    [
        {"model": ""},
        {"messages": "hi"},
        {"tools": {"get": {}}},
        {"tool_choice": "sometimes"},
        {"tool_choice": 3},
        {"parallel_tool_calls": "yes"},
        {"response_format": "json"},
        {"max_completion_tokens": 0},
        {"max_completion_tokens": True},
    ],
)
def test_arguments_of_the_wrong_shape_are_usage_errors(changes: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        _build(**changes)


def test_the_inputs_are_not_mutated_and_the_output_shares_nothing() -> None:
    turn = parse_stream(sse(two_calls()))
    history = json.loads(json.dumps(HISTORY))
    request = _build(turn, messages=history, response_format={"type": "json_object"})
    request["messages"][0]["content"] = "changed"
    request["messages"][2]["tool_calls"][0]["id"] = "changed"
    assert history == HISTORY
    assert turn.tool_calls[0]["id"] == "call_a"
    assert request["response_format"] == {"type": "json_object"}
