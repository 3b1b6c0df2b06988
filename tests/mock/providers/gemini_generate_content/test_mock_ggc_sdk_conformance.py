"""google-genai's generateContent paths against the mock over a real socket, both SDK generations.

``models.generate_content``, ``models.generate_content_stream``, ``chats`` (``send_message``
and ``send_message_stream``, which replays one model Content per chunk) and automatic
function calling on and off, on ``v1`` and ``v1beta``. Per turn the SDK decodes what the
mock sent, and callgate's parser, fed the very bytes that left the server, releases the
same calls (id, name, arguments) the SDK saw, with the signature on the same part. The
mock's native checks answer the SDK as the API does. The installed generation (3.6.1 or
the 2.12.1 baseline venv) picks the contract baseline of the script and the parser.
"""

from __future__ import annotations

import base64
import importlib.metadata
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from callgate import ProviderError, ToolResult, TruncatedStreamError
from callgate import gemini_generate_content as ggc
from callgate.mock import MockServer, Script, ScriptBuilder, call

from ...conftest import RecordingApp, genai_client

GENERATION = int(importlib.metadata.version("google-genai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
MODEL = "gemini-3-flash-preview"
SIGNATURE = "c2lnLWEtAAEC/+8="  # standard alphabet; the SDK sends it back URL-safe
VERSIONS = ("v1", "v1beta")
DECLS = [
    {"name": name, "parameters": {"type": "OBJECT", "properties": {arg: {"type": "STRING"}}}}
    for name, arg in (("get_weather", "city"), ("get_time", "tz"))
]


def _script(*turns: dict[str, Any], validation: dict[str, bool] | None = None) -> Script:
    builder = ScriptBuilder(baseline=BASELINE, validation=validation)
    for turn in turns:
        builder.turn("gemini_generate_content", **turn)
    return builder.build()


def _config(**extra: Any) -> types.GenerateContentConfig:
    tools = [types.Tool(function_declarations=[types.FunctionDeclaration(**d) for d in DECLS])]
    return types.GenerateContentConfig(tools=tools, **extra)


def _parse(recorder: RecordingApp, index: int) -> ggc.Turn:
    exchange = recorder.exchanges[index]
    if ":streamGenerateContent" in exchange.path:
        return ggc.parse_stream(exchange.response_body, baseline=BASELINE)
    return ggc.parse_response(exchange.response_body, baseline=BASELINE)


def _ids(calls: Any) -> list[tuple[Any, Any, Any]]:
    return [(c.id, c.name, c.args) for c in calls]


def _released(turn: ggc.Turn) -> list[tuple[Any, Any, Any]]:
    return [(c.provider_id, c.name, c.arguments) for c in turn.calls]


TWO_CALLS = {
    "text": "Checking both.",
    "calls": [call("get_weather", city="Paris"), call("get_time", tz="CET")],
    "reasoning": {"summary": "Two lookups.", "signature": SIGNATURE},
}


@pytest.mark.parametrize("version", VERSIONS)
def test_generate_content_releases_the_calls_the_sdk_saw(served: Any, version: str) -> None:
    server, recorder = served(_script({**TWO_CALLS, "expect": {"model": MODEL, "stream": False}}))
    response = genai_client(server, version).models.generate_content(
        model=MODEL, contents="Weather and time in Paris?", config=_config()
    )
    turn = _parse(recorder, 0)
    assert recorder.exchanges[0].path == f"/gemini/{version}/models/{MODEL}:generateContent"
    assert _released(turn) == _ids(response.function_calls)
    assert [c.name for c in turn.calls] == ["get_weather", "get_time"]
    assert all(c.call_id.startswith(ggc.LOCAL_ID_PREFIX) for c in turn.calls)  # no ids sent
    sdk_parts = response.candidates[0].content.parts
    assert sdk_parts[2].thought_signature == base64.b64decode(SIGNATURE)
    assert turn.calls[0].part["thoughtSignature"] == SIGNATURE
    assert response.text == turn.text == "Checking both."
    server.assert_script_done()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "plan", [None, [1, 1, 1, 2], [0, 2, 3]], ids=["per-part", "two-calls-one-chunk", "all-late"]
)
def test_generate_content_stream_releases_the_calls_the_sdk_saw(
    served: Any, version: str, plan: list[int] | None
) -> None:
    respond = {**TWO_CALLS, "chunking": {"fixed": 6}}
    respond["text"] = "Fine."  # one delta: five wire parts in all
    if plan is not None:
        respond["chunk_plan"] = plan
    server, recorder = served(_script({**respond, "expect": {"stream": True}}))
    chunks = list(
        genai_client(server, version).models.generate_content_stream(
            model=MODEL, contents="Weather?", config=_config()
        )
    )
    seen = [c for chunk in chunks for c in chunk.function_calls or ()]
    turn = _parse(recorder, 0)
    assert _released(turn) == _ids(seen)
    assert len(chunks) == turn.chunks == (len(plan) if plan else 5)
    parts = [p for ch in chunks if ch.candidates[0].content for p in ch.candidates[0].content.parts]
    signed = [p for p in parts if p.thought_signature]
    assert [p.function_call.name for p in signed] == ["get_weather"]
    assert turn.usage == chunks[-1].usage_metadata.model_dump(by_alias=True, exclude_none=True)
    server.assert_script_done()


def test_calls_with_ids_bind_by_id(served: Any) -> None:
    calls = [
        {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "fc-1"},
        {"name": "get_time", "arguments": {"tz": "UTC"}, "id": "fc-2"},
    ]
    server, recorder = served(_script({"calls": calls, "chunk_plan": [2]}))
    chunks = list(
        genai_client(server, "v1").models.generate_content_stream(
            model=MODEL, contents="x", config=_config()
        )
    )
    turn = _parse(recorder, 0)
    assert [c.call_id for c in turn.calls] == ["fc-1", "fc-2"]
    assert _released(turn) == _ids(chunks[0].function_calls)


@pytest.mark.parametrize("version", VERSIONS)
def test_chat_stream_replays_one_model_content_per_chunk_and_the_checks_pass(
    served: Any, version: str
) -> None:
    results = [
        {"name": "get_weather", "output": {"temp": 20}},
        {"name": "get_time", "output": "12:00"},
    ]
    server, recorder = served(
        _script(
            {**TWO_CALLS, "chunking": {"fixed": 5}, "expect": {"stream": True}},
            {"text": "Sunny, noon.", "expect": {"function_results": results, "stream": False}},
        )
    )
    chat = genai_client(server, version).chats.create(model=MODEL, config=_config())
    chunks = list(chat.send_message_stream("Weather and time?"))
    seen = [c for chunk in chunks for c in chunk.function_calls or ()]
    turn = _parse(recorder, 0)
    assert _released(turn) == _ids(seen)
    answers = [
        types.Part.from_function_response(name="get_weather", response={"result": {"temp": 20}}),
        types.Part.from_function_response(name="get_time", response={"result": "12:00"}),
    ]
    assert chat.send_message(answers).text == "Sunny, noon."
    replay = recorder.exchanges[1].request_json()["contents"]
    assert [c["role"] for c in replay] == ["user", *["model"] * turn.chunks, "user"]
    signed = [p for c in replay for p in c["parts"] if "thoughtSignature" in p]
    assert len(signed) == 1
    assert ggc.same_signature(signed[0]["thoughtSignature"], SIGNATURE)
    server.assert_script_done()


def test_callgate_continuation_goes_through_the_sdk_and_matches(served: Any) -> None:
    server, recorder = served(
        _script(
            {**TWO_CALLS, "expect": {"stream": True}},
            {"text": "ok", "expect": {"function_results": [
                {"name": "get_weather", "output": {"temp": 20}},
                {"name": "get_time", "output": "12:00", "is_error": True}]}},
        )
    )  # fmt: skip
    client = genai_client(server, "v1")
    user = {"role": "user", "parts": [{"text": "Weather?"}]}
    list(client.models.generate_content_stream(model=MODEL, contents=[user], config=_config()))
    turn = _parse(recorder, 0)
    results = [ToolResult(turn.calls[0].call_id, {"temp": 20}),
               ToolResult(turn.calls[1].call_id, "12:00", is_error=True)]  # fmt: skip
    request = ggc.build_continuation(
        turn, results, history=[user], model=MODEL,
        tools=[{"functionDeclarations": DECLS}], tool_config=None, system_instruction=None,
        generation_config=None, safety_settings=None,
    )  # fmt: skip
    contents = [types.Content.model_validate(c) for c in request["body"]["contents"]]
    assert client.models.generate_content(model=MODEL, contents=contents).text == "ok"
    server.assert_script_done()


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
def test_automatic_function_calling_runs_the_functions_and_the_journal_shows_it(
    served: Any, stream: bool
) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> dict[str, Any]:
        ran.append(city)
        return {"temp": 21}

    # Real types, not this module's postponed strings: google-genai 2.12.1 reads them as such.
    get_weather.__annotations__ = {"city": str, "return": dict}

    server, recorder = served(
        _script(
            {"calls": [call("get_weather", city="Rome")], "reasoning": {"signature": SIGNATURE}},
            {"text": "21 degrees.", "expect": {"function_results": [
                {"name": "get_weather", "output": {"temp": 21}}]}},
        )
    )  # fmt: skip
    client = genai_client(server, "v1")
    config = types.GenerateContentConfig(tools=[get_weather])
    if stream:
        chunks = list(
            client.models.generate_content_stream(model=MODEL, contents="Rome?", config=config)
        )
        text = "".join(c.text or "" for c in chunks)
    else:
        text = client.models.generate_content(model=MODEL, contents="Rome?", config=config).text
    assert ran == ["Rome"]
    assert text == "21 degrees."
    sent = [e for e in server.journal.page() if e.outcome == "matched"]
    assert len(sent) == 2
    replay = sent[1].body["contents"]
    answer = replay[-1]["parts"][0]["functionResponse"]
    assert (answer["name"], answer["response"]) == ("get_weather", {"result": {"temp": 21}})
    assert ggc.same_signature(replay[1]["parts"][0]["thoughtSignature"], SIGNATURE)
    assert _released(_parse(recorder, 0))[0][1:] == ("get_weather", {"city": "Rome"})
    server.assert_script_done()


def test_automatic_function_calling_off_returns_the_calls(served: Any) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        ran.append(city)  # pragma: no cover - must not run
        return "x"

    get_weather.__annotations__ = {"city": str, "return": str}

    server, recorder = served(_script({"calls": [call("get_weather", city="Rome")]}))
    config = types.GenerateContentConfig(
        tools=[get_weather],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    response = genai_client(server, "v1beta").models.generate_content(
        model=MODEL, contents="Rome?", config=config
    )
    assert ran == []
    assert _released(_parse(recorder, 0)) == _ids(response.function_calls)
    assert len(recorder.exchanges) == 1
    server.assert_script_done()


# -- native checks, answered to the SDK as the API answers --------------------------------------


def _first_turn(served: Any, **validation: bool) -> tuple[MockServer, genai.Client, list[Any]]:
    server, _recorder = served(
        _script(
            {**TWO_CALLS, "expect": {"stream": False}},
            {"text": "done"},
            validation=validation or None,
        )
    )
    client = genai_client(server, "v1")
    response = client.models.generate_content(model=MODEL, contents="Weather?", config=_config())
    model = response.candidates[0].content.model_dump(mode="json", by_alias=True, exclude_none=True)
    user = {"role": "user", "parts": [{"text": "Weather?"}]}
    return server, client, [user, model]


def _answer(name: str) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"result": 1}}}


