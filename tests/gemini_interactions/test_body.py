"""parse_interaction: create vs GET bodies, the history boundary, and the same terminal gate."""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import pytest

from callgate import (
    JSONError,
    ProviderError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
)
from callgate.gemini_interactions import parse_interaction, parse_response

from .wire import fcall

USER = {"type": "user_input", "content": [{"type": "text", "text": "hi"}]}


def body(
    status: str = "requires_action", steps: list[Any] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"id": "b-1", "status": status, "steps": steps or [], **extra}


def test_create_body_releases_its_calls() -> None:
    turn = parse_interaction(body(steps=[fcall("a", "f", {"x": 1})]), source="create")
    assert turn.origin == "create"
    assert [c.call_id for c in turn.calls] == ["a"]


def test_parse_response_is_parse_interaction_with_create_default() -> None:
    obj = body(steps=[fcall("a", "f", {})])
    assert parse_response(obj) == parse_interaction(obj, source="create")
    obj_get = body(steps=[USER, fcall("a", "f", {})])
    assert parse_response(obj_get, source="get").origin == "get"


@pytest.mark.parametrize("kind", ["user_input", "function_result"])
def test_create_body_with_input_history_is_refused(kind: str) -> None:
    """The create/get history boundary: a create body holds model steps only."""
    step = USER if kind == "user_input" else {"type": kind, "call_id": "z", "result": "r"}
    with pytest.raises(SequenceError) as info:
        parse_interaction(body(steps=[step, fcall("a", "f", {})]), source="create")
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_get_body_must_start_with_user_input() -> None:
    with pytest.raises(SequenceError):
        parse_interaction(body(steps=[fcall("a", "f", {})]), source="get")


def test_get_body_history_calls_are_not_released_again() -> None:
    steps = [
        USER,
        fcall("old", "f", {}),
        {"type": "function_result", "call_id": "old", "name": "f", "result": "ok"},
        fcall("new", "f", {"n": 2}),
    ]
    turn = parse_interaction(body(steps=steps), source="get")
    assert [c.call_id for c in turn.calls] == ["new"]
    answered = parse_interaction(body("completed", steps=steps[:3]), source="get")
    assert answered.calls == ()


def test_get_body_result_without_its_result_value_still_answers_its_call() -> None:
    # The gate binds a result to its call by call_id; the result value is the history's.
    steps = [USER, fcall("old", "f", {}), {"type": "function_result", "call_id": "old"}]
    turn = parse_interaction(body("completed", steps=steps), source="get")
    assert (turn.calls, turn.steps[2]) == ((), steps[2])


@pytest.mark.parametrize("ident", [None, "", 7])
def test_get_body_result_without_its_call_id_is_refused(ident: Any) -> None:
    result: dict[str, Any] = {"type": "function_result", "result": "r"}
    if ident is not None:
        result["call_id"] = ident
    with pytest.raises(
        SchemaError, match="function_result step needs a non-empty string 'call_id'"
    ):
        parse_interaction(body(steps=[USER, fcall("a", "f", {}), result]), source="get")


@pytest.mark.parametrize(
    "result",
    [
        {"type": "function_result", "call_id": "ghost", "result": "r"},
        {"type": "function_result", "call_id": "a", "name": "other", "result": "r"},
    ],
)
def test_get_body_result_for_an_unknown_call_or_name_is_refused(result: dict[str, Any]) -> None:
    with pytest.raises(SequenceError):
        parse_interaction(body(steps=[USER, fcall("a", "f", {}), result]), source="get")


def test_body_function_call_arguments_must_be_an_object() -> None:
    step = {"type": "function_call", "id": "a", "name": "f", "arguments": '{"x":1}'}
    with pytest.raises(SchemaError):
        parse_interaction(body(steps=[step]), source="create")


