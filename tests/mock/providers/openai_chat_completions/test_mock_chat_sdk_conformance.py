"""Chat Completions on the mock: the unmodified openai SDK (either generation installed)
against a real socket, with strict response validation.

A two-parallel-call tool loop through every SDK path (``chat.completions.create``
streamed and not, the ``chat.completions.stream`` helper) on the plain and the Azure v1
routes: the SDK decodes every answer; callgate's parser, fed the SDK's own chunks or
body, releases the scripted calls; callgate's continuation builder makes the next
request, which must satisfy the next turn's ``expect`` (the mock answers 400 otherwise).
Also: the usage chunk only under ``stream_options.include_usage``, the native 400s of a
broken tool history, a refusal, an in-stream error, truncated arguments, stored
completions and the SDK's ``chat.completions.parse``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from callgate import CallgateError, ToolResult
from callgate import openai_chat_completions as occ
from callgate.contracts import REVISIONS, get_baseline
from callgate.mock import MockServer, ScriptBuilder, call

PROTOCOL = "openai_chat_completions"
MODEL = "gpt-chat-test"
ARGS = ({"city": "Paris", "unit": "celsius"}, {"a": 2, "b": 3})
OUTPUTS = ("sunny, 21 C", "5")
TOOLS = [
    {"type": "function", "function": {"name": name, "strict": False,
                                      "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_weather", "add")
]  # fmt: skip
FIRST = [{"role": "user", "content": "Weather in Paris, and 2 + 3?"}]
MODES = ("create_stream", "create", "stream_helper")


def _revision() -> str:
    installed = importlib.metadata.version("openai").split(".")[0]
    for revision in REVISIONS:
        if get_baseline(PROTOCOL, revision).sdk_version.split(".")[0] == installed:
            return revision
    raise RuntimeError(f"openai {installed} belongs to no contract baseline")


BASELINE = _revision()


def _loop_script(interleave: str) -> Any:
    calls = [call("get_weather", **ARGS[0]), call("add", **ARGS[1])]
    results = [
        {"name": "get_weather", "output": OUTPUTS[0]},
        {"name": "add", "output": OUTPUTS[1]},
    ]
    return (
        ScriptBuilder(seed=7)
        .turn(PROTOCOL, expect={"model": MODEL, "tools": ["get_weather", "add"]}, calls=calls,
              chunking={"fixed": 5}, interleave=interleave)
        .turn(PROTOCOL, expect={"model": MODEL, "function_results": results},
              text="It is sunny, and 2 + 3 = 5.", chunking={"fixed": 4})
        .build()
    )  # fmt: skip


def _client(server: MockServer, azure: bool) -> openai.OpenAI:
    base = server.azure_openai_base_url if azure else server.openai_base_url
    return openai.OpenAI(
        base_url=base, api_key="test", max_retries=0, _strict_response_validation=True
    )


def _ask(client: openai.OpenAI, mode: str, body: dict[str, Any]) -> tuple[occ.Turn, Any]:
    """One request on ``mode``; callgate's turn from what the SDK returned, and the usage
    the SDK saw (``None``: none sent)."""
    if mode == "create":
        completion = client.chat.completions.create(**body)
        return occ.parse_response(completion, baseline=BASELINE), completion.usage
    if mode == "create_stream":
        chunks = list(
            client.chat.completions.create(
                **body, stream=True, stream_options={"include_usage": True}
            )
        )
        parser = occ.Parser(baseline=BASELINE)
        for chunk in chunks:
            parser.feed_event(chunk)
        assert chunks[-1].choices == []  # the usage chunk, asked for
        return parser.finish(), chunks[-1].usage
    with client.chat.completions.stream(**body) as stream:
        seen = list(stream)
        final = stream.get_final_completion()
    assert all(event.type != "error" for event in seen)
    assert final.usage is None  # streamed without include_usage: no usage chunk
    return occ.parse_response(final.model_dump(mode="json"), baseline=BASELINE), None


@pytest.mark.parametrize("interleave", ["sequential", "round_robin"])
@pytest.mark.parametrize("azure", [False, True], ids=["openai", "azure"])
@pytest.mark.parametrize("mode", MODES)
def test_a_two_call_loop_through_the_sdk(mode: str, azure: bool, interleave: str) -> None:
    with MockServer(_loop_script(interleave)) as server, _client(server, azure) as client:
        body = {"model": MODEL, "messages": FIRST, "tools": TOOLS}
        turn, used = _ask(client, mode, body)
        assert turn.finish_reason == "tool_calls"
        assert [(c.name, c.arguments) for c in turn.calls] == [
            ("get_weather", ARGS[0]), ("add", ARGS[1])
        ]  # fmt: skip
        if mode != "stream_helper":
            assert (used.prompt_tokens, used.completion_tokens, used.total_tokens) == (12, 34, 46)
        results = [ToolResult(c.call_id, out) for c, out in zip(turn.calls, OUTPUTS, strict=True)]
        follow = occ.build_continuation(
            turn, results, messages=FIRST, model=MODEL, tools=TOOLS, tool_choice=None,
            parallel_tool_calls=None, response_format=None, max_completion_tokens=None,
        )  # fmt: skip
        final, _ = _ask(client, mode, follow)
        assert final.calls == ()
        assert final.content == "It is sunny, and 2 + 3 = 5."
        assert server.mismatches == []
        assert server.state.remaining()["default"] == 0


@pytest.fixture
def answered() -> Iterator[tuple[openai.OpenAI, list[dict[str, Any]]]]:
    """A served first turn (two calls) and the history a continuation replays."""
    script = _loop_script("sequential")
    with MockServer(script) as server, _client(server, False) as client:
        done = client.chat.completions.create(model=MODEL, messages=FIRST, tools=TOOLS)
        message = done.choices[0].message.model_dump(mode="json", exclude_none=True)
        yield client, [*FIRST, message]


def test_a_tool_message_answering_no_call_gets_openais_400(answered: Any) -> None:
    client, history = answered
    ids = [c["id"] for c in history[-1]["tool_calls"]]
    messages = [
        *history,
        {"role": "tool", "tool_call_id": ids[0], "content": OUTPUTS[0]},
        {"role": "tool", "tool_call_id": "call_never_made", "content": OUTPUTS[1]},
    ]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    error = raised.value.body
    assert error == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a "
        "preceeding message with 'tool_calls'.",
        "type": "invalid_request_error",
        "param": "messages.[3].role",
        "code": None,
    }
    # A tool message right after the user's (no assistant tool_calls before it).
    lone = [*FIRST, {"role": "tool", "tool_call_id": ids[0], "content": "x"}]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=lone, tools=TOOLS)
    assert raised.value.body["param"] == "messages.[1].role"  # type: ignore[index]


def test_an_unanswered_call_gets_openais_400(answered: Any) -> None:
    client, history = answered
    ids = [c["id"] for c in history[-1]["tool_calls"]]
    messages = [*history, {"role": "tool", "tool_call_id": ids[0], "content": OUTPUTS[0]}]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    assert raised.value.body == {
        "message": "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have "
        f"response messages: {ids[1]}",
        "type": "invalid_request_error",
        "param": "messages.[1].role",
        "code": None,
    }


def test_the_checks_can_be_switched_off() -> None:
    script = (
        ScriptBuilder(validation={"openai_chat_call_has_result": False})
        .turn(PROTOCOL, text="served")
        .build()
    )
    asked = {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    ]}  # fmt: skip
    with MockServer(script) as server, _client(server, False) as client:
        done = client.chat.completions.create(model=MODEL, messages=[*FIRST, asked])
        assert done.choices[0].message.content == "served"


def test_an_invalid_request_gets_the_sdk_types_400() -> None:
    script = ScriptBuilder().turn(PROTOCOL, text="never").build()
    with MockServer(script) as server, _client(server, False) as client:
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(
                model=MODEL, messages=FIRST, extra_body={"max_output_tokens": 5}
            )
        assert raised.value.body == {
            "message": "Unknown parameter: 'max_output_tokens'.",
            "type": "invalid_request_error",
            "param": "max_output_tokens",
            "code": "unknown_parameter",
        }
        assert server.state.remaining()["default"] == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_refusal_is_the_messages_refusal_not_its_text(stream: bool) -> None:
    said = "I can't help with that."
    script = ScriptBuilder().turn(PROTOCOL, refusal=said, chunking={"fixed": 5}).build()
    with MockServer(script) as server, _client(server, False) as client:
        body = {"model": MODEL, "messages": FIRST}
        if stream:
            with client.chat.completions.stream(**body) as running:
                events = list(running)
                message = running.get_final_completion().choices[0].message
            assert [e.type for e in events].count("refusal.delta") == 5
        else:
            message = client.chat.completions.create(**body).choices[0].message
        assert (message.refusal, message.content) == (said, None)
        turn = occ.parse_response(
            {"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": MODEL,
             "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                          "message": message.model_dump(mode="json")}]},
            baseline=BASELINE,
        )  # fmt: skip
        assert (turn.refusal, turn.calls) == (said, ())


def _feed_all(parser: occ.Parser, chunks: Any) -> None:
    for chunk in chunks:
        parser.feed_event(chunk)


def _turn_of(chunks: Any) -> occ.Turn:
    parser = occ.Parser(baseline=BASELINE)
    _feed_all(parser, chunks)
    return parser.finish()


def test_an_in_stream_error_raises_in_the_sdk_and_refuses_in_callgate() -> None:
    fault = {"type": "error_event", "after_call": 0, "message": "boom mid-stream"}
    script = (
        ScriptBuilder()
        .turn(PROTOCOL, calls=[call("get_weather", **ARGS[0])], chunking={"fixed": 3},
              fault=fault)
        .build()
    )  # fmt: skip
    with MockServer(script) as server, _client(server, False) as client:
        parser = occ.Parser(baseline=BASELINE)
        stream = client.chat.completions.create(
            model=MODEL, messages=FIRST, tools=TOOLS, stream=True
        )
        with pytest.raises(openai.APIError, match="boom mid-stream"):
            _feed_all(parser, stream)
        with pytest.raises(CallgateError):  # no finish reason, no [DONE]: nothing released
            parser.finish()


def test_truncated_arguments_finish_with_length_and_are_never_released() -> None:
    fault = {"type": "truncate", "call": 0, "keep": 9}
    script = (
        ScriptBuilder()
        .turn(PROTOCOL, calls=[call("get_weather", **ARGS[0])], chunking={"fixed": 4},
              fault=fault)
        .build()
    )  # fmt: skip
    with MockServer(script) as server, _client(server, False) as client:
        chunks = list(
            client.chat.completions.create(model=MODEL, messages=FIRST, tools=TOOLS, stream=True)
        )
        sent = "".join(
            tc.function.arguments or ""
            for c in chunks
            for tc in (c.choices[0].delta.tool_calls or ())
        )
        assert sent == '{"city":"'
        assert chunks[-1].choices[0].finish_reason == "length"
        with pytest.raises(CallgateError):  # finish_reason "length": nothing released
            _turn_of(chunks)


@pytest.mark.parametrize("azure", [False, True], ids=["openai", "azure"])
def test_a_stored_completion_is_retrieved_listed_and_deleted(azure: bool) -> None:
    script = (
        ScriptBuilder()
        .turn(PROTOCOL, text="kept", chunking={"fixed": 2})
        .turn(PROTOCOL, text="not kept")
        .build()
    )
    asked = [{"role": "system", "content": "Be brief."},
             {"role": "user", "content": [{"type": "text", "text": "Keep "},
                                          {"type": "text", "text": "this."}]}]  # fmt: skip
    with MockServer(script) as server, _client(server, azure) as client:
        chunks = list(
            client.chat.completions.create(model=MODEL, messages=asked, store=True, stream=True)
        )
        completion_id = chunks[0].id
        kept = client.chat.completions.retrieve(completion_id)
        assert (kept.id, kept.choices[0].message.content) == (completion_id, "kept")
        assert kept.choices[0].finish_reason == "stop"
        # Messages: the request's, each with an id; content parts kept beside their text.
        # The SDK types a stored message's role as "assistant" only (ChatCompletionMessage),
        # so strict validation refuses the request's system and user messages: read the
        # page without it.
        loose = openai.OpenAI(base_url=str(client.base_url), api_key="test", max_retries=0)
        with loose:
            page = loose.chat.completions.messages.list(completion_id)
        assert [(m.role, m.content) for m in page.data] == [
            ("system", "Be brief."), ("user", "Keep this.")
        ]  # fmt: skip
        assert [m.id for m in page.data] == [f"{completion_id}-0", f"{completion_id}-1"]
        assert page.data[1].content_parts is not None
        unstored = client.chat.completions.create(model=MODEL, messages=FIRST)
        with pytest.raises(openai.NotFoundError):  # stored only with store: true
            client.chat.completions.retrieve(unstored.id)
        deleted = client.chat.completions.delete(completion_id)
        assert (deleted.id, deleted.deleted, deleted.object) == (
            completion_id, True, "chat.completion.deleted"
        )  # fmt: skip
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.retrieve(completion_id)


def test_the_sdks_parse_helper_reads_structured_output_and_strict_tool_arguments() -> None:
    class Weather(BaseModel):
        city: str
        forecast: str

    class GetWeather(BaseModel):
        city: str

    script = (
        ScriptBuilder()
        .turn(PROTOCOL, expect={"tools": ["GetWeather"]}, calls=[call("GetWeather", city="Rome")])
        .turn(PROTOCOL, text='{"city":"Paris","forecast":"sunny"}', chunking={"fixed": 7})
        .build()
    )
    with MockServer(script) as server, _client(server, False) as client:
        called = client.chat.completions.parse(
            model=MODEL, messages=FIRST, tools=[openai.pydantic_function_tool(GetWeather)]
        )
        (tool_call,) = called.choices[0].message.tool_calls or []
        assert tool_call.function.parsed_arguments == GetWeather(city="Rome")
        answered = client.chat.completions.parse(
            model=MODEL, messages=FIRST, response_format=Weather
        )
        assert answered.choices[0].message.parsed == Weather(city="Paris", forecast="sunny")
        server.assert_script_done()
