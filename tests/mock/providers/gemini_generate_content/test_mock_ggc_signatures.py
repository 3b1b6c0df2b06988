"""Thought signatures on generateContent: the mock signs a Gemini 3 model's responses where
Gemini 3 does (the first function call; else the last part), leaves Gemini 2.x unsigned,
lets a turn choose, and takes Google's two documented placeholders on replayed function
calls (as text and as base64) while still refusing a changed or a missing real signature
of the current turn. Raw requests over a real socket, plus google-genai's own chat loop,
which must replay what the mock signed and be served."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder, call

GEMINI_3 = "gemini-3-flash-preview"
GEMINI_25 = "gemini-2.5-flash"
TOOLS = [{"functionDeclarations": [{"name": "get_weather"}, {"name": "get_time"}]}]
TWO_CALLS = {"calls": [call("get_weather", city="Paris"), call("get_time", tz="CET")]}


def _post(server: MockServer, model: str, body: dict[str, Any], stream: bool = False) -> Any:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    url = f"{server.gemini_base_url}/v1beta/models/{model}:{method}"
    return httpx.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=30)


def _parts(response: httpx.Response, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        return list(response.json()["candidates"][0]["content"]["parts"])
    chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line]
    return [p for c in chunks for p in c["candidates"][0].get("content", {}).get("parts", ())]


def _served(*turns: dict[str, Any]) -> MockServer:
    builder = ScriptBuilder(seed=3)
    for turn in turns:
        builder.turn("gemini_generate_content", **turn)
    return MockServer(builder.build())


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_gemini_3_model_signs_only_the_first_of_parallel_calls(stream: bool) -> None:
    with _served({"text": "Checking.", **TWO_CALLS}) as server:
        parts = _parts(_post(server, GEMINI_3, {"contents": [], "tools": TOOLS}, stream), stream)
    calls = [p for p in parts if "functionCall" in p]
    assert [c["functionCall"]["name"] for c in calls] == ["get_weather", "get_time"]
    assert "thoughtSignature" in calls[0]
    assert "thoughtSignature" not in calls[1]
    assert [p for p in parts if "thoughtSignature" in p] == [calls[0]]  # no text part signed


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_gemini_3_answer_without_calls_signs_its_last_part(stream: bool) -> None:
    with _served({"text": "Sunny in Paris.", "chunking": {"fixed": 5}}) as server:
        parts = _parts(_post(server, GEMINI_3, {"contents": []}, stream), stream)
    assert "".join(p["text"] for p in parts) == "Sunny in Paris."
    assert ["thoughtSignature" in p for p in parts] == [False] * (len(parts) - 1) + [True]


def test_every_response_carries_a_signature_of_its_own() -> None:
    with _served(TWO_CALLS, TWO_CALLS) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": []}), False)
        second = _parts(_post(server, GEMINI_3, {"contents": []}), False)
    assert first[0]["thoughtSignature"] != second[0]["thoughtSignature"]
    base64.b64decode(first[0]["thoughtSignature"], validate=True)  # standard base64


@pytest.mark.parametrize(
    ("model", "choice", "signed"),
    [
        (GEMINI_25, None, False),
        ("models/gemini-3.1-pro-preview", None, True),
        ("gemini-flash-latest", None, False),
        (GEMINI_3, False, False),
        (GEMINI_25, True, True),
    ],
)
def test_the_model_name_or_the_turn_decides_who_signs(
    model: str, choice: bool | None, signed: bool
) -> None:
    respond: dict[str, Any] = dict(TWO_CALLS)
    if choice is not None:
        respond["thought_signatures"] = choice
    with _served(respond) as server:
        parts = _parts(_post(server, model.removeprefix("models/"), {"contents": []}), False)
    assert ("thoughtSignature" in parts[0]) is signed


def test_a_scripted_signature_wins_over_the_generated_one() -> None:
    with _served({**TWO_CALLS, "reasoning": {"signature": "c2lnLWE="}}) as server:
        parts = _parts(_post(server, GEMINI_3, {"contents": []}), False)
    assert parts[0]["thoughtSignature"] == "c2lnLWE="


# -- what the mock accepts back ---------------------------------------------------------------

PROMPT = {"role": "user", "parts": [{"text": "Weather and time?"}]}
ANSWERS = {
    "role": "user",
    "parts": [
        {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}},
        {"functionResponse": {"name": "get_time", "response": {"output": "noon"}}},
    ],
}


def _replay(first: list[dict[str, Any]], signature: Any, on: int = 0) -> dict[str, Any]:
    """The continuation of ``first`` (the model's parts) with call ``on``'s signature set to
    ``signature`` (``None``: removed)."""
    model = [dict(p) for p in first]
    model[on].pop("thoughtSignature", None)
    if signature is not None:
        model[on]["thoughtSignature"] = signature
    return {"contents": [PROMPT, {"role": "model", "parts": model}, ANSWERS], "tools": TOOLS}


def _continue(signature: Any, on: int = 0, *, history: bool = False) -> httpx.Response:
    """Serve a two-call turn on a Gemini 3 model, then send its continuation with call
    ``on``'s signature replaced; ``history``: that exchange is an older turn, and a new
    user prompt starts the current one."""
    with _served(TWO_CALLS, {"text": "Done."}) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": [PROMPT], "tools": TOOLS}), False)
        body = _replay(first, signature, on)
        if history:
            body["contents"] += [
                {"role": "model", "parts": [{"text": "Sunny, noon."}]},
                {"role": "user", "parts": [{"text": "Thanks!"}]},
            ]
        return _post(server, GEMINI_3, body)


def test_the_signature_replayed_as_emitted_is_served() -> None:
    with _served(TWO_CALLS, {"text": "Done."}) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": [PROMPT], "tools": TOOLS}), False)
        urlsafe = base64.urlsafe_b64encode(base64.b64decode(first[0]["thoughtSignature"]))
        response = _post(server, GEMINI_3, _replay(first, urlsafe.decode()))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "placeholder",
    [
        "skip_thought_signature_validator",
        "context_engineering_is_the_way_to_go",
        base64.b64encode(b"skip_thought_signature_validator").decode(),
        base64.urlsafe_b64encode(b"context_engineering_is_the_way_to_go").decode(),
    ],
    ids=["skip-text", "context-text", "skip-base64", "context-base64-urlsafe"],
)
@pytest.mark.parametrize("on", [0, 1], ids=["signed-call", "unsigned-call"])
def test_a_documented_placeholder_on_a_replayed_call_is_served(placeholder: str, on: int) -> None:
    response = _continue(placeholder, on)
    assert response.status_code == 200, response.text


def test_a_placeholder_on_a_text_part_is_a_corrupted_signature() -> None:
    with _served(TWO_CALLS, {"text": "Done."}) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": [PROMPT], "tools": TOOLS}), False)
        body = _replay(first, first[0]["thoughtSignature"])
        body["contents"][1]["parts"].insert(
            0, {"text": "Checking.", "thoughtSignature": "skip_thought_signature_validator"}
        )
        response = _post(server, GEMINI_3, body)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Corrupted thought signature."


def test_a_changed_signature_is_still_refused() -> None:
    response = _continue(base64.b64encode(b"not what was sent").decode())
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": 400,
        "message": "Corrupted thought signature.",
        "status": "INVALID_ARGUMENT",
    }


def test_a_dropped_signature_of_the_current_turn_is_refused() -> None:
    response = _continue(None)
    assert response.status_code == 400
    assert "missing a thought_signature" in response.json()["error"]["message"]
    assert "default_api:get_weather" in response.json()["error"]["message"]


def test_a_dropped_signature_of_an_older_turn_is_not_validated() -> None:
    with _served(TWO_CALLS, {"text": "Sunny, noon."}, {"text": "You are welcome."}) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": [PROMPT], "tools": TOOLS}), False)
        assert _post(server, GEMINI_3, _replay(first, first[0]["thoughtSignature"])).is_success
        body = _replay(first, None)
        body["contents"] += [
            {"role": "model", "parts": [{"text": "Sunny, noon."}]},
            {"role": "user", "parts": [{"text": "Thanks!"}]},
        ]
        response = _post(server, GEMINI_3, body)
    assert response.status_code == 200, response.text


def test_the_sdk_chat_replays_what_a_gemini_3_model_signed() -> None:
    from google import genai
    from google.genai import types

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    with _served(
        {"calls": [call("get_weather", city="Paris"), call("get_weather", city="Rome")]},
        {"text": "Sunny in both."},
    ) as server:
        client = genai.Client(
            api_key="k", http_options={"base_url": server.gemini_base_url, "api_version": "v1beta"}
        )
        chat = client.chats.create(
            model=GEMINI_3, config=types.GenerateContentConfig(tools=[get_weather])
        )
        answer = chat.send_message("Weather in Paris and Rome?")
        server.assert_script_done()
        replayed = server.journal.entries()[1].body["contents"][1]["parts"]
    assert answer.text == "Sunny in both."
    assert "thoughtSignature" in replayed[0] or "thought_signature" in replayed[0]


def test_a_call_id_the_client_invented_still_meets_the_call_the_mock_signed() -> None:
    # The Vercel AI SDK and LiteLLM give an id-less call an id of their own when they replay
    # it: dropping its signature is still noticed.
    with _served(TWO_CALLS, {"text": "Done."}) as server:
        first = _parts(_post(server, GEMINI_3, {"contents": [PROMPT], "tools": TOOLS}), False)
        for n, part in enumerate(first):
            part["functionCall"]["id"] = f"client-{n}"
        dropped = _post(server, GEMINI_3, _replay(first, None))
        kept = _post(server, GEMINI_3, _replay(first, first[0]["thoughtSignature"]))
    assert dropped.status_code == 400
    assert "missing a thought_signature" in dropped.json()["error"]["message"]
    assert kept.status_code == 200, kept.text
