"""Provider-native request validation: each check's accepted and refused forms.

Every request goes over a real socket through the official SDK, which must raise the
provider's exception type (``openai.BadRequestError``, ``anthropic.BadRequestError``,
google-genai's ``BadRequestError``) with the provider's error body. Each check can be
switched off by name in the script, and then the request reaches the script instead. A
refused request consumes no turn, so the corrected request that follows is served.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import _interactions_errors as genai_errors

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import MockServer, ScriptBuilder, ScriptError, call, create_app, load_script
from callgate.mock._validate import CHECKS

MODEL = "validation-model"
CONVERSATION = "x-callgate-conversation"
SIGNATURE = "RXFRQkNrZ0lCeEFCR0FJcVFHKy92VDBjMmxu+/=="
REASONING = {"summary": "Weather, then time.", "signature": SIGNATURE}
CALLS = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]
ANSWERS = {"get_weather": "sunny", "get_time": "12:00"}
OAI_TOOLS = [
    {"type": "function", "name": name, "parameters": {"type": "object"}} for name in ANSWERS
]
ANTHROPIC_TOOLS = [{"name": name, "input_schema": {"type": "object"}} for name in ANSWERS]
RESULTS_EXPECT = [{"name": name, "output": output} for name, output in ANSWERS.items()]


def _script(protocol: str, **validation: bool) -> Any:
    """Per conversation: a tool turn with reasoning, then an answer that expects both
    results (the expect is what a switched-off check's request is judged by instead)."""
    b = ScriptBuilder(seed=3, validation=validation)
    for name in ("a", "b", "c", "d"):
        b.turn(protocol, conversation=name, reasoning=REASONING, text="Checking.",
               calls=CALLS, chunking={"fixed": 5})  # fmt: skip
        b.turn(protocol, conversation=name, expect={"function_results": RESULTS_EXPECT},
               text="Sunny at noon.")  # fmt: skip
    return b.build()


def _server(protocol: str, **validation: bool) -> Iterator[MockServer]:
    with MockServer(_script(protocol, **validation)) as server:
        yield server


# -- OpenAI Responses -------------------------------------------------------------------------


@pytest.fixture
def oai_server() -> Iterator[MockServer]:
    yield from _server("openai_responses")


def _oai_client(server: MockServer, conversation: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.openai_base_url,
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        default_headers={CONVERSATION: conversation},
    )


def _oai_first(client: openai.OpenAI, *, store: bool = True) -> tuple[oai.Turn, list[Any]]:
    prior = [{"role": "user", "content": "Weather and time?"}]
    with client.responses.create(
        model=MODEL,
        input=prior,
        tools=OAI_TOOLS,
        store=store,
        stream=True,
        include=["reasoning.encrypted_content"],
    ) as events:
        last = list(events)[-1]
    return oai.parse_response(last.response.to_dict()), prior


def _oai_results(turn: oai.Turn) -> list[ToolResult]:
    return [ToolResult(c.call_id, ANSWERS[c.name]) for c in turn.calls]


def _oai_stateful(turn: oai.Turn) -> dict[str, Any]:
    return oai.build_stateful_continuation(
        turn, _oai_results(turn), previous_response_was_stored=True, store=True, model=MODEL,
        instructions=None, tools=OAI_TOOLS,
    )  # fmt: skip


def _oai_stateless(turn: oai.Turn, prior: list[Any]) -> dict[str, Any]:
    return oai.build_stateless_continuation(
        turn, _oai_results(turn), prior_input_items=prior, store=False, model=MODEL,
        instructions=None, tools=OAI_TOOLS,
    )  # fmt: skip


def _oai_refused(client: openai.OpenAI, request: dict[str, Any]) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(**request)
    assert refused.value.status_code == 400
    assert refused.value.type == "invalid_request_error"
    return refused.value


def test_openai_output_for_no_call_is_refused(oai_server: MockServer) -> None:
    with _oai_client(oai_server, "a") as client:
        turn, _ = _oai_first(client)
        request = _oai_stateful(turn)
        bogus = copy.deepcopy(request)
        bogus["input"].append({"type": "function_call_output", "call_id": "call_bogus",
                               "output": "x"})  # fmt: skip
        error = _oai_refused(client, bogus)
        assert error.body == {
            "message": "No tool call found for function call output with call_id call_bogus.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
        # Accepted: outputs for exactly the previous response's calls.
        assert client.responses.create(**request).output_text == "Sunny at noon."


def test_openai_call_left_without_output_is_refused(oai_server: MockServer) -> None:
    with _oai_client(oai_server, "a") as client:
        turn, _ = _oai_first(client)
        request = _oai_stateful(turn)
        partial = copy.deepcopy(request)
        del partial["input"][1]
        error = _oai_refused(client, partial)
        assert (
            error.body["message"]
            == f"No tool output found for function call {turn.calls[1].call_id}."
        )
        assert error.param == "input"
        assert oai_server.state.remaining()["a"] == 1
        assert client.responses.create(**request).status == "completed"


def test_openai_replayed_call_left_without_output_is_refused(oai_server: MockServer) -> None:
    with _oai_client(oai_server, "b") as client:
        turn, prior = _oai_first(client, store=False)
        request = _oai_stateless(turn, prior)
        partial = copy.deepcopy(request)
        assert partial["input"][-1]["type"] == "function_call_output"
        del partial["input"][-1]
        error = _oai_refused(client, partial)
        assert (
            error.body["message"]
            == f"No tool output found for function call {turn.calls[1].call_id}."
        )
        # Accepted: the full replay (reasoning, message, calls, then every output).
        assert client.responses.create(**request).output_text == "Sunny at noon."


def test_openai_reasoning_without_its_following_item_is_refused(oai_server: MockServer) -> None:
    with _oai_client(oai_server, "b") as client:
        turn, prior = _oai_first(client, store=False)
        request = _oai_stateless(turn, prior)
        kinds = [item.get("type", "message") for item in request["input"]]
        assert kinds[1:3] == ["reasoning", "message"]
        dropped = copy.deepcopy(request)
        del dropped["input"][2]  # the message that followed the reasoning item
        error = _oai_refused(client, dropped)
        reasoning_id = request["input"][1]["id"]
        assert error.body["message"] == (
            f"Item '{reasoning_id}' of type 'reasoning' was provided without its required "
            "following item."
        )
        assert error.param == "input"
        assert client.responses.create(**request).status == "completed"


def test_openai_replayed_item_that_differs_is_refused(oai_server: MockServer) -> None:
    with _oai_client(oai_server, "c") as client:
        turn, prior = _oai_first(client, store=False)
        request = _oai_stateless(turn, prior)
        changed = copy.deepcopy(request)
        fc = next(i for i in changed["input"] if i.get("type") == "function_call")
        fc["arguments"] = '{"city":"Lyon"}'
        error = _oai_refused(client, changed)
        assert error.body["message"] == (
            f"Item '{fc['id']}' of type 'function_call' does not match the item with that id "
            "in the model's output: its 'arguments' was changed."
        )
        assert error.param == "input"

        forged = copy.deepcopy(request)
        forged["input"][1]["encrypted_content"] = "gAAAAABforgedcontent=="
        error = _oai_refused(client, forged)
        assert error.body == {
            "message": "The encrypted content gAAA...nt== could not be verified.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_encrypted_content",
        }
        assert error.code == "invalid_encrypted_content"

        message = copy.deepcopy(request)
        message["input"][2]["content"][0]["text"] = "I already know."
        assert "'content' was changed" in _oai_refused(client, message).body["message"]
        # Accepted: the byte-exact replay, also without the status fields that are optional
        # (a replayed output message must keep its status: both SDK generations require it).
        exact = copy.deepcopy(request)
        for item in exact["input"]:
            if item.get("type") != "message":
                item.pop("status", None)
        assert client.responses.create(**exact).status == "completed"


def test_openai_switched_off_checks_let_the_request_reach_the_script() -> None:
    validation = {"openai_output_has_call": False, "openai_call_has_output": False}
    for server in _server("openai_responses", **validation):
        with _oai_client(server, "a") as client:
            turn, _ = _oai_first(client)
            request = _oai_stateful(turn)
            request["input"] = [{"type": "function_call_output", "call_id": "call_bogus",
                                 "output": "sunny"}]  # fmt: skip
            # No provider error: the script judges it, and its expect wants both results.
            with pytest.raises(openai.BadRequestError) as mismatch:
                client.responses.create(**request)
            assert "does not match the script" in mismatch.value.message
            assert "no function result for call of 'get_time'" in mismatch.value.message
        assert server.mismatches


# -- Anthropic Messages -----------------------------------------------------------------------


@pytest.fixture
def anthropic_server() -> Iterator[MockServer]:
    yield from _server("anthropic_messages")


def _am_client(server: MockServer, conversation: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.anthropic_base_url,
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        default_headers={CONVERSATION: conversation},
    )


THINKING = {"type": "enabled", "budget_tokens": 1024}


def _am_first(client: anthropic.Anthropic) -> tuple[am.Turn, list[Any]]:
    history: list[Any] = [{"role": "user", "content": "Weather and time?"}]
    with client.messages.stream(
        model=MODEL,
        max_tokens=2048,
        messages=history,
        tools=ANTHROPIC_TOOLS,
        thinking=THINKING,
    ) as stream:
        message = stream.get_final_message()
    return am.parse_response(message.to_dict()), history


def _am_next(turn: am.Turn, history: list[Any], **extra: Any) -> dict[str, Any]:
    results = [ToolResult(c.call_id, ANSWERS[c.name]) for c in turn.calls]
    request = am.build_continuation(
        turn, results, history=history, model=MODEL, max_tokens=2048, tools=ANTHROPIC_TOOLS,
        **extra,
    )  # fmt: skip
    request["thinking"] = THINKING
    return request


def _am_refused(client: anthropic.Anthropic, request: dict[str, Any]) -> str:
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(**request)
    assert refused.value.status_code == 400
    body = refused.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


def test_anthropic_tool_use_without_result_is_refused(anthropic_server: MockServer) -> None:
    with _am_client(anthropic_server, "a") as client:
        turn, history = _am_first(client)
        request = _am_next(turn, history)
        missing = copy.deepcopy(request)
        missing["messages"][2]["content"] = missing["messages"][2]["content"][:1]
        ids = ", ".join(c.call_id for c in turn.calls[1:])
        assert _am_refused(client, missing) == (
            f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {ids}. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message."
        )
        text_only = copy.deepcopy(request)
        text_only["messages"][2]["content"] = "never mind"
        assert "`tool_use` ids were found without" in _am_refused(client, text_only)
        assert anthropic_server.state.remaining()["a"] == 1
        assert client.messages.create(**request).content[0].text == "Sunny at noon."


def test_anthropic_tool_result_not_first_is_refused(anthropic_server: MockServer) -> None:
    with _am_client(anthropic_server, "b") as client:
        turn, history = _am_first(client)
        request = _am_next(turn, history)
        late = copy.deepcopy(request)
        late["messages"][2]["content"].insert(0, {"type": "text", "text": "Here you go:"})
        assert _am_refused(client, late) == (
            "messages.2.content.0: `tool_result` blocks must come first in the `user` message "
            "content, before any other block; found `text` before them."
        )
        # Accepted: text after every tool_result in the same message.
        after = _am_next(turn, history, user_content="Thanks.")
        assert after["messages"][2]["content"][-1] == {"type": "text", "text": "Thanks."}
        assert client.messages.create(**after).stop_reason == "end_turn"


def test_anthropic_tool_use_id_that_matches_nothing_is_refused(
    anthropic_server: MockServer,
) -> None:
    with _am_client(anthropic_server, "c") as client:
        turn, history = _am_first(client)
        request = _am_next(turn, history)
        wrong = copy.deepcopy(request)
        wrong["messages"][2]["content"][1]["tool_use_id"] = "toolu_bogus"
        assert _am_refused(client, wrong) == (
            "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_bogus. Each `tool_result` block must have a corresponding `tool_use` block "
            "in the previous message."
        )
        result = {"type": "tool_result", "tool_use_id": turn.calls[0].call_id, "content": "x"}
        orphan = {**request, "messages": [{"role": "user", "content": [result]}]}
        assert _am_refused(client, orphan).startswith(
            "messages.0.content.0: unexpected `tool_use_id`"
        )
        assert client.messages.create(**request).stop_reason == "end_turn"


def test_anthropic_modified_thinking_block_is_refused(anthropic_server: MockServer) -> None:
    with _am_client(anthropic_server, "d") as client:
        turn, history = _am_first(client)
        request = _am_next(turn, history)
        assert request["messages"][1]["content"][0]["signature"] == SIGNATURE
        edited = copy.deepcopy(request)
        edited["messages"][1]["content"][0]["thinking"] = "Time, then weather."
        message = "messages.1.content.0: Invalid `signature` in `thinking` block"
        assert _am_refused(client, edited) == message
        forged = copy.deepcopy(request)
        forged["messages"][1]["content"][0]["signature"] = "Zm9yZ2Vk"
        assert _am_refused(client, forged) == message
        assert client.messages.create(**request).stop_reason == "end_turn"


def test_anthropic_dropped_thinking_block_is_refused_when_thinking_is_on(
    anthropic_server: MockServer,
) -> None:
    with _am_client(anthropic_server, "a") as client:
        turn, history = _am_first(client)
        request = _am_next(turn, history)
        dropped = copy.deepcopy(request)
        del dropped["messages"][1]["content"][0]
        message = _am_refused(client, dropped)
        assert message.startswith(
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            "`text`. When `thinking` is enabled, a final `assistant` message must start with a "
            "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
        )
        # Accepted: thinking switched off for the continuation, so nothing needs the block.
        dropped.pop("thinking")
        assert client.messages.create(**dropped).stop_reason == "end_turn"


def test_anthropic_switched_off_signature_check_reaches_the_script() -> None:
    for server in _server("anthropic_messages", anthropic_thinking_signature=False):
        with _am_client(server, "a") as client:
            turn, history = _am_first(client)
            request = _am_next(turn, history)
            request["messages"][1]["content"][0]["thinking"] = "rewritten by a proxy"
            assert client.messages.create(**request).stop_reason == "end_turn"
        assert server.state.remaining()["a"] == 0


# -- Gemini Interactions ----------------------------------------------------------------------


@pytest.fixture
def gemini_server() -> Iterator[MockServer]:
    yield from _server("gemini_interactions")


def _gemini_client(server: MockServer, conversation: str) -> Any:
    return genai.Client(
        api_key="k",
        http_options={
            "base_url": server.gemini_base_url,
            "api_version": "v1",
            "headers": {CONVERSATION: conversation},
            "retry_options": {"attempts": 1},
        },
    )


GEMINI_FIRST = {"model": MODEL, "input": "Weather and time?", "tools": OAI_TOOLS}


def _gi_first(client: Any, *, store: bool = True) -> gi.Turn:
    interaction = client.interactions.create(**GEMINI_FIRST, store=store)
    return gi.parse_interaction(interaction.to_dict(), source="create")


def _gi_results(turn: gi.Turn) -> list[ToolResult]:
    return [ToolResult(c.call_id, ANSWERS[c.name]) for c in turn.calls]


def _gi_refused(client: Any, request: dict[str, Any]) -> str:
    with pytest.raises(genai_errors.BadRequestError) as refused:
        client.interactions.create(**request)
    error = refused.value.body["error"]
    assert error["code"] == "invalid_request"
    return str(error["message"])


def test_gemini_result_for_unknown_call_is_refused(gemini_server: MockServer) -> None:
    with _gemini_client(gemini_server, "a") as client:
        turn = _gi_first(client)
        request = gi.build_stateful_continuation(
            turn, _gi_results(turn), previous_interaction_was_stored=True, store=True,
            model=MODEL, tools=OAI_TOOLS,
        )  # fmt: skip
        wrong = copy.deepcopy(request)
        wrong["input"][0]["call_id"] = "feedfacefeedface"
        message = _gi_refused(client, wrong)
        assert message.startswith("input[0]: function_result call_id 'feedfacefeedface'")
        assert client.interactions.create(**request).status == "completed"


def test_gemini_call_left_without_result_is_refused(gemini_server: MockServer) -> None:
    with _gemini_client(gemini_server, "b") as client:
        turn = _gi_first(client)
        request = gi.build_stateful_continuation(
            turn, _gi_results(turn), previous_interaction_was_stored=True, store=True,
            model=MODEL, tools=OAI_TOOLS,
        )  # fmt: skip
        partial = copy.deepcopy(request)
        del partial["input"][1]
        message = _gi_refused(client, partial)
        assert message.startswith(f"function_call {turn.calls[1].call_id!r} (get_time)")
        assert gemini_server.state.remaining()["b"] == 1
        assert client.interactions.create(**request).status == "completed"


def test_gemini_replayed_call_left_without_result_is_refused(gemini_server: MockServer) -> None:
    with _gemini_client(gemini_server, "c") as client:
        turn = _gi_first(client, store=False)
        request = gi.build_stateless_continuation(
            turn, _gi_results(turn), snapshot_source="create",
            prior_input_steps=[{"type": "user_input",
                                "content": [{"type": "text", "text": "Weather and time?"}]}],
            model=MODEL, tools=OAI_TOOLS,
        )  # fmt: skip
        partial = copy.deepcopy(request)
        assert partial["input"][-1]["type"] == "function_result"
        del partial["input"][-1]
        message = _gi_refused(client, partial)
        assert "has no function_result after it in input" in message
        assert client.interactions.create(**request).status == "completed"


def test_gemini_switched_off_check_reaches_the_script() -> None:
    for server in _server("gemini_interactions", gemini_call_has_result=False):
        with _gemini_client(server, "a") as client:
            turn = _gi_first(client)
            request = gi.build_stateful_continuation(
                turn, _gi_results(turn), previous_interaction_was_stored=True, store=True,
                model=MODEL, tools=OAI_TOOLS,
            )  # fmt: skip
            del request["input"][1]
            with pytest.raises(genai_errors.BadRequestError) as mismatch:
                client.interactions.create(**request)
        message = mismatch.value.body["error"]["message"]
        assert "does not match the script" in message
        assert "no function result for call of 'get_time'" in message


# -- the switches themselves ------------------------------------------------------------------


def test_checks_are_named_per_provider() -> None:
    assert len(set(CHECKS)) == len(CHECKS)
    assert {name.split("_")[0] for name in CHECKS} == {"openai", "anthropic", "gemini"}


def test_an_unknown_check_name_is_a_script_error(tmp_path: Any) -> None:
    script = (
        ScriptBuilder(validation={"openai_call_has_outputs": False})
        .turn("openai_responses", text="x")
        .build()
    )
    with pytest.raises(ScriptError) as error:
        create_app(script)
    assert error.value.location == "/validation/openai_call_has_outputs"
    assert "openai_call_has_output" in str(error.value)  # the known names are listed
    path = tmp_path / "script.json"
    path.write_text('{"validation": {"nope": false}, "turns": [{"protocol": "openai_responses"}]}')
    with pytest.raises(ScriptError) as from_file:
        MockServer(load_script(path))
    assert from_file.value.path == str(path)
    assert from_file.value.location == "/validation/nope"
    for name in CHECKS:  # every known name is accepted
        create_app(ScriptBuilder(validation={name: False}).turn("openai_responses").build())