def _send(client: genai.Client, contents: list[Any]) -> Any:
    return client.models.generate_content(model=MODEL, contents=contents, config=_config())


def test_a_missing_signature_is_refused_with_the_apis_400(served: Any) -> None:
    _server, client, history = _first_turn(served)
    for part in history[1]["parts"]:
        part.pop("thoughtSignature", None)
    answers = {"role": "user", "parts": [_answer("get_weather"), _answer("get_time")]}
    with pytest.raises(errors.ClientError) as err:
        _send(client, [*history, answers])
    assert err.value.code == 400
    assert "missing a thought_signature" in str(err.value)
    assert "default_api:get_weather" in str(err.value)
    assert "position 2" in str(err.value)


def test_an_altered_signature_is_corrupted(served: Any) -> None:
    _server, client, history = _first_turn(served)
    signed = next(p for p in history[1]["parts"] if "thoughtSignature" in p)
    signed["thoughtSignature"] = base64.b64encode(b"forged").decode()
    answers = {"role": "user", "parts": [_answer("get_weather"), _answer("get_time")]}
    with pytest.raises(errors.ClientError, match="Corrupted thought signature"):
        _send(client, [*history, answers])


def test_results_in_two_user_contents_are_refused(served: Any) -> None:
    _server, client, history = _first_turn(served)
    split = [{"role": "user", "parts": [_answer("get_weather")]},
             {"role": "user", "parts": [_answer("get_time")]}]  # fmt: skip
    with pytest.raises(errors.ClientError, match="number of function response parts"):
        _send(client, [*history, *split])


