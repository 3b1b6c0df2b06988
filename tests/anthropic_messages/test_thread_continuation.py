"""build_thread_continuation: only the new user message, the thread proof, the exact binding,
the fingerprint rules checked before sending, and the 2026-07-21 baseline refusing it."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate.anthropic_messages import (
    RECOVERY_ERROR_TEXT,
    Turn,
    build_thread_continuation,
    parse_stream,
)

from .wire import wire_fixtures

FIXTURES = {f.name: f for f in wire_fixtures()}
TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object"}}
    for n in ("get_weather", "lookup", "list_dir", "write_file", "set_reminder")
]
CREATE = {
    "model": "model-x",
    "max_tokens": 1024,
    "system": "Be brief.",
    "tools": TOOLS,
    "tool_choice": {"type": "auto"},
    "messages": [{"role": "user", "content": "Please help."}],
    "thread": {"type": "create"},
}


def turn_of(name: str, baseline: str = "2026-11") -> Turn:
    return parse_stream(FIXTURES[name].data, baseline=baseline)


def build(turn: Turn, results: Any = (), **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("previous_message_id", turn.message_id)
    kwargs.setdefault("thread_request", CREATE)
    kwargs.setdefault("model", "model-x")
    kwargs.setdefault("max_tokens", 1024)
    kwargs.setdefault("tools", TOOLS)
    kwargs.setdefault("system", "Be brief.")
    kwargs.setdefault("request_controls", {"tool_choice": {"type": "auto"}})
    return build_thread_continuation(turn, results, **kwargs)


def test_thread_continuation_sends_only_the_new_user_message() -> None:
    turn = turn_of("tool_use_single")
    request = build(turn, [ToolResult("c-weather-1", "18C")], user_content="thanks")
    assert request == {
        "model": "model-x",
        "max_tokens": 1024,
        "thread": {"type": "continue", "previous_message_id": "m-0002"},
        "tool_choice": {"type": "auto"},
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c-weather-1", "content": "18C"},
                    {"type": "text", "text": "thanks"},
                ],
            }
        ],
    }


def test_thread_recovery_calls_get_forced_is_error_results_in_block_order() -> None:
    turn = turn_of("eager_invalid_json")
    (user,) = build(turn, [ToolResult("e-2", "ok")])["messages"]
    first, second = user["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "e-1",
        "content": RECOVERY_ERROR_TEXT[turn.recovery_calls[0].reason],
        "is_error": True,
    }
    assert second["tool_use_id"] == "e-2"
    assert "is_error" not in second


def test_thread_pause_turn_continues_with_no_messages() -> None:
    request = build(turn_of("pause_turn"))
    assert request["messages"] == []
    with pytest.raises(ContinuationError, match="unchanged"):
        build(turn_of("pause_turn"), user_content="more")


def test_thread_continuation_can_follow_a_continue_request() -> None:
    previous = {
        "model": "model-x",
        "max_tokens": 1024,
        "messages": [],
        "thread": {"type": "continue", "previous_message_id": "m-earlier"},
    }
    request = build(
        turn_of("tool_use_single"),
        [ToolResult("c-weather-1", "18C")],
        thread_request=previous,
        request_controls=None,
    )
    assert request["thread"]["previous_message_id"] == "m-0002"


def test_thread_continuation_needs_a_turn_made_in_a_thread() -> None:
    unthreaded = {k: v for k, v in CREATE.items() if k != "thread"}
    for request in (unthreaded, {**CREATE, "thread": {"type": "other"}}):
        with pytest.raises(ContinuationError, match="not created or continued in a thread"):
            build(
                turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], thread_request=request
            )
    with pytest.raises(UsageError, match="thread_request"):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], thread_request=None)


def test_thread_continuation_is_refused_on_the_2026_07_21_baseline() -> None:
    turn = turn_of("tool_use_single", baseline="2026-07-21")
    with pytest.raises(ContinuationError, match="2026-07-21 baseline has no message threads"):
        build(turn, [ToolResult("c-weather-1", "18C")])


def test_thread_previous_message_id_must_name_the_turn() -> None:
    turn = turn_of("tool_use_single")
    with pytest.raises(ContinuationError, match="is not the turn's id"):
        build(turn, [ToolResult("c-weather-1", "18C")], previous_message_id="m-other")
    with pytest.raises(UsageError, match="previous_message_id"):
        build(turn, [ToolResult("c-weather-1", "18C")], previous_message_id=7)


def test_thread_results_bind_exactly_and_the_digest_is_rechecked() -> None:
    turn = turn_of("tool_use_single")
    with pytest.raises(BindingError):
        build(turn, [ToolResult("other", "18C")])
    mutated = dataclasses.replace(turn, model="forged")
    with pytest.raises(ContinuationError, match="digest"):
        build(mutated, [ToolResult("c-weather-1", "18C")])


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"tools": TOOLS[:-1]}, r"\['tools'\] differ"),
        ({"system": "Be verbose."}, r"\['system'\] differ"),
        ({"model": "model-y"}, "differs from the thread's"),
        ({"request_controls": None}, r"re-send the thread's controls \['tool_choice'\]"),
        ({"request_controls": {"tool_choice": {"type": "auto"}, "thread": {}}}, "thread"),
    ],
)
def test_thread_fingerprint_rules_are_enforced_before_sending(
    change: dict[str, Any], match: str
) -> None:
    with pytest.raises(ContinuationError, match=match):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "18C")], **change)


def test_thread_continue_request_with_system_or_tools_is_refused() -> None:
    previous = {**CREATE, "thread": {"type": "continue", "previous_message_id": "m-earlier"}}
    with pytest.raises(ContinuationError, match="does not send system or tools"):
        build(
            turn_of("tool_use_single"), [ToolResult("c-weather-1", "18C")], thread_request=previous
        )


def test_thread_undeclared_tool_is_refused() -> None:
    tools = TOOLS[1:]
    create = {**CREATE, "tools": tools}
    with pytest.raises(ContinuationError, match="not declared"):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "18C")],
            tools=tools,
            thread_request=create,
        )


def test_thread_inputs_stay_unchanged() -> None:
    create = copy.deepcopy(CREATE)
    request = build(
        turn_of("tool_use_single"), [ToolResult("c-weather-1", "18C")], thread_request=create
    )
    request["tool_choice"]["type"] = "any"
    assert create == CREATE
