"""Programmatic tool calling (issue 10, B3): a message_start that already holds the complete
message, callers on tool_use blocks, and the container the next request must carry."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from callgate import (
    ContinuationError,
    SchemaError,
    SequenceError,
    ToolResult,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.anthropic_messages import CARRY_CONTAINER, Parser, build_continuation, parse_stream

from .wire import (
    FIXTURE_DIR,
    MESSAGE_STOP,
    PING,
    block_start,
    message_delta,
    message_start,
    sse,
    text_block,
    tool_turn_events,
)

FIRST = (FIXTURE_DIR / "programmatic_first.sse").read_bytes()
FOLLOWUP = (FIXTURE_DIR / "programmatic_followup.sse").read_bytes()
CONTAINER_ID = "container_011CgPqT"
CALLER = {"type": "code_execution_20260120", "tool_id": "srvtoolu_01Pc"}
TOOLS = [
    {"type": "code_execution_20260120", "name": "code_execution"},
    {
        "name": "lookup",
        "description": "look up",
        "input_schema": {"type": "object"},
        "allowed_callers": ["code_execution_20260120"],
    },
]


def complete_start(content: list[Any], reason: Any = "tool_use", **extra: Any) -> dict[str, Any]:
    event = message_start()
    event["message"].update(content=content, stop_reason=reason, **extra)
    return event


def tool(call_id: str = "t1", caller: Any = CALLER, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "lookup", "input": {"q": "a"}, **extra}
    if caller is not None:
        block["caller"] = caller
    return block


# -- the complete message_start shape -------------------------------------------------


def test_complete_message_start_then_message_stop_releases_its_calls() -> None:
    turn = parse_stream(FOLLOWUP)
    assert turn.complete
    assert [(c.call_id, c.arguments, c.caller) for c in turn.calls] == [
        ("toolu_p2", {"q": "b"}, CALLER)
    ]
    assert turn.calls[0].programmatic
    assert turn.container_id == CONTAINER_ID
    assert turn.usage == {"input_tokens": 40, "output_tokens": 21}


def test_complete_message_start_through_feed_event_gives_the_same_turn() -> None:
    parser = Parser()
    for event in (complete_start([tool("toolu_p2")]), PING, MESSAGE_STOP):
        parser.feed_event(event)
    turn = parser.finish()
    assert [c.call_id for c in turn.calls] == ["toolu_p2"]


def test_complete_message_start_with_mixed_blocks_and_end_turn_releases_nothing() -> None:
    blocks = [{"type": "text", "text": "done"}, tool("t9")]
    turn = parse_stream(sse(complete_start(blocks, "end_turn"), MESSAGE_STOP))
    assert turn.calls == ()
    assert [r.reason for r in turn.recovery_calls] == ["not_released"]
    assert turn.recovery_calls[0].caller == CALLER


def test_complete_message_start_with_max_tokens_recovers_its_calls() -> None:
    turn = parse_stream(sse(complete_start([tool()], "max_tokens"), MESSAGE_STOP))
    assert turn.calls == ()
    assert [r.reason for r in turn.recovery_calls] == ["max_tokens"]


@pytest.mark.parametrize(
    "after",
    [
        [block_start(1, {"type": "text", "text": ""})],
        [message_delta("tool_use")],
        [message_delta("end_turn")],
    ],
    ids=["block_start", "message_delta", "message_delta_changing_reason"],
)
def test_nothing_may_be_streamed_after_a_complete_message_start(after: list[Any]) -> None:
    with pytest.raises(SequenceError, match="carried the complete message") as info:
        parse_stream(sse(complete_start([tool()]), *after, MESSAGE_STOP))
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_complete_message_start_without_message_stop_is_truncated() -> None:
    with pytest.raises(TruncatedStreamError, match="before message_stop") as info:
        parse_stream(sse(complete_start([tool()])))
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_complete_message_start_with_an_unknown_stop_reason_fails_closed() -> None:
    with pytest.raises(UnsupportedProviderState, match="unknown stop_reason"):
        parse_stream(sse(complete_start([tool()], "future_reason"), MESSAGE_STOP))


def test_compaction_is_unknown_to_the_stable_baseline_in_a_complete_start() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_stream(sse(complete_start([], "compaction"), MESSAGE_STOP))


@pytest.mark.parametrize("reason", [["tool_use"], 3, {"x": 1}])
def test_complete_message_start_with_a_non_string_stop_reason_is_a_schema_error(
    reason: Any,
) -> None:
    with pytest.raises(SchemaError, match="stop_reason is not a string"):
        parse_stream(sse(complete_start([tool()], reason), MESSAGE_STOP))


def test_content_without_a_stop_reason_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="no stop_reason"):
        parse_stream(sse(complete_start([tool()], None), MESSAGE_STOP))


@pytest.mark.parametrize(
    "block",
    [
        {"type": "tool_use", "id": "t1", "name": "lookup"},  # no input
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": "{}"},
        {"type": "thinking", "thinking": "hmm"},  # no signature
        {"type": "text", "text": 3},
        "not a block",
    ],
    ids=["no_input", "string_input", "unsigned_thinking", "text_not_a_string", "string"],
)
def test_incomplete_blocks_in_a_complete_start_are_schema_errors(block: Any) -> None:
    with pytest.raises(SchemaError):
        parse_stream(sse(complete_start([block]), MESSAGE_STOP))


def test_a_text_block_without_text_in_a_complete_start_is_empty_text() -> None:
    turn = parse_stream(sse(complete_start([{"type": "text"}, tool()]), MESSAGE_STOP))
    assert (turn.text, turn.content[0], len(turn.calls)) == ("", {"type": "text"}, 1)


def test_duplicate_ids_in_a_complete_start_are_a_sequence_error() -> None:
    with pytest.raises(SequenceError, match="used twice"):
        parse_stream(sse(complete_start([tool("t1"), tool("t1")]), MESSAGE_STOP))


def test_unknown_block_in_a_complete_start_fails_closed() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_stream(sse(complete_start([{"type": "mcp_tool_use"}]), MESSAGE_STOP))


def test_empty_complete_start_with_a_known_reason_is_accepted() -> None:
    turn = parse_stream(sse(complete_start([], "end_turn"), MESSAGE_STOP))
    assert (turn.stop_reason, turn.content) == ("end_turn", ())


# -- callers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "programmatic"),
    [
        (None, False),
        ({"type": "direct"}, False),
        ({"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}, True),
        ({"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}, True),
    ],
)
def test_sdk_callers_are_released_and_kept_on_the_call(caller: Any, programmatic: bool) -> None:
    turn = parse_stream(sse(complete_start([tool(caller=caller)]), MESSAGE_STOP))
    (call,) = turn.calls
    assert call.caller == caller
    assert call.programmatic is programmatic


def test_streamed_programmatic_call_is_released_with_its_caller() -> None:
    turn = parse_stream(FIRST)
    (call,) = turn.calls
    assert (call.call_id, call.caller, call.programmatic) == ("toolu_p1", CALLER, True)
    assert turn.container_id == CONTAINER_ID


@pytest.mark.parametrize(
    ("caller", "error", "match"),
    [
        ({"type": "code_execution_20260521", "tool_id": "s"}, UnsupportedProviderState, "caller"),
        ({"type": "program"}, UnsupportedProviderState, "unknown caller type"),
        ({"type": "code_execution_20250825"}, SchemaError, "tool_id"),
        ({"type": "code_execution_20250825", "tool_id": ""}, SchemaError, "tool_id"),
        ("code_execution_20250825", SchemaError, "caller"),
        ({"tool_id": "s"}, SchemaError, "caller"),
    ],
)
def test_callers_the_sdk_does_not_define_fail_closed(
    caller: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        parse_stream(sse(complete_start([tool(caller=caller)]), MESSAGE_STOP))
    events = tool_turn_events(("c1", "lookup", ["{}"]))
    events[1]["content_block"]["caller"] = caller
    with pytest.raises(error, match=match):
        parse_stream(sse(*events))


def test_a_null_caller_is_refused_not_read_as_absent() -> None:
    with pytest.raises(SchemaError, match="caller"):
        parse_stream(sse(complete_start([tool(caller=None) | {"caller": None}])))


# -- the container in the next request ------------------------------------------------


def build(turn: Any, results: Any, **kwargs: Any) -> dict[str, Any]:
    history = [{"role": "user", "content": "look up a and b"}]
    return build_continuation(
        turn, results, history=history, model="model-x", max_tokens=100, tools=TOOLS, **kwargs
    )


def test_builder_carries_the_turn_container_by_default() -> None:
    turn = parse_stream(FIRST)
    request = build(turn, [ToolResult("toolu_p1", "A")])
    assert request["container"] == CONTAINER_ID
    assert build(turn, [ToolResult("toolu_p1", "A")], container=CARRY_CONTAINER) == request
    assistant = request["messages"][1]["content"]
    assert assistant[2]["caller"] == CALLER  # replayed unchanged


def test_builder_carries_the_container_of_a_followup_turn() -> None:
    request = build(parse_stream(FOLLOWUP), [ToolResult("toolu_p2", "B")])
    assert request["container"] == CONTAINER_ID
    assert request["messages"][-1]["content"][0]["tool_use_id"] == "toolu_p2"


def test_builder_accepts_the_same_container_explicitly() -> None:
    turn = parse_stream(FIRST)
    results = [ToolResult("toolu_p1", "A")]
    assert build(turn, results, container=CONTAINER_ID)["container"] == CONTAINER_ID
    given = {"id": CONTAINER_ID, "skills": [{"skill_id": "pptx", "type": "anthropic"}]}
    request = build(turn, results, container=given)
    assert request["container"] == given
    assert request["container"] is not given


@pytest.mark.parametrize("other", ["container_other", {"id": "container_other"}, {"skills": []}])
def test_builder_refuses_a_different_container(other: Any) -> None:
    with pytest.raises(ContinuationError, match=CONTAINER_ID):
        build(parse_stream(FIRST), [ToolResult("toolu_p1", "A")], container=other)


def test_builder_refuses_to_drop_the_container_code_waits_in() -> None:
    with pytest.raises(ContinuationError, match="waits for their results"):
        build(parse_stream(FIRST), [ToolResult("toolu_p1", "A")], container=None)


def test_builder_drops_a_container_only_when_asked_and_no_code_waits() -> None:
    container = {"id": "c-7", "expires_at": "2026-12-01T10:30:00Z"}
    events = tool_turn_events(("c1", "lookup", ["{}"]))
    events[-2] = message_delta("tool_use", container=container)
    turn = parse_stream(sse(*events))
    results = [ToolResult("c1", "x")]
    assert build(turn, results)["container"] == "c-7"
    assert "container" not in build(turn, results, container=None)


def test_builder_without_a_turn_container_sends_none_unless_given() -> None:
    turn = parse_stream(sse(*tool_turn_events(("c1", "lookup", ["{}"]))))
    results = [ToolResult("c1", "x")]
    assert "container" not in build(turn, results)
    assert build(turn, results, container="c-new")["container"] == "c-new"


@pytest.mark.parametrize("bad", [5, b"c", ""])
def test_builder_refuses_a_container_of_the_wrong_type(bad: Any) -> None:
    turn = parse_stream(sse(*tool_turn_events(("c1", "lookup", ["{}"]))))
    with pytest.raises(UsageError):
        build(turn, [ToolResult("c1", "x")], container=bad)


def test_container_in_request_controls_points_to_the_keyword() -> None:
    with pytest.raises(ContinuationError, match="container="):
        build(
            parse_stream(FIRST),
            [ToolResult("toolu_p1", "A")],
            request_controls={"container": CONTAINER_ID},
        )


def test_pause_turn_keeps_its_container() -> None:
    container = {"id": "c-9", "expires_at": "2026-12-01T10:30:00Z"}
    events = [
        message_start(),
        *text_block(0, "..."),
        message_delta("pause_turn", container=container),
    ]
    turn = parse_stream(sse(*events, MESSAGE_STOP))
    request = build(turn, [])
    assert request["container"] == "c-9"


def test_programmatic_turn_digest_covers_the_caller() -> None:
    turn = parse_stream(FOLLOWUP)
    tampered = copy.deepcopy(turn.content[0])
    tampered["caller"]["tool_id"] = "srvtoolu_other"
    turn.content[0]["caller"]["tool_id"] = "srvtoolu_other"
    with pytest.raises(ContinuationError, match="digest"):
        build(turn, [ToolResult("toolu_p2", "B")])
    assert tampered == turn.content[0]