def test_a_function_response_without_its_call_is_refused(served: Any) -> None:
    _server, client, history = _first_turn(served)
    answers = {"role": "user", "parts": [_answer("get_weather"), _answer("lookup")]}
    with pytest.raises(errors.ClientError, match="immediately after a function call turn"):
        _send(client, [*history, answers])
    with pytest.raises(errors.ClientError, match="immediately after a function call turn"):
        _send(client, [history[0], {"role": "user", "parts": [_answer("get_weather")]}])


def test_a_switched_off_check_lets_the_request_reach_the_script(served: Any) -> None:
    _server, client, history = _first_turn(served, gemini_gc_signature_present=False)
    for part in history[1]["parts"]:
        part.pop("thoughtSignature", None)
    answers = {"role": "user", "parts": [_answer("get_weather"), _answer("get_time")]}
    assert _send(client, [*history, answers]).text == "done"


# -- faults -------------------------------------------------------------------------------------


def test_http_error_reaches_the_sdk_as_its_client_error(served: Any) -> None:
    fault = {"type": "http_error", "status": 429, "message": "slow down", "retry_after": 3}
    server, _recorder = served(_script({"text": "x", "fault": fault}))
    with pytest.raises(errors.ClientError) as err:
        genai_client(server, "v1").models.generate_content(model=MODEL, contents="x")
    assert err.value.code == 429
    assert err.value.status == "RESOURCE_EXHAUSTED"


