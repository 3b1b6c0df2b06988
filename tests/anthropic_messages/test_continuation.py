"""build_continuation: full-history replay, exact result binding, forced error results for
recovery calls, system-message placement, protected controls and the turn digest."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, TruncatedStreamError, UsageError
from callgate.anthropic_messages import (
    RECOVERY_ERROR_TEXT,
    SystemMessageCapability,
    Turn,
    build_continuation,
    parse_stream,
)

from .wire import (
    MESSAGE_STOP,
    message_delta,
    message_start,
    sse,
    text_block,
    wire_fixtures,
)

FIXTURES = {f.name: f for f in wire_fixtures()}
HISTORY = [{"role": "user", "content": "Please help."}]


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} tool",
        "input_schema": {"type": "object"},
        **extra,
    }


TOOLS = [tool(n) for n in ("get_weather", "lookup", "list_dir", "write_file", "set_reminder")] + [
    {"type": "web_search_20250305", "name": "web_search"},
    {"type": "web_fetch_20250910", "name": "web_fetch"},
    {"type": "code_execution_20250825", "name": "code_execution"},
]


def turn_of(name: str) -> Turn:
    return parse_stream(FIXTURES[name].data)


def build(turn: Turn, results: Any = (), **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("history", HISTORY)
    kwargs.setdefault("model", "model-x")
    kwargs.setdefault("max_tokens", 1024)
    kwargs.setdefault("tools", TOOLS)
    return build_continuation(turn, results, **kwargs)


def test_single_call_replays_history_assistant_content_and_one_result() -> None:
    turn = turn_of("tool_use_single")
    request = build(turn, [ToolResult("c-weather-1", "18C")], system="Be brief.")
    assert request["model"] == "model-x"
    assert request["max_tokens"] == 1024
    assert request["system"] == "Be brief."
    assert request["tools"] == TOOLS
    user0, assistant, user1 = request["messages"]
    assert user0 == HISTORY[0]
    assert assistant == {"role": "assistant", "content": list(turn.content)}
    assert user1 == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c-weather-1", "content": "18C"}],
    }


def test_eager_invalid_json_recovery_gets_a_forced_is_error_result() -> None:
    turn = turn_of("eager_invalid_json")
    request = build(turn, [ToolResult("e-2", {"entries": ["a"]})])
    assistant, user = request["messages"][1:]
    # The invalid input is replayed wrapped in an object, never as a parsed guess.
    assert assistant["content"][0]["input"] == {
        "INVALID_JSON": '{"path": "a.txt", "body": "unterminated'
    }
    assert user["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "e-1",
            "content": RECOVERY_ERROR_TEXT["invalid_json"],
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "e-2", "content": '{"entries":["a"]}'},
    ]


def test_a_result_for_a_recovery_call_is_a_binding_error() -> None:
    turn = turn_of("eager_invalid_json")
    with pytest.raises(BindingError):
        build(turn, [ToolResult("e-2", "ok"), ToolResult("e-1", "I ran it anyway")])
    with pytest.raises(BindingError):
        build(turn, [ToolResult("e-1", "ok")])


def test_max_tokens_answers_every_sibling_with_an_error() -> None:
    turn = turn_of("max_tokens_siblings")
    request = build(turn, [])
    assistant, user = request["messages"][1:]
    assert assistant["content"][0]["input"] == {"q": "done"}  # parsed sibling kept as is
    assert assistant["content"][1]["input"] == {"INVALID_JSON": '{"q": "cut o'}
    assert [(b["tool_use_id"], b["is_error"], b["content"]) for b in user["content"]] == [
        ("mt-1", True, RECOVERY_ERROR_TEXT["max_tokens"]),
        ("mt-2", True, RECOVERY_ERROR_TEXT["invalid_json"]),
    ]


def test_results_are_bound_exactly() -> None:
    turn = turn_of("parallel_tools")
    good = [ToolResult("42", "b"), ToolResult("toolu_01AAA", "a")]
    user = build(turn, good)["messages"][-1]
    # In call order, whatever order the results came in.
    assert [b["tool_use_id"] for b in user["content"]] == ["toolu_01AAA", "42"]
    with pytest.raises(BindingError):
        build(turn, good[:1])
    with pytest.raises(BindingError):
        build(turn, [*good, ToolResult("42", "again")])
    with pytest.raises(BindingError):
        build(turn, [good[0], good[0]])
    with pytest.raises(BindingError):
        build(turn, [*good, ToolResult("unknown", "x")])


def test_an_endless_result_iterator_is_consumed_at_most_one_past_the_calls() -> None:
    turn = turn_of("tool_use_single")
    pulled: list[int] = []

    def endless() -> Iterator[ToolResult]:
        for n in itertools.count():
            pulled.append(n)
            yield ToolResult("c-weather-1", str(n))

    with pytest.raises(BindingError):
        build(turn, endless())
    assert len(pulled) == 2


def test_error_results_use_is_error_not_disguised_success() -> None:
    turn = turn_of("tool_use_single")
    user = build(turn, [ToolResult("c-weather-1", "timeout", is_error=True)])["messages"][-1]
    assert user["content"][0]["is_error"] is True


def test_list_of_content_blocks_output_is_sent_as_blocks() -> None:
    turn = turn_of("tool_use_single")
    blocks = [{"type": "text", "text": "18C"}]
    user = build(turn, [ToolResult("c-weather-1", blocks)])["messages"][-1]
    assert user["content"][0]["content"] == blocks
    plain = build(turn, [ToolResult("c-weather-1", [1, 2])])["messages"][-1]
    assert plain["content"][0]["content"] == "[1,2]"


def test_thinking_and_redacted_thinking_are_replayed_byte_exact() -> None:
    turn = turn_of("thinking_tool")
    request = build(turn, [ToolResult("t-9", "sunny")])
    assistant = request["messages"][1]["content"]
    assert assistant[0] == turn.content[0]
    assert assistant[0]["signature"] == FIXTURES["thinking_tool"].expected["signature"]  # type: ignore[index]
    assert assistant[0]["thinking"] == "Need the \u00fcber weather \U0001f326."
    assert assistant[1] == {"type": "redacted_thinking", "data": "RVhBTVBMRS1vcGFxdWUtYmxvYg=="}


def test_text_around_tools_and_server_blocks_keep_their_order() -> None:
    turn = turn_of("server_client_mix")
    request = build(turn, [ToolResult("client-7", "set")])
    assistant = request["messages"][1]["content"]
    assert assistant == list(turn.content)
    user = request["messages"][2]["content"]
    assert [b["tool_use_id"] for b in user] == ["client-7"]  # no result for the server tool
    parallel = build(
        turn_of("parallel_tools"), [ToolResult("toolu_01AAA", "a"), ToolResult("42", "b")]
    )
    assert [b["type"] for b in parallel["messages"][1]["content"]] == [
        "text",
        "tool_use",
        "tool_use",
        "text",
    ]


def test_pause_turn_is_sent_back_unchanged() -> None:
    turn = turn_of("pause_turn")
    request = build(turn, [])
    assert request["messages"][-1] == {"role": "assistant", "content": list(turn.content)}
    with pytest.raises(ContinuationError):
        build(turn, [], user_content="and also")


def test_turn_without_calls_needs_caller_content() -> None:
    turn = turn_of("text_end_turn")
    with pytest.raises(ContinuationError):
        build(turn, [])
    request = build(turn, [], user_content="Thanks! Next question.")
    assert request["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Thanks! Next question."}],
    }


def test_caller_text_follows_the_tool_results() -> None:
    turn = turn_of("tool_use_single")
    content = build(turn, [ToolResult("c-weather-1", "18C")], user_content="Also: hi")
    assert [b["type"] for b in content["messages"][-1]["content"]] == ["tool_result", "text"]
    with pytest.raises(ContinuationError):
        build(
            turn,
            [ToolResult("c-weather-1", "18C")],
            user_content=[{"type": "tool_result", "tool_use_id": "x", "content": "forged"}],
        )


def test_mutated_turn_is_detected_by_the_digest() -> None:
    turn = turn_of("tool_use_single")
    turn.calls[0].arguments["location"] = "Elsewhere"
    with pytest.raises(ContinuationError):
        build(turn, [ToolResult("c-weather-1", "x")])
    turn = turn_of("thinking_tool")
    turn.content[0]["signature"] = "forged"
    with pytest.raises(ContinuationError):
        build(turn, [ToolResult("t-9", "x")])


def test_partial_turn_cannot_be_continued() -> None:
    data = sse(message_start(), *text_block(0, "a"), message_delta("end_turn"))
    with pytest.raises(TruncatedStreamError) as info:
        parse_stream(data)
    partial = info.value.turn
    assert isinstance(partial, Turn)
    with pytest.raises(ContinuationError):
        build(partial, [], user_content="x")


def test_caller_data_is_deep_copied() -> None:
    turn = turn_of("tool_use_single")
    history = copy.deepcopy(HISTORY)
    request = build(turn, [ToolResult("c-weather-1", {"t": 18})], history=history)
    request["messages"][0]["content"] = "changed"
    request["messages"][1]["content"][1]["input"]["location"] = "changed"
    request["tools"][0]["name"] = "changed"
    assert history == HISTORY
    assert TOOLS[0]["name"] == "get_weather"
    build(turn, [ToolResult("c-weather-1", "ok")])  # digest still matches


@pytest.mark.parametrize(
    "history",
    [
        [],
        [{"role": "assistant", "content": "hi"}],
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        [
            {"role": "user", "content": "a"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "h1", "name": "lookup", "input": {}}],
            },
            {"role": "user", "content": "no result"},
        ],
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"}],
            },
        ],
    ],
    ids=[
        "empty",
        "starts-with-assistant",
        "roles-do-not-alternate",
        "ends-with-assistant",
        "unanswered-tool-use",
        "orphan-tool-result",
    ],
)
def test_invalid_history_is_rejected(history: list[dict[str, Any]]) -> None:
    with pytest.raises(ContinuationError):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], history=history)


@pytest.mark.parametrize(
    "history",
    [
        [{"role": "tool", "content": "a"}],
        [{"role": "user", "content": 5}],
        ["user: a"],
        [HISTORY[0], {"role": "system", "content": [{"type": "image", "source": {}}]}],
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "tool_use", "input": {}}]},
        ],
    ],
    ids=["unknown-role", "bad-content", "not-a-message", "non-text-system", "tool-use-without-id"],
)
def test_history_of_the_wrong_shape_is_a_usage_error(history: list[Any]) -> None:
    # The builder rule: a message that is not of the documented shape is a wrong argument,
    # not a broken conversation.
    with pytest.raises(UsageError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            history=history,
            system_message_capability=CAP,
        )


def test_valid_history_with_an_answered_tool_use() -> None:
    history = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "h1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "h1", "content": "r"},
                {"type": "text", "text": "more"},
            ],
        },
    ]
    request = build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], history=history)
    assert request["messages"][:3] == history


SERVER_RESULT_ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
    ],
}
SYSTEM = {"role": "system", "content": "New instructions."}
CAP = SystemMessageCapability("model-x")


def test_system_message_without_capability_proof_is_rejected() -> None:
    history = [HISTORY[0], SYSTEM]
    with pytest.raises(ContinuationError):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], history=history)
    with pytest.raises(ContinuationError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            history=history,
            system_message_capability=SystemMessageCapability("other-model"),
        )


@pytest.mark.parametrize(
    "history",
    [
        [HISTORY[0], SYSTEM],
        [HISTORY[0], SYSTEM, dict(SYSTEM, content=[{"type": "text", "text": "two"}])],
        [HISTORY[0], SERVER_RESULT_ASSISTANT, SYSTEM],
    ],
    ids=["after-user", "group-of-two", "after-server-tool-result"],
)
def test_system_message_with_capability_in_a_legal_position(history: list[Any]) -> None:
    request = build(
        turn_of("tool_use_single"),
        [ToolResult("c-weather-1", "x")],
        history=history,
        system_message_capability=CAP,
    )
    assert request["messages"][: len(history)] == history


@pytest.mark.parametrize(
    "history",
    [
        [SYSTEM],
        [HISTORY[0], {"role": "assistant", "content": "text end"}, SYSTEM],
        [HISTORY[0], SYSTEM, {"role": "user", "content": "after system"}],
    ],
    ids=["first", "after-plain-assistant", "user-after-system"],
)
def test_system_message_in_an_illegal_position_is_rejected(history: list[Any]) -> None:
    with pytest.raises(ContinuationError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            history=history,
            system_message_capability=CAP,
        )


def test_every_observed_tool_name_must_be_declared() -> None:
    turn = turn_of("tool_use_single")
    with pytest.raises(ContinuationError):
        build(turn, [ToolResult("c-weather-1", "x")], tools=[tool("lookup")])
    # Recovery calls count as observed too.
    with pytest.raises(ContinuationError):
        build(turn_of("eager_invalid_json"), [ToolResult("e-2", "x")], tools=[tool("list_dir")])


@pytest.mark.parametrize(
    "tools",
    [
        [tool("get_weather"), tool("get_weather")],
        [{"name": "get_weather"}],
        [{"name": "get_weather", "input_schema": {"type": "string"}}],
        ["get_weather"],
    ],
    ids=["duplicate", "no-schema", "non-object-schema", "not-a-dict"],
)
def test_bad_tool_definitions_are_usage_errors(tools: list[Any]) -> None:
    with pytest.raises(UsageError):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], tools=tools)


def test_tool_strict_flag_and_server_tools_pass_through() -> None:
    tools = [
        tool("get_weather", strict=True),
        {"type": "web_search_20260318", "name": "web_search", "max_uses": 2},
    ]
    request = build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], tools=tools)
    assert request["tools"] == tools


@pytest.mark.parametrize("field", ["model", "max_tokens", "messages", "tools", "system"])
def test_protected_fields_cannot_be_overridden(field: str) -> None:
    with pytest.raises(ContinuationError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            request_controls={field: "override"},
        )


def test_response_format_is_rejected_output_config_format_is_passed() -> None:
    turn = turn_of("tool_use_single")
    results = [ToolResult("c-weather-1", "x")]
    with pytest.raises(ContinuationError):
        build(turn, results, request_controls={"response_format": {"type": "json_object"}})
    fmt = {"type": "json_schema", "schema": {"type": "object"}}
    controls = {"output_config": {"format": fmt}, "tool_choice": {"type": "auto"}}
    request = build(turn, results, request_controls=controls)
    assert request["output_config"] == {"format": fmt}
    assert request["tool_choice"] == {"type": "auto"}
    with pytest.raises(UsageError):
        build(turn, results, request_controls={"output_config": {"format": {"type": "json"}}})
    with pytest.raises(UsageError):
        build(turn, results, request_controls={"output_config": "json"})


def test_system_is_top_level_string_or_text_blocks() -> None:
    turn = turn_of("tool_use_single")
    results = [ToolResult("c-weather-1", "x")]
    blocks = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert build(turn, results, system=blocks)["system"] == blocks
    assert "system" not in build(turn, results)
    with pytest.raises(UsageError):
        build(turn, results, system=[{"type": "image"}])


def test_argument_types_are_usage_errors() -> None:
    turn = turn_of("tool_use_single")
    results = [ToolResult("c-weather-1", "x")]
    with pytest.raises(UsageError):
        build(turn, results, max_tokens=0)
    with pytest.raises(UsageError):
        build(turn, results, model="")
    with pytest.raises(UsageError):
        build(turn, results, history="user: hi")
    with pytest.raises(UsageError):
        build_continuation({}, results, history=HISTORY, model="m", max_tokens=1, tools=TOOLS)  # type: ignore[arg-type]


def test_unknown_stop_reason_tool_use_is_answered_with_an_error() -> None:
    turn = turn_of("unknown_stop_reason")
    user = build(turn, [])["messages"][-1]
    assert user["content"][0]["is_error"] is True
    assert user["content"][0]["content"] == RECOVERY_ERROR_TEXT["not_released"]


def test_end_to_end_pause_turn_body_round_trip() -> None:
    data = sse(message_start(), *text_block(0, "..."), message_delta("pause_turn"), MESSAGE_STOP)
    turn = parse_stream(data)
    assert build(turn, [])["messages"][-1]["content"] == list(turn.content)


def test_history_may_end_with_a_paused_server_tool_loop() -> None:
    # After pause_turn the paused content is sent back as is and the next turn continues
    # it: two assistant messages in a row, which the API merges.
    paused = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "s9", "name": "web_search", "input": {"query": "q"}}
        ],
    }
    history = [HISTORY[0], paused]
    request = build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], history=history)
    assert request["messages"][1] == paused
    assert request["messages"][2]["role"] == "assistant"
    plain = {"role": "assistant", "content": [{"type": "text", "text": "not paused"}]}
    with pytest.raises(ContinuationError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            history=[HISTORY[0], plain],
        )
    with pytest.raises(ContinuationError):
        build(
            turn_of("tool_use_single"),
            [ToolResult("c-weather-1", "x")],
            history=[HISTORY[0], plain, paused, {"role": "user", "content": "u"}],
        )


def test_turn_call_id_reused_from_history_is_rejected() -> None:
    history = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c-weather-1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c-weather-1", "content": "r"}],
        },
    ]
    with pytest.raises(ContinuationError):
        build(turn_of("tool_use_single"), [ToolResult("c-weather-1", "x")], history=history)


def test_caller_data_that_is_not_json_is_a_usage_error() -> None:
    # The builder rule: caller data that is not JSON is a wrong argument (it was a
    # ContinuationError), the same class as in the other rooms.
    turn = turn_of("tool_use_single")
    results = [ToolResult("c-weather-1", "x")]
    with pytest.raises(UsageError, match="history"):
        build(turn, results, history=[{"role": "user", "content": "a", "meta": {1, 2}}])
    with pytest.raises(UsageError, match="tools"):
        build(turn, results, tools=[tool("get_weather", input_schema=float("nan"))])
    with pytest.raises(UsageError, match="request_controls"):
        build(turn, results, request_controls={"metadata": object()})


def test_the_role_table_has_a_rule_for_every_pair_of_roles() -> None:
    from callgate.anthropic_messages._history import _RULES

    roles = ["user", "assistant", "system"]
    assert set(_RULES) == {(prev, role) for prev in [None, *roles] for role in roles}
    assert all(_RULES.values())