def test_body_unknown_step_and_mcp_per_baseline() -> None:
    with pytest.raises(UnsupportedProviderState):
        parse_interaction(body(steps=[{"type": "hologram"}]), source="create")
    mcp = {
        "type": "mcp_server_tool_call",
        "id": "m",
        "name": "n",
        "server_name": "s",
        "arguments": {},
    }
    # The MCP server pair is in both baselines' step unions (2.12.1 decodes 17 step types,
    # 3.6.1 23); the retrieval pair only in 2026-11's.
    for baseline in ("2026-11", "2026-07-21"):
        turn = parse_interaction(body("completed", steps=[mcp]), source="create", baseline=baseline)
        assert turn.calls == ()
        assert [(c.tool, c.id, c.status) for c in turn.hosted_calls] == [
            ("mcp_server_tool", "m", None)
        ]
    retrieval = {"type": "retrieval_call", "id": "r", "arguments": {"queries": ["q"]}}
    assert parse_interaction(body("completed", steps=[retrieval]), source="create").hosted_calls
    with pytest.raises(UnsupportedProviderState):
        parse_interaction(
            body("completed", steps=[retrieval]), source="create", baseline="2026-07-21"
        )


def test_body_terminal_gate_matches_the_stream() -> None:
    with pytest.raises(ProviderError) as info:
        parse_interaction(body("failed", steps=[fcall("a", "f", {})]), source="create")
    assert info.value.turn is not None
    assert info.value.turn.calls == ()
    with pytest.raises(SequenceError):
        parse_interaction(body("completed", steps=[fcall("a", "f", {})]), source="create")
    with pytest.raises(UnsupportedProviderState):
        parse_interaction(body("in_progress"), source="create")


def test_body_usage_absent_vs_zero() -> None:
    steps = [fcall("a", "f", {})]
    assert parse_interaction(body(steps=steps), source="create").usage is None
    zero = {"total_tokens": 0}
    assert parse_interaction(body(steps=steps, usage=zero), source="create").usage == zero


def test_body_from_bytes_and_strictness() -> None:
    raw = (
        b'{"id":"b","status":"requires_action",'
        b'"steps":[{"type":"function_call","id":"a","name":"f","arguments":{}}]}'
    )
    assert parse_interaction(raw, source="create").calls[0].call_id == "a"
    with pytest.raises(JSONError):
        parse_interaction(b'{"id":"b","id":"c","status":"completed"}', source="create")
    with pytest.raises(SchemaError):
        parse_interaction(b"[]", source="create")
    with pytest.raises(SchemaError):  # "" or absent means unstored; a non-string is drift
        parse_interaction(body(id=1), source="create")


def test_body_caller_dict_is_copied() -> None:
    obj = body(steps=[fcall("a", "f", {"x": 1})])
    before = copy.deepcopy(obj)
    turn = parse_interaction(obj, source="create")
    obj["steps"][0]["arguments"]["x"] = 2
    assert turn.calls[0].arguments == {"x": 1}
    turn.calls[0].arguments["y"] = 1
    assert obj["steps"][0]["arguments"] == {"x": 2}
    assert before["steps"][0]["arguments"] == {"x": 1}


def test_body_bad_source_is_misuse() -> None:
    with pytest.raises(UsageError):
        parse_interaction(body(), source="stream")  # type: ignore[arg-type]


def test_turn_origin_is_the_source_and_the_dead_source_alias_is_gone() -> None:
    turn = parse_interaction(body(steps=[USER, fcall("a", "f", {})]), source="get")
    assert turn.origin == "get"
    assert not hasattr(turn, "source")


def test_a_body_mapping_that_is_not_a_dict_is_parsed_like_the_dict() -> None:
    obj = body(steps=[fcall("a", "f", {"x": 1})])
    assert parse_response(MappingProxyType(obj)).digest == parse_response(obj).digest


@pytest.mark.parametrize("bad", [3, None, ["x"], ("x",)])
def test_a_body_of_another_type_is_misuse(bad: Any) -> None:
    with pytest.raises(UsageError, match="a mapping or an official SDK object"):
        parse_interaction(bad, source="create")


def test_a_body_holding_a_non_json_value_is_a_json_error() -> None:
    with pytest.raises(JSONError, match="to_dict"):
        parse_response(body(steps=[fcall("a", "f", {"x": {1, 2}})]))


def test_the_body_text_is_its_model_output_text() -> None:
    out = {"type": "model_output", "content": [{"type": "text", "text": "Hel"}]}
    more = {"type": "model_output", "content": [{"type": "text", "text": "lo"}]}
    assert parse_response(body("completed", steps=[out, more])).text == "Hello"
    assert parse_response(body(steps=[fcall("a", "f", {})])).text == ""
