"""The mock refuses what the real APIs refuse (issue 24, part 3), over a real socket.

Each case is a request a real API answers with a 400 of its own shape; the mock must
answer the same way, before the script is consulted (the turn is still there
afterwards), journal it as ``rejected``, and let the request through to the script when
the protocol's switch is off. The shapes and the real refusals they follow are in
``docs/request-validation.md``.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder

from .conftest import AUTH, PATHS, STREAM_PATHS

OK_OPENAI = {"model": "gpt-5", "input": "hi"}
OK_ANTHROPIC = {
    "model": "claude",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
}
OK_GEMINI = {"model": "gemini", "input": "hi"}
OK_GGC = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
OK_CHAT = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}
OK = {"openai_responses": OK_OPENAI, "anthropic_messages": OK_ANTHROPIC,
      "gemini_interactions": OK_GEMINI, "gemini_generate_content": OK_GGC,
      "openai_chat_completions": OK_CHAT}  # fmt: skip

# (protocol, body, what the provider's error names)
REFUSED: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "chat no messages": ("openai_chat_completions", {"model": "gpt-5"},
        {"param": "messages", "code": "missing_required_parameter",
         "message": "Missing required parameter: 'messages'."}),
    "chat unknown": ("openai_chat_completions", {**OK_CHAT, "input": "hi"},
        {"param": "input", "code": "unknown_parameter",
         "message": "Unknown parameter: 'input'."}),
    "chat role robot": ("openai_chat_completions",
        {**OK_CHAT, "messages": [{"role": "robot", "content": "hi"}]},
        {"param": "messages[0]", "code": "invalid_value"}),
    "chat temperature": ("openai_chat_completions", {**OK_CHAT, "temperature": 3},
        {"param": "temperature", "code": "decimal_above_max_value"}),
    "openai no model": ("openai_responses", {"input": "hi"},
        {"param": "model", "code": "missing_required_parameter",
         "message": "Missing required parameter: 'model'."}),
    "openai input 42": ("openai_responses", {**OK_OPENAI, "input": 42},
        {"param": "input", "code": "invalid_type", "message":
         "Invalid type for 'input': expected one of a string or an array, but got an integer "
         "instead."}),
    "openai tools string": ("openai_responses", {**OK_OPENAI, "tools": "get_weather"},
        {"param": "tools", "code": "invalid_type", "message":
         "Invalid type for 'tools': expected an array, but got a string instead."}),
    "openai stream yes": ("openai_responses", {**OK_OPENAI, "stream": "yes"},
        {"param": "stream", "code": "invalid_type", "message":
         "Invalid type for 'stream': expected a boolean, but got a string instead."}),
    "openai unknown": ("openai_responses", {**OK_OPENAI, "reasoning_effort": "high"},
        {"param": "reasoning_effort", "code": "unknown_parameter",
         "message": "Unknown parameter: 'reasoning_effort'."}),
    "openai nested unknown": ("openai_responses", {**OK_OPENAI, "reasoning": {"max_tokens": 9}},
        {"param": "reasoning.max_tokens", "code": "unknown_parameter",
         "message": "Unknown parameter: 'reasoning.max_tokens'."}),
    "openai role robot": ("openai_responses",
        {**OK_OPENAI, "input": [{"role": "robot", "content": "hi"}]},
        {"param": "input[0].role", "code": "invalid_value", "message":
         "Invalid value: 'robot'. Supported values are: 'assistant', 'developer', 'system', "
         "and 'user'."}),
    "openai item type": ("openai_responses",
        {**OK_OPENAI, "input": [{"type": "function_call_result", "call_id": "c", "output": "x"}]},
        {"param": "input[0]", "code": "invalid_value"}),
    "openai output without output": ("openai_responses",
        {**OK_OPENAI, "input": [{"type": "function_call_output", "call_id": "c"}]},
        {"param": "input[0].output", "code": "missing_required_parameter"}),
    "openai max_output_tokens": ("openai_responses", {**OK_OPENAI, "max_output_tokens": 10},
        {"param": "max_output_tokens", "code": "integer_below_min_value", "message":
         "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, "
         "but got 10 instead."}),
    "openai temperature": ("openai_responses", {**OK_OPENAI, "temperature": 2.5},
        {"param": "temperature", "code": "decimal_above_max_value"}),
    "anthropic no max_tokens": ("anthropic_messages",
        {"model": "claude", "messages": [{"role": "user", "content": "hi"}]},
        {"message": "max_tokens: Field required"}),
    "anthropic max_tokens -1": ("anthropic_messages", {**OK_ANTHROPIC, "max_tokens": -1},
        {"message": "max_tokens: Input should be greater than or equal to 0"}),
    "anthropic messages string": ("anthropic_messages", {**OK_ANTHROPIC, "messages": "hi"},
        {"message": "messages: Input should be a valid list"}),
    "anthropic role robot": ("anthropic_messages",
        {**OK_ANTHROPIC, "messages": [{"role": "robot", "content": "hi"}]},
        {"message": "messages.0.role: Input should be 'user', 'assistant' or 'system'"}),
    "anthropic stream yes": ("anthropic_messages", {**OK_ANTHROPIC, "stream": "yes"},
        {"message": "stream: Input should be a valid boolean"}),
    "anthropic extra": ("anthropic_messages", {**OK_ANTHROPIC, "response_format": {}},
        {"message": "response_format: Extra inputs are not permitted"}),
    "anthropic block extra": ("anthropic_messages", {**OK_ANTHROPIC, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": {}, "text": "x"}]}]},
        {"message": "messages.1.content.0.tool_use.text: Extra inputs are not permitted"}),
    "anthropic block tag": ("anthropic_messages", {**OK_ANTHROPIC, "messages": [
        {"role": "user", "content": [{"type": "txt", "text": "hi"}]}]},
        {"message": "messages.0.content.0: Input tag 'txt' found using 'type' does not match"}),
    "gemini no model": ("gemini_interactions", {"input": "hi"},
        {"message": "* CreateInteractionRequest.model: model is not specified"}),
    "gemini stream yes": ("gemini_interactions", {**OK_GEMINI, "stream": "yes"},
        {"message": "Invalid value at 'stream' (TYPE_BOOL), \"yes\""}),
    "gemini unknown": ("gemini_interactions", {**OK_GEMINI, "temperature": 1},
        {"message": 'Invalid JSON payload received. Unknown name "temperature": Cannot find '
         "field."}),
    "ggc no contents": ("gemini_generate_content", {},
        {"message": "* GenerateContentRequest.contents: contents is not specified",
         "field": "contents"}),
    "ggc text 42": ("gemini_generate_content",
        {"contents": [{"role": "user", "parts": [{"text": 42}]}]},
        {"message": "Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), 42",
         "field": "contents[0].parts[0].text"}),
    "ggc role": ("gemini_generate_content",
        {"contents": [{"role": "robot", "parts": [{"text": "hi"}]}]},
        {"message": "Please use a valid role: user, model.", "field": "contents[0].role"}),
    "ggc unknown nested": ("gemini_generate_content",
        {**OK_GGC, "generationConfig": {"thinkingConfig": {"budget": 1}}},
        {"message": 'Invalid JSON payload received. Unknown name "budget" at '
         "'generation_config.thinking_config': Cannot find field.",
         "field": "generation_config.thinking_config"}),
}  # fmt: skip

PROTOCOLS = ("openai_responses", "anthropic_messages", "gemini_interactions",
             "gemini_generate_content", "openai_chat_completions")  # fmt: skip


def _script(**validation: bool) -> Any:
    builder = ScriptBuilder(seed=1, validation=validation)
    for protocol in PROTOCOLS:
        builder.turn(protocol, conversation=protocol, text="served")
    return builder.build()


@pytest.fixture(scope="module")
def server() -> Any:
    with MockServer(_script()) as running:
        yield running


def _post(server: MockServer, protocol: str, body: dict[str, Any], stream: bool = False) -> Any:
    path = STREAM_PATHS.get(protocol, PATHS[protocol]) if stream else PATHS[protocol]
    headers = {**AUTH[protocol], "x-callgate-conversation": protocol}
    return httpx.post(server.url + path, json=body, headers=headers, timeout=10)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_request_the_real_api_refuses_gets_its_400(server: MockServer, case: str) -> None:
    protocol, body, named = REFUSED[case]
    reply = _post(server, protocol, body)
    assert reply.status_code == 400, reply.text
    error = reply.json()
    if protocol in ("openai_responses", "openai_chat_completions"):
        assert error["error"]["type"] == "invalid_request_error"
        for key, value in named.items():
            assert error["error"][key] == value, error
    elif protocol == "anthropic_messages":
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
        assert error["error"]["message"].startswith(named["message"]), error
    elif protocol == "gemini_interactions":
        assert error == {"error": {"message": named["message"], "code": "invalid_request"}}
    else:
        assert error["error"]["code"] == 400
        assert error["error"]["status"] == "INVALID_ARGUMENT"
        assert error["error"]["message"] == named["message"]
        (detail,) = error["error"]["details"]
        assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
        assert detail["fieldViolations"][0].get("field") == named.get("field")
        assert detail["fieldViolations"][0]["description"] == named["message"]
    last = server.journal.last(conversation=protocol)
    assert (last.status, last.outcome) == (400, "rejected")
    assert server.state.remaining()[protocol] == 1  # the refusal consumed no turn


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_valid_request_reaches_the_script(protocol: str, stream: bool) -> None:
    body = OK[protocol]
    if stream and protocol != "gemini_generate_content":
        body = {**body, "stream": True}
    with MockServer(_script()) as running:
        reply = _post(running, protocol, body, stream)
        assert reply.status_code == 200, reply.text
        assert running.state.remaining()[protocol] == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_switch_lets_a_refused_request_through_to_the_script(protocol: str) -> None:
    case = {"openai_responses": "openai stream yes", "anthropic_messages": "anthropic extra",
            "gemini_interactions": "gemini unknown",
            "gemini_generate_content": "ggc role",
            "openai_chat_completions": "chat unknown"}  # fmt: skip
    _, body, _ = REFUSED[case[protocol]]
    switch = {"openai_responses": "openai_request_valid",
              "anthropic_messages": "anthropic_request_valid",
              "gemini_interactions": "gemini_request_valid",
              "gemini_generate_content": "gemini_gc_request_valid",
              "openai_chat_completions": "openai_chat_request_valid"}[protocol]  # fmt: skip
    with MockServer(_script(**{switch: False})) as running:
        reply = _post(running, protocol, body)
    assert reply.status_code == 200, reply.text


def test_a_string_stream_is_a_type_error_not_a_stream_mismatch(server: MockServer) -> None:
    reply = _post(server, "openai_responses", {**OK_OPENAI, "stream": "yes"})
    assert "stream is False" not in reply.text
    assert reply.json()["error"]["code"] == "invalid_type"


def test_proto_json_spellings_and_values_are_accepted(server: MockServer) -> None:
    """Google's front end parses proto JSON: both field spellings, enums by name in any case
    or by number, numbers as decimal strings."""
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generation_config": {"temperature": "0.5", "thinkingConfig": {"thinking_budget": 0}},
        "tools": [{"function_declarations": [{"name": "f", "parameters": {
            "type": "object", "properties": {"a": {"type": "STRING"}}}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": 1}},
    }  # fmt: skip
    with MockServer(_script()) as running:
        reply = _post(running, "gemini_generate_content", body)
    assert reply.status_code == 200, reply.text
