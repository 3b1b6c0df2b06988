"""Continuation builders: exact binding, protected fields, digest re-check, no aliasing."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate.openai_responses import (
    Turn,
    build_stateful_continuation,
    build_stateless_continuation,
)

from .check import run
from .wire import Stream, fc_item, message_item, reasoning_item

TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": True,
    },
    {"type": "function", "name": "get_time", "parameters": None, "strict": None},
]
RESULTS = [ToolResult("call_w", '{"temp":20}'), ToolResult("call_t", {"time": "12:00"})]


def make_turn(encrypted: str | None = "enc-1") -> Turn:
    s = Stream("resp_prev").created()
    s.reasoning(0, reasoning_item("rs_1", "plan", encrypted))
    s.call(1, fc_item("fc_w", "call_w", "get_weather", '{"city":"Paris"}'))
    s.call(2, fc_item("fc_t", "call_t", "get_time", "{}"))
    return run(s.completed().events)


def stateful(turn: Turn, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "previous_response_was_stored": True,
        "store": True,
        "model": "gpt-test",
        "instructions": "Be brief.",
        "tools": TOOLS,
    }
    kwargs.update(overrides)
    results = kwargs.pop("results", RESULTS)
    return build_stateful_continuation(turn, results, **kwargs)


def stateless(turn: Turn, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "prior_input_items": [{"role": "user", "content": "Weather and time in Paris?"}],
        "store": False,
        "model": "gpt-test",
        "instructions": "Be brief.",
        "tools": TOOLS,
    }
    kwargs.update(overrides)
    results = kwargs.pop("results", RESULTS)
    return build_stateless_continuation(turn, results, **kwargs)


def test_stateful_request_has_exactly_the_protocol_fields() -> None:
    body = stateful(make_turn(), request_controls={"tool_choice": "auto"})
    assert body == {
        "model": "gpt-test",
        "instructions": "Be brief.",
        "tools": TOOLS,
        "previous_response_id": "resp_prev",
        "store": True,
        "input": [
            {"type": "function_call_output", "call_id": "call_w", "output": '{"temp":20}'},
            {"type": "function_call_output", "call_id": "call_t", "output": '{"time":"12:00"}'},
        ],
        "tool_choice": "auto",
    }


def test_outputs_are_keyed_by_call_id_never_item_id() -> None:
    body = stateful(make_turn())
    assert [item["call_id"] for item in body["input"]] == ["call_w", "call_t"]
    with pytest.raises(BindingError):
        stateful(make_turn(), results=[ToolResult("fc_w", "x"), ToolResult("fc_t", "y")])


def test_results_are_put_in_call_order() -> None:
    body = stateful(make_turn(), results=list(reversed(RESULTS)))
    assert [item["call_id"] for item in body["input"]] == ["call_w", "call_t"]


@pytest.mark.parametrize(
    "results",
    [RESULTS[:1], [*RESULTS, ToolResult("call_x", "")], [RESULTS[0], RESULTS[0]]],
    ids=["missing", "extra", "duplicate"],
)
def test_result_binding_is_exact(results: list[ToolResult]) -> None:
    with pytest.raises(BindingError):
        stateful(make_turn(), results=results)
    with pytest.raises(BindingError):
        stateless(make_turn(), results=results)


def test_store_false_is_sent_explicitly_and_instructions_none_is_omitted() -> None:
    body = stateful(make_turn(), store=False, instructions=None)
    assert body["store"] is False
    assert "instructions" not in body


def test_previous_response_must_be_stored() -> None:
    with pytest.raises(ContinuationError):
        stateful(make_turn(), previous_response_was_stored=False)
    with pytest.raises(UsageError):
        stateful(make_turn(), previous_response_was_stored=1)


def test_store_must_be_an_explicit_bool() -> None:
    with pytest.raises(UsageError):
        stateful(make_turn(), store=None)
    with pytest.raises(UsageError):
        stateless(make_turn(), store=0)


@pytest.mark.parametrize(
    "field", ["model", "input", "previous_response_id", "store", "instructions", "tools"]
)
def test_request_controls_cannot_override_protected_fields(field: str) -> None:
    # A precondition of the conversation (the builder owns these fields), not a bad shape.
    with pytest.raises(ContinuationError, match="protected"):
        stateful(make_turn(), request_controls={field: "x"})
    with pytest.raises(ContinuationError, match="protected"):
        stateless(make_turn(), request_controls={field: "x"})


def test_unknown_or_conflicting_controls_are_refused() -> None:
    for controls in ({"tool_choise": "auto"}, {"conversation": "conv_1"}):
        with pytest.raises(UsageError):
            stateful(make_turn(), request_controls=controls)


def test_chat_completions_response_format_is_refused() -> None:
    with pytest.raises(UsageError, match=r"text=\{'format'"):
        stateful(make_turn(), request_controls={"response_format": {"type": "json_object"}})


def test_structured_final_answer_goes_in_text_format_and_strict_tools_are_untouched() -> None:
    fmt = {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True}
    body = stateful(make_turn(), request_controls={"text": {"format": fmt}})
    assert body["text"] == {"format": fmt}
    assert body["tools"][0]["strict"] is True
    with pytest.raises(UsageError):
        stateful(make_turn(), request_controls={"text": {"format": {"type": "json_schema"}}})


def test_undeclared_observed_function_name_is_refused() -> None:
    with pytest.raises(ContinuationError, match="get_time"):
        stateful(make_turn(), tools=TOOLS[:1])
    with pytest.raises(ContinuationError, match="get_time"):
        stateless(make_turn(), tools=[*TOOLS[:1], {"type": "web_search"}])


def test_mutated_turn_items_are_detected() -> None:
    turn = make_turn()
    turn.items[1]["name"] = "delete_everything"
    with pytest.raises(ContinuationError, match="mutated"):
        stateful(turn)
    with pytest.raises(ContinuationError, match="mutated"):
        stateless(turn)


def test_mutated_call_arguments_are_detected() -> None:
    turn = make_turn()
    turn.calls[0].arguments["city"] = "Atlantis"
    with pytest.raises(ContinuationError):
        stateful(turn)


def test_replaced_turn_fields_are_detected() -> None:
    turn = make_turn()
    forged = dataclasses.replace(turn, response_id="resp_other")
    with pytest.raises(ContinuationError):
        stateful(forged)
    with pytest.raises(ContinuationError):
        stateful(dataclasses.replace(turn, calls=turn.calls[:1]), results=RESULTS[:1])


def test_caller_config_mutation_does_not_leak_either_way() -> None:
    tools = copy.deepcopy(TOOLS)
    controls = {"metadata": {"run": "1"}}
    body = stateful(make_turn(), tools=tools, request_controls=controls)
    tools[0]["name"] = "changed"
    controls["metadata"]["run"] = "2"
    assert body["tools"][0]["name"] == "get_weather"
    assert body["metadata"] == {"run": "1"}
    body["tools"][1]["name"] = "changed-in-body"
    assert tools[1]["name"] == "get_time"


def test_request_mutation_does_not_reach_the_turn() -> None:
    turn = make_turn()
    body = stateless(turn)
    body["input"][1]["encrypted_content"] = "tampered"
    assert turn.items[0]["encrypted_content"] == "enc-1"
    stateful(turn)  # still verifies


def test_stateless_replays_prior_input_then_every_output_item_then_results() -> None:
    turn = make_turn()
    prior = [{"role": "user", "content": "Weather and time in Paris?"}]
    body = stateless(turn, prior_input_items=prior)
    assert "previous_response_id" not in body
    assert body["store"] is False
    assert body["input"] == [
        *prior,
        *turn.items,
        {"type": "function_call_output", "call_id": "call_w", "output": '{"temp":20}'},
        {"type": "function_call_output", "call_id": "call_t", "output": '{"time":"12:00"}'},
    ]
    assert body["input"][1]["encrypted_content"] == "enc-1"


def test_stateless_with_store_false_needs_encrypted_reasoning() -> None:
    with pytest.raises(ContinuationError, match="encrypted_content"):
        stateless(make_turn(encrypted=None))
    assert stateless(make_turn(encrypted=None), store=True)["store"] is True


def test_stateless_drops_a_null_function_call_id() -> None:
    s = Stream("resp_n").created()
    s.added(0, fc_item(None, "call_w", "get_weather", "{}") | {"id": None})
    s.ev("response.function_call_arguments.delta", item_id="x1", output_index=0, delta="{}")
    s.ev("response.function_call_arguments.done", item_id="x1", output_index=0, arguments="{}")
    s.item_done(0, fc_item(None, "call_w", "get_weather", "{}") | {"id": None})
    turn = run(s.completed().events)
    body = stateless(turn, results=[ToolResult("call_w", "ok")])
    assert "id" not in body["input"][1]
    assert turn.items[0]["id"] is None


def test_stateless_keeps_messages_and_hosted_items_in_order() -> None:
    s = Stream("resp_m").created()
    s.message(0, message_item("msg_0", "Looking.", phase="commentary"))
    s.call(1, fc_item("fc_w", "call_w", "get_weather", "{}"))
    turn = run(s.completed().events)
    body = stateless(turn, results=[ToolResult("call_w", "sunny")], prior_input_items=[])
    assert [item.get("type") for item in body["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert body["input"][0]["phase"] == "commentary"


def test_a_turn_without_calls_cannot_be_continued() -> None:
    s = Stream("resp_text").created().message(0, message_item("msg_0", "Done."))
    turn = run(s.completed().events)
    with pytest.raises(ContinuationError):
        stateful(turn, results=[])


def test_error_results_are_sent_unchanged() -> None:
    # The Responses protocol has no error flag on function_call_output; the model sees the
    # caller's own output text.
    results = [ToolResult("call_w", "error: city unknown", is_error=True), RESULTS[1]]
    body = stateful(make_turn(), results=results)
    assert body["input"][0] == {
        "type": "function_call_output",
        "call_id": "call_w",
        "output": "error: city unknown",
    }


def test_non_json_caller_values_are_refused() -> None:
    with pytest.raises(UsageError):
        stateful(make_turn(), request_controls={"temperature": float("nan")})
    with pytest.raises(UsageError):
        stateless(make_turn(), prior_input_items=[{"role": "user", "content": object()}])
    with pytest.raises(UsageError):
        stateful(make_turn(), tools=[{"type": "function", "name": "get_weather"}] * 2)


@pytest.mark.parametrize("results", [None, 3, "call_w", {"call_w": "x"}, [("call_w", "x")]])
def test_results_that_are_not_an_iterable_of_tool_results_are_a_usage_error(
    results: Any,
) -> None:
    # The wrong type of argument (a TypeError escaped for None/3; a tuple was a BindingError).
    with pytest.raises(UsageError, match="ToolResult"):
        stateful(make_turn(), results=results)
    with pytest.raises(UsageError, match="ToolResult"):
        stateless(make_turn(), results=results)


def test_results_may_be_any_iterable_consumed_once() -> None:
    body = stateful(make_turn(), results=iter(RESULTS))
    assert [item["call_id"] for item in body["input"]] == ["call_w", "call_t"]
