"""build_continuation: full replay, exact signatures, one functionResponse per call, explicit
caller-owned fields, and the UsageError / ContinuationError / BindingError split."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate.contracts import load_fixtures
from callgate.gemini_generate_content import (
    Turn,
    build_continuation,
    parse_response,
    parse_stream,
    same_signature,
)
from callgate.gemini_generate_content._turn import turn_digest

from .wire import FIXTURES, call, chunk, sse, text

FIX = {f.name: f for f in load_fixtures(FIXTURES)}
USER = {"role": "user", "parts": [{"text": "Weather and time in Paris?"}]}
TOOLS = [
    {"googleSearch": {}},
    {
        "functionDeclarations": [
            {"name": "get_weather", "parametersJsonSchema": {"type": "object"}},
            {"name": "get_time"},
            {"name": "lookup"},
        ]
    },
]


def _turn(name: str = "parallel_calls_one_chunk") -> Turn:
    fixture = FIX[name]
    return parse_stream(fixture.data, baseline=fixture.contract_revision)


def _results(turn: Turn, *, error: int | None = None) -> list[ToolResult]:
    return [
        ToolResult(c.call_id, {"n": i} if i != error else "boom", is_error=i == error)
        for i, c in enumerate(turn.calls)
    ]


def _build(turn: Turn, results: Any = None, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "history": [USER],
        "model": "gemini-3-flash-preview",
        "tools": TOOLS,
        "tool_config": {"functionCallingConfig": {"mode": "AUTO"}},
        "system_instruction": "Be brief.",
        "generation_config": {"temperature": 0.2},
        "safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "OFF"}],
    }
    kwargs.update(overrides)
    return build_continuation(turn, _results(turn) if results is None else results, **kwargs)


def test_full_replay_with_exact_parts_and_one_user_content_of_responses() -> None:
    turn = _turn()
    request = _build(turn, _results(turn, error=1))
    assert request["model"] == "models/gemini-3-flash-preview"
    body = request["body"]
    user, model, answers = body["contents"]
    assert user == USER
    assert model == {"role": "model", "parts": list(turn.parts)}
    assert model["parts"][1]["thoughtSignature"] == "c2lnLWEtAAEC/+8="
    assert model["parts"][3] == {"text": "", "thoughtSignature": "c2lnLWItAwQF-_8"}
    assert answers == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc-1",
                    "name": "get_weather",
                    "response": {"output": {"n": 0}},
                }
            },
            {"functionResponse": {"id": "fc-2", "name": "get_time", "response": {"error": "boom"}}},
        ],
    }
    assert body["tools"] == TOOLS
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert body["systemInstruction"] == {"role": "user", "parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {"temperature": 0.2}
    assert body["safetySettings"][0]["threshold"] == "OFF"


def test_calls_without_provider_ids_are_answered_by_name_and_position_only() -> None:
    turn = _turn("calls_without_ids_split")
    body = _build(turn)["body"]
    answers = body["contents"][-1]["parts"]
    assert [a["functionResponse"] for a in answers] == [
        {"name": "lookup", "response": {"output": {"n": 0}}},
        {"name": "lookup", "response": {"output": {"n": 1}}},
    ]


def test_none_omits_a_caller_owned_field_and_nothing_is_inherited() -> None:
    turn = _turn()
    body = _build(
        turn,
        tool_config=None,
        system_instruction=None,
        generation_config=None,
        safety_settings=None,
    )["body"]
    assert set(body) == {"contents", "tools"}


def test_caller_owned_fields_must_be_passed_explicitly() -> None:
    turn = _turn()
    with pytest.raises(TypeError):
        build_continuation(  # type: ignore[call-arg]
            turn, _results(turn), history=[USER], model="m", tools=TOOLS
        )


def test_inputs_are_never_mutated_and_the_output_is_a_copy() -> None:
    turn = _turn()
    history = [dict(USER)]
    request = _build(turn, history=history)
    request["body"]["contents"][1]["parts"][1]["thoughtSignature"] = "changed"
    assert turn.parts[1]["thoughtSignature"] == "c2lnLWEtAAEC/+8="
    assert history == [USER]


def test_results_bind_exactly() -> None:
    turn = _turn()
    results = _results(turn)
    with pytest.raises(BindingError):
        _build(turn, results[:1])
    with pytest.raises(BindingError):
        _build(turn, [*results, results[0]])
    with pytest.raises(BindingError):
        _build(turn, [results[0], ToolResult("fc-9", "x")])


def test_a_mutated_turn_is_refused() -> None:
    turn = _turn()
    turn.parts[1]["thoughtSignature"] = "c2lnLWItAwQF-_8"
    with pytest.raises(ContinuationError):
        _build(turn)


def test_a_forged_call_is_refused() -> None:
    turn = _turn()
    forged = dataclasses.replace(turn.calls[0], part={"functionCall": {"name": "get_weather"}})
    calls = (forged, turn.calls[1])
    object.__setattr__(turn, "calls", calls)
    object.__setattr__(turn, "digest", turn_digest(turn))  # a forger who also re-seals
    with pytest.raises(ContinuationError):
        _build(turn)


def test_a_turn_without_released_calls_cannot_be_continued() -> None:
    for name in ("text_answer", "continuation_token"):
        with pytest.raises(ContinuationError):
            _build(_turn(name), [])


def test_every_called_function_must_be_declared() -> None:
    turn = _turn()
    tools = [{"functionDeclarations": [{"name": "get_weather"}]}]
    with pytest.raises(ContinuationError, match="get_time"):
        _build(turn, tools=tools)


def test_snake_case_declarations_count_as_declared() -> None:
    turn = _turn()
    tools = [{"function_declarations": [{"name": "get_weather"}, {"name": "get_time"}]}]
    assert _build(turn, tools=tools)["body"]["tools"] == tools


def test_a_function_declared_twice_is_refused() -> None:
    tools = [{"functionDeclarations": [{"name": "get_weather"}, {"name": "get_time"}]}] * 2
    with pytest.raises(ContinuationError):
        _build(_turn(), tools=tools)


def test_history_with_an_earlier_tool_step_is_checked_for_pairing() -> None:
    earlier = {"role": "model", "parts": [call("lookup", {"q": "a"}, "e-1")]}
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {}}}]}
    ok = _build(_turn(), history=[USER, earlier, answer, USER])
    assert len(ok["body"]["contents"]) == 6
    with pytest.raises(ContinuationError, match="unanswered"):
        _build(_turn(), history=[USER, earlier])
    wrong = {"role": "user", "parts": [{"functionResponse": {"name": "other", "response": {}}}]}
    with pytest.raises(ContinuationError):
        _build(_turn(), history=[USER, earlier, wrong, USER])
    bad_id = {
        "role": "user",
        "parts": [{"functionResponse": {"id": "e-2", "name": "lookup", "response": {}}}],
    }
    with pytest.raises(ContinuationError):
        _build(_turn(), history=[USER, earlier, bad_id, USER])


def test_history_preconditions_are_continuation_errors() -> None:
    model = {"role": "model", "parts": [text("hi")]}
    for history in ([], [model, USER], [USER, model], [{"role": "tool", "parts": []}]):
        with pytest.raises(ContinuationError):
            _build(_turn(), history=history)
    bad_sig = {"role": "model", "parts": [{"text": "x", "thoughtSignature": "%%"}]}
    with pytest.raises(ContinuationError):
        _build(_turn(), history=[USER, bad_sig, USER])


@pytest.mark.parametrize(
    "overrides",
    [
        {"history": "hi"},
        {"history": [3]},
        {"history": [{"role": "user"}]},
        {"model": ""},
        {"model": 3},
        {"tools": {"functionDeclarations": []}},
        {"tools": [[]]},
        {"tool_config": [1]},
        {"system_instruction": 3},
        {"generation_config": "hot"},
        {"safety_settings": {"category": "x"}},
        {"cached_content": 5},
        {"generation_config": {"x": float("nan")}},
    ],
    ids=lambda o: next(iter(o)),
)
def test_wrong_argument_types_are_usage_errors(overrides: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        _build(_turn(), **overrides)


def test_turn_of_another_type_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        build_continuation(
            object(),  # type: ignore[arg-type]
            [],
            history=[USER],
            model="m",
            tools=[],
            tool_config=None,
            system_instruction=None,
            generation_config=None,
            safety_settings=None,
        )


def test_signatures_compare_as_decoded_bytes() -> None:
    # what the SDK sends back: the same bytes, URL-safe alphabet, padded
    assert same_signature("c2ln+/8=", "c2ln-_8=")
    assert same_signature("YWJj-_8", "YWJj-_8=")
    assert not same_signature("c2ln+/8=", "c2ln+/w=")
    assert not same_signature("c2ln", 3)


def test_a_body_turn_continues_like_a_stream_turn() -> None:
    turn = parse_response(FIX["body_two_calls"].body())
    body = _build(turn)["body"]
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnLWEtAAEC/+8="


def test_the_builder_sees_a_stream_of_the_fixture_family() -> None:
    data = sse(chunk(call("get_weather", {"c": 1})), chunk(text(""), finish="STOP"))
    assert _build(parse_stream(data))["body"]["contents"][-1]["role"] == "user"
