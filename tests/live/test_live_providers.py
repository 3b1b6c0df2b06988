"""The live suite: the real provider APIs, through the recorder, with the pinned SDKs.

Runs only with ``CALLGATE_LIVE=1`` and the provider's key in the environment
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``); otherwise every test is
skipped and says why, so it never runs in CI by default. SDK and API versions are pinned
(Gemini Interactions on ``v1``; the Anthropic SDK sends its ``anthropic-version``), SDK
retries are off and a provider error is a failure. Per protocol: a smoke turn returning
short text, then a read-only tool loop (one call of a constant lookup, answered, then the
final text). Every exchange is captured by ``recording_transport`` into
``CALLGATE_LIVE_RECORDINGS`` (default: a temporary folder), pseudonymised, and each
recording must parse with callgate's gate. Models can be overridden with
``CALLGATE_LIVE_<PROVIDER>_MODEL``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.contracts import load_fixture
from callgate.recording import Recorder, recording_transport

pytestmark = pytest.mark.live

PINNED = {"openai": "3.57.0", "anthropic": "2.14.0", "google-genai": "3.6.1"}
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
        "google-genai": "GEMINI_API_KEY"}  # fmt: skip
MODELS = {"openai": "gpt-5-mini", "anthropic": "claude-haiku-4-5",
          "google-genai": "gemini-3-flash-preview"}  # fmt: skip
SMOKE = "Reply with the single word: ready"
ASK = "What is the capital of France? Use the lookup_capital tool, then answer in one word."


def _require(sdk: str, version: str) -> str:
    if os.environ.get("CALLGATE_LIVE") != "1":
        pytest.skip("live suite: set CALLGATE_LIVE=1 (and the provider's key) to run it")
    key = os.environ.get(KEYS[sdk])
    if not key:
        pytest.skip(f"live suite: {KEYS[sdk]} is not set")
    if version != PINNED[sdk]:
        pytest.skip(f"live suite pins {sdk}=={PINNED[sdk]}, found {version}")
    return key


def _model(sdk: str) -> str:
    return os.environ.get(f"CALLGATE_LIVE_{sdk.split('-')[0].upper()}_MODEL", MODELS[sdk])


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    folder = os.environ.get("CALLGATE_LIVE_RECORDINGS")
    return Recorder(Path(folder) if folder else tmp_path, pseudonymize=True)


def _last(recorder: Recorder) -> Path:
    assert recorder.written, "nothing was recorded"
    return recorder.written[-1]


def test_openai_responses_smoke_and_tool_loop(recorder: Recorder) -> None:
    import httpx2
    import openai

    key = _require("openai", openai.__version__)
    http = httpx2.Client(transport=recording_transport(httpx2.HTTPTransport(), recorder))
    client = openai.OpenAI(api_key=key, http_client=http, max_retries=0)
    tools = [{"type": "function", "name": "lookup_capital", "description": "Capital of a country",
              "parameters": {"type": "object", "properties": {"country": {"type": "string"}},
                             "required": ["country"]}}]  # fmt: skip
    with client:
        list(client.responses.create(model=_model("openai"), input=SMOKE, stream=True))
        assert oai.parse_stream(load_fixture(_last(recorder)).data).text.strip()
        list(client.responses.create(model=_model("openai"), input=ASK, stream=True, tools=tools))
        turn = oai.parse_stream(load_fixture(_last(recorder)).data)
        assert [c.name for c in turn.calls] == ["lookup_capital"]
        outputs = [{"type": "function_call_output", "call_id": c.call_id, "output": "Paris"}
                   for c in turn.calls]  # fmt: skip
        list(client.responses.create(model=_model("openai"), previous_response_id=turn.response_id,
                                     input=outputs, stream=True, tools=tools))  # fmt: skip
    assert "Paris" in oai.parse_stream(load_fixture(_last(recorder)).data).text


def test_anthropic_messages_smoke_and_tool_loop(recorder: Recorder) -> None:
    import anthropic
    import httpx2

    key = _require("anthropic", anthropic.__version__)
    http = httpx2.Client(transport=recording_transport(httpx2.HTTPTransport(), recorder))
    client = anthropic.Anthropic(api_key=key, http_client=http, max_retries=0)
    tools = [{"name": "lookup_capital", "description": "Capital of a country",
              "input_schema": {"type": "object", "properties": {"country": {"type": "string"}},
                               "required": ["country"]}}]  # fmt: skip
    model = _model("anthropic")
    with client:
        smoke = [{"role": "user", "content": SMOKE}]
        list(client.messages.create(model=model, max_tokens=32, messages=smoke, stream=True))
        assert am.parse_stream(load_fixture(_last(recorder)).data).content
        history: list = [{"role": "user", "content": ASK}]
        list(client.messages.create(model=model, max_tokens=256, messages=history, tools=tools,
                                    stream=True))  # fmt: skip
        turn = am.parse_stream(load_fixture(_last(recorder)).data)
        assert [c.name for c in turn.calls] == ["lookup_capital"]
        history.append({"role": "assistant", "content": list(turn.content)})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c.call_id, "content": "Paris"}
            for c in turn.calls]})  # fmt: skip
        list(client.messages.create(model=model, max_tokens=64, messages=history, tools=tools,
                                    stream=True))  # fmt: skip
    final = am.parse_stream(load_fixture(_last(recorder)).data)
    assert any("Paris" in block.get("text", "") for block in final.content)


def test_gemini_interactions_smoke_and_tool_loop(recorder: Recorder) -> None:
    import httpx
    from google import genai

    key = _require("google-genai", genai.__version__)
    http = httpx.Client(transport=recording_transport(httpx.HTTPTransport(), recorder))
    client = genai.Client(api_key=key, http_options={"httpx_client": http, "api_version": "v1"})
    tools = [{"type": "function", "name": "lookup_capital", "description": "Capital of a country",
              "parameters": {"type": "object", "properties": {"country": {"type": "string"}},
                             "required": ["country"]}}]  # fmt: skip
    model = _model("google-genai")
    try:
        list(client.interactions.create(model=model, input=SMOKE, stream=True))
        assert gi.parse_stream(load_fixture(_last(recorder)).data).steps
        list(client.interactions.create(model=model, input=ASK, tools=tools, stream=True))
        turn = gi.parse_stream(load_fixture(_last(recorder)).data)
        assert [c.name for c in turn.calls] == ["lookup_capital"]
        results = [{"type": "function_result", "call_id": c.call_id, "name": c.name,
                    "result": "Paris"} for c in turn.calls]  # fmt: skip
        list(client.interactions.create(model=model, previous_interaction_id=turn.interaction_id,
                                        input=results, tools=tools, stream=True))  # fmt: skip
    finally:
        client.close()
        http.close()
    final = gi.parse_stream(load_fixture(_last(recorder)).data)
    assert "Paris" in repr(final.steps)