def test_an_error_chunk_raises_in_the_sdk_and_is_a_provider_error_to_callgate(served: Any) -> None:
    fault = {"type": "error_event", "after": 1, "code": "503", "message": "overloaded"}
    server, recorder = served(_script({"text": "abcdef", "chunking": {"fixed": 2}, "fault": fault}))
    with pytest.raises(errors.ServerError):
        list(genai_client(server, "v1").models.generate_content_stream(model=MODEL, contents="x"))
    with pytest.raises(ProviderError) as err:
        _parse(recorder, 0)
    assert (err.value.error_code, err.value.error_type) == ("503", "UNAVAILABLE")


@pytest.mark.parametrize(
    "respond",
    [
        {"calls": [call("get_weather", city="Paris"), call("get_time", tz="CET")],
         "fault": {"type": "truncate", "call": 1, "keep": 3}},
        {"text": "abcdef", "chunking": {"fixed": 2}, "disconnect_after": 2},
    ],
    ids=["truncate", "disconnect"],
)  # fmt: skip
def test_a_cut_stream_ends_silently_in_the_sdk_and_is_truncated_to_callgate(
    served: Any, respond: dict[str, Any]
) -> None:
    server, recorder = served(_script(respond))
    chunks = list(
        genai_client(server, "v1").models.generate_content_stream(model=MODEL, contents="x")
    )
    assert all(ch.candidates[0].finish_reason is None for ch in chunks)
    with pytest.raises(TruncatedStreamError):
        _parse(recorder, 0)
