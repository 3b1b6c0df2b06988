"""Continuation builders: stateful (previous_interaction_id) and stateless (step array)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate.gemini_interactions import (
    Turn,
    build_stateful_continuation,
    build_stateless_continuation,
    parse_interaction,
    parse_stream,
)

from .wire import FIXTURES, completed, created, delta, fcall, sse, start, stop

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
TIME_TOOL = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
USER = {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}


def stream_turn() -> Turn:
    return parse_stream((FIXTURES / "weather_call_with_thought.sse").read_bytes())


def get_turn() -> Turn:
    return parse_interaction((FIXTURES / "get_body_with_history.sse").read_bytes(), source="get")


def ok(call_id: str = "fc_7f3a", output: Any = None) -> ToolResult:
    return ToolResult(call_id, output if output is not None else {"temp_c": 18})


def stateful(turn: Turn, results: Any = None, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "previous_interaction_was_stored": True,
        "store": True,
        "model": "gemini-3-flash-preview",
        "tools": [WEATHER_TOOL],
    }
    args.update(kw)
    return build_stateful_continuation(turn, [ok()] if results is None else results, **args)


def stateless(turn: Turn, results: Any = None, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "snapshot_source": turn.origin,
        "model": "gemini-3-flash-preview",
        "tools": [WEATHER_TOOL, TIME_TOOL],
    }
    if turn.origin != "get":
        args["prior_input_steps"] = [USER]
    args.update(kw)
    return build_stateless_continuation(turn, [ok()] if results is None else results, **args)


# -- stateful ----------------------------------------------------------------------------


def test_stateful_request_resends_every_control_explicitly() -> None:
    request = stateful(
        stream_turn(),
        store=False,
        system_instruction="Be brief.",
        generation_config={"temperature": 0.2, "tool_choice": "auto"},
        response_format={"type": "text", "mime_type": "application/json", "schema": {}},
    )
    assert request == {
        "model": "gemini-3-flash-preview",
        "system_instruction": "Be brief.",
        "tools": [WEATHER_TOOL],
        "generation_config": {"temperature": 0.2, "tool_choice": "auto"},
        "response_format": {"type": "text", "mime_type": "application/json", "schema": {}},
        "previous_interaction_id": "v1_ChdXZWF0aGVySW50ZXJhY3Rpb24",
        "store": False,
        "input": [
            {
                "type": "function_result",
                "call_id": "fc_7f3a",
                "name": "get_weather",
                "result": {"temp_c": 18},
            }
        ],
    }


def test_stateful_needs_proof_the_previous_interaction_was_stored() -> None:
    with pytest.raises(ContinuationError):
        stateful(stream_turn(), previous_interaction_was_stored=False)


@pytest.mark.parametrize("proof", [1, "yes", None])
def test_a_stored_proof_of_another_type_is_misuse(proof: Any) -> None:
    with pytest.raises(UsageError, match="explicit bool"):
        stateful(stream_turn(), previous_interaction_was_stored=proof)


def test_stateful_store_must_be_an_explicit_bool() -> None:
    with pytest.raises(UsageError):
        stateful(stream_turn(), store=None)


def test_is_error_is_sent_only_when_set() -> None:
    request = stateful(stream_turn(), [ToolResult("fc_7f3a", "city not found", is_error=True)])
    assert request["input"][0]["is_error"] is True
    assert "is_error" not in stateful(stream_turn())["input"][0]


@pytest.mark.parametrize(
    "results",
    [
        [],
        [ok(), ok()],
        [ok("nope")],
        [ok(), ToolResult("extra", "x")],
        ["not a ToolResult"],
    ],
)
def test_result_binding_is_exact(results: list[Any]) -> None:
    with pytest.raises(BindingError):
        stateful(stream_turn(), results)


def test_result_iterable_is_consumed_at_most_one_past_the_calls() -> None:
    pulled = 0

    def endless() -> Iterator[ToolResult]:
        nonlocal pulled
        while True:
            pulled += 1
            yield ok()

    with pytest.raises(BindingError):
        stateful(stream_turn(), endless())
    assert pulled == 2


def test_strict_in_a_declaration_is_rejected() -> None:
    """OpenAI's ``strict`` flag has no meaning in a Gemini declaration: refuse, don't drop."""
    with pytest.raises(UsageError, match="strict"):
        stateful(stream_turn(), tools=[{**WEATHER_TOOL, "strict": True}])


def test_openai_shaped_declarations_and_formats_are_rejected() -> None:
    nested = {"type": "function", "function": {"name": "get_weather"}}
    with pytest.raises(UsageError):
        stateful(stream_turn(), tools=[nested])
    with pytest.raises(UsageError):
        stateful(stream_turn(), response_format={"type": "json_schema", "json_schema": {}})


@pytest.mark.parametrize(
    "tools",
    [
        ["not an object"],
        [{"name": "no type"}],
        [{"type": "function", "name": ""}],
        [{"type": "function", "name": "f", "parameters": []}],
        [{"type": "function", "name": "f"}, {"type": "function", "name": "f"}],
    ],
)
def test_tools_of_the_wrong_shape_are_misuse(tools: list[Any]) -> None:
    with pytest.raises(UsageError):
        stateful(stream_turn(), tools=tools)


@pytest.mark.parametrize("prior", ["text", {"type": "user_input"}, [USER, "not a step"]])
def test_prior_input_steps_of_the_wrong_shape_are_misuse(prior: Any) -> None:
    with pytest.raises(UsageError):
        stateless(stream_turn(), prior_input_steps=prior)


def test_observed_function_names_must_be_declared() -> None:
    with pytest.raises(ContinuationError, match="not declared"):
        stateful(stream_turn(), tools=[TIME_TOOL])


def test_mutated_turn_is_detected_by_digest() -> None:
    turn = stream_turn()
    turn.calls[0].arguments["city"] = "Atlantis"
    with pytest.raises(ContinuationError, match="digest"):
        stateful(turn)
    turn = stream_turn()
    turn.steps[0]["signature"] = "Zm9yZ2Vk"
    with pytest.raises(ContinuationError, match="digest"):
        stateless(turn)


def test_a_final_answer_turn_cannot_be_continued() -> None:
    final = parse_stream((FIXTURES / "final_text_answer.sse").read_bytes())
    with pytest.raises(ContinuationError):
        stateful(final, [])


def test_caller_data_is_deep_copied_both_ways() -> None:
    tools = [copy.deepcopy(WEATHER_TOOL)]
    output = {"temp_c": [18]}
    turn = stream_turn()
    request = stateful(turn, [ok(output=output)], tools=tools)
    tools[0]["name"] = "changed"
    output["temp_c"].append(99)
    assert request["tools"][0]["name"] == "get_weather"
    assert request["input"][0]["result"] == {"temp_c": [18]}
    request2 = stateless(turn)
    request2["input"][2]["arguments"]["city"] = "Rome"
    stateful(turn)  # the turn is untouched: its digest still matches


# -- stateless ---------------------------------------------------------------------------


def test_stateless_from_a_stream_snapshot_is_one_canonical_step_array() -> None:
    turn = stream_turn()
    request = stateless(turn)
    assert request["store"] is False
    assert "previous_interaction_id" not in request
    assert [s["type"] for s in request["input"]] == [
        "user_input",
        "thought",
        "function_call",
        "function_result",
    ]
    # the thought is replayed with its signature, the call with its assembled arguments
    assert request["input"][1]["signature"] == "c2lnbmF0dXJlLTE="
    assert request["input"][2]["arguments"] == {"city": "Paris", "unit": "celsius"}


def test_thought_with_signature_is_replayed_without_one_it_fails_closed() -> None:
    events: list[Any] = [
        created(),
        start(0, {"type": "thought"}),
        delta(0, {"type": "thought_summary", "content": {"type": "text", "text": "hmm"}}),
        stop(0),
        start(1, fcall("fc_7f3a", "get_weather", {"city": "Paris"})),
        stop(1),
        completed(),
    ]
    unsigned = parse_stream(sse(events))
    with pytest.raises(ContinuationError, match="signature"):
        stateless(unsigned)
    events.insert(3, delta(0, {"type": "thought_signature", "signature": "c2ln"}))
    signed = parse_stream(sse(events))
    thought = stateless(signed)["input"][1]
    assert thought == {
        "type": "thought",
        "summary": [{"type": "text", "text": "hmm"}],
        "signature": "c2ln",
    }
    # the stateful path never replays thoughts, so an unsigned one is fine there
    assert stateful(unsigned)["input"][0]["call_id"] == "fc_7f3a"


def test_opaque_step_in_a_stateless_continuation_fails_closed() -> None:
    events: list[Any] = [
        created(),
        start(0, {"type": "file_search_call", "id": "x"}),
        stop(0),
        start(1, {"type": "file_search_result", "call_id": "x"}),
        delta(1, {"type": "file_search_result", "result": [{"text": "chunk"}]}),
        stop(1),
        start(2, fcall("fc_7f3a", "get_weather", {"city": "Paris"})),
        stop(2),
        completed(),
    ]
    turn = parse_stream(sse(events))
    assert turn.opaque == (1,)
    with pytest.raises(ContinuationError, match="provably complete") as info:
        stateless(turn)
    assert "file_search_result delta field 'result' has no pinned place" in info.value.message
    assert stateful(turn)["input"][0]["call_id"] == "fc_7f3a"  # nothing is replayed there


def test_streamed_hosted_steps_with_pinned_deltas_are_replayed_exactly() -> None:
    signed = {"type": "code_execution_call", "arguments": {"code": "1+1"}, "signature": "c2ln"}
    events: list[Any] = [
        created(),
        start(0, {"type": "code_execution_call", "id": "x", "arguments": {}}),
        delta(0, signed),
        stop(0),
        start(1, {"type": "code_execution_result", "call_id": "x", "result": "2"}),
        stop(1),
        start(2, fcall("fc_7f3a", "get_weather", {"city": "Paris"})),
        stop(2),
        completed(),
    ]
    turn = parse_stream(sse(events))
    assert turn.opaque == ()
    replayed = stateless(turn)["input"]
    assert replayed[1] == {
        "type": "code_execution_call",
        "id": "x",
        "arguments": {"code": "1+1"},
        "signature": "c2ln",
    }
    assert replayed[2] == {"type": "code_execution_result", "call_id": "x", "result": "2"}
    assert [s["type"] for s in replayed] == [
        "user_input",
        "code_execution_call",
        "code_execution_result",
        "function_call",
        "function_result",
    ]


def test_create_snapshot_is_supplemented_exactly_once() -> None:
    turn = parse_interaction((FIXTURES / "create_body_two_calls.sse").read_bytes(), source="create")
    results = [ToolResult("f1", "4C"), ToolResult("f2", "09:00")]
    with pytest.raises(ContinuationError, match="prior_input_steps"):
        stateless(turn, results, prior_input_steps=None)
    request = stateless(turn, results)
    assert [s["type"] for s in request["input"]] == [
        "user_input",
        "thought",
        "function_call",
        "function_call",
        "function_result",
        "function_result",
    ]


def test_get_snapshot_already_holds_history_and_is_never_supplemented_twice() -> None:
    turn = get_turn()
    with pytest.raises(ContinuationError, match="twice"):
        stateless(turn, [ToolResult("h2", "09:00")], prior_input_steps=[USER])
    request = stateless(turn, [ToolResult("h2", "09:00")])
    types = [s["type"] for s in request["input"]]
    assert types.count("user_input") == 1
    assert types[0] == "user_input"
    assert request["input"][-1] == {
        "type": "function_result",
        "call_id": "h2",
        "name": "get_time",
        "result": "09:00",
    }


def test_snapshot_is_bound_to_its_origin() -> None:
    with pytest.raises(ContinuationError, match="origin"):
        stateless(stream_turn(), snapshot_source="create")
    with pytest.raises(UsageError):
        stateless(stream_turn(), snapshot_source="cache")


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        ([], "non-empty"),
        ([fcall("p", "get_weather", {})], "user_input"),
        ([USER, fcall("p", "get_weather", {})], "no result"),
        (
            [
                USER,
                fcall("p", "get_weather", {}),
                {"type": "function_result", "call_id": "p", "name": "get_time", "result": 1},
            ],
            "another function",
        ),
        ([USER, {"type": "function_result", "call_id": "p", "result": 1}], "name"),
        (
            [
                USER,
                fcall("fc_7f3a", "get_weather", {}),
                {
                    "type": "function_result",
                    "call_id": "fc_7f3a",
                    "name": "get_weather",
                    "result": 1,
                },
            ],
            "twice",
        ),
        ([USER, {"type": "thought"}], "signature"),
        ([USER, {"type": "warp"}], "unknown"),
        (
            [
                USER,
                fcall("p", "undeclared", {}),
                {"type": "function_result", "call_id": "p", "name": "undeclared", "result": 1},
            ],
            "not declared",
        ),
    ],
)
def test_prior_input_steps_are_checked(prior: list[Any], match: str) -> None:
    with pytest.raises(ContinuationError, match=match):
        stateless(stream_turn(), prior_input_steps=prior)


def test_stateless_prior_history_with_paired_calls_is_accepted() -> None:
    prior = [
        USER,
        fcall("p", "get_time", {}),
        {"type": "function_result", "call_id": "p", "name": "get_time", "result": "08:00"},
    ]
    request = stateless(stream_turn(), prior_input_steps=prior)
    assert [s.get("call_id") or s.get("id") for s in request["input"][1:3]] == ["p", "p"]
