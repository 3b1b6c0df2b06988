"""Faults placed by a named point, as the unmodified official SDKs observe them over a real
socket; callgate's parsers refuse the same bytes. Runs with both SDK generations."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from callgate import ProviderError, TruncatedStreamError
from callgate import anthropic_messages as am
from callgate import gemini_generate_content as ggc
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import MockServer, Script

GENERATION = int(importlib.metadata.version("openai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
MODEL = "m"
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},  # 16 chars: 4 deltas of 4
    {"name": "get_time", "arguments": {"tz": "UTC"}},
]


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[MockServer] = []

    def start(protocol: str, fault: dict[str, Any]) -> MockServer:
        respond = {"text": "Checking.", "calls": CALLS, "chunking": {"fixed": 4}, "fault": fault}
        script = Script.from_dict(
            {"baseline": BASELINE, "turns": [{"protocol": protocol, "respond": respond}]}
        )
        server = MockServer(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _sent(server: MockServer) -> bytes:
    return str(server.journal.last(outcome="matched").response).encode()


def test_openai_sdk_raises_on_an_error_event_after_two_argument_deltas(serve: Any) -> None:
    fault = {"type": "error_event", "after_call": 0, "after_argument_deltas": 2,
             "message": "cut mid-arguments"}  # fmt: skip
    server = serve("openai_responses", fault)
    seen: list[Any] = []
    with (
        openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0,
                      _strict_response_validation=True) as client,
        pytest.raises(openai.APIError) as info,
    ):  # fmt: skip
        seen.extend(client.responses.create(model=MODEL, input="weather?", stream=True))
    assert info.value.message == "cut mid-arguments"
    deltas = [e.delta for e in seen if e.type == "response.function_call_arguments.delta"]
    assert deltas == ['{"ci', 'ty":']
    with pytest.raises(ProviderError):
        oai.parse_stream(_sent(server))


def test_anthropic_stream_helper_ends_without_a_final_message_before_terminal(
    serve: Any,
) -> None:
    server = serve("anthropic_messages", {"type": "disconnect", "before_terminal": True})
    with anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="k", max_retries=0,
                             _strict_response_validation=True) as client:  # fmt: skip
        events = list(
            client.messages.create(
                model=MODEL, max_tokens=64, stream=True,
                messages=[{"role": "user", "content": "weather?"}],
            )
        )  # fmt: skip
    kinds = [e.type for e in events]
    assert kinds.count("content_block_stop") == 3  # text and both tool uses are complete
    assert "message_delta" not in kinds  # ... but no stop reason ever came
    with pytest.raises(TruncatedStreamError):
        am.parse_stream(_sent(server))


def test_gemini_interactions_sdk_sees_the_stream_cut_after_a_call(serve: Any) -> None:
    server = serve("gemini_interactions", {"type": "disconnect", "after_call": 0})
    options = {"base_url": server.gemini_base_url, "api_version": "v1"}
    with genai.Client(api_key="k", http_options=options) as client:
        events = list(client.interactions.create(model=MODEL, input="weather?", stream=True))
    kinds = [e.event_type for e in events]
    assert kinds[-1] == "step.stop"
    started = [e for e in events if e.event_type == "step.start"]
    assert [e.step.type for e in started] == ["model_output", "function_call"]
    with pytest.raises(TruncatedStreamError):
        gi.parse_stream(_sent(server))


def test_google_genai_stream_yields_the_first_call_only_before_terminal(serve: Any) -> None:
    server = serve("gemini_generate_content", {"type": "disconnect", "before_terminal": True})
    options = {"base_url": server.gemini_base_url, "api_version": "v1beta"}
    client = genai.Client(api_key="k", http_options=options)
    config = types.GenerateContentConfig(
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents="weather?", config=config)
    )
    called = [c.function_calls[0] for c in chunks if c.function_calls]
    assert [(f.name, f.args) for f in called] == [("get_weather", {"city": "Paris"})]
    assert all(c.candidates[0].finish_reason is None for c in chunks if c.candidates)
    with pytest.raises(TruncatedStreamError):
        ggc.parse_stream(_sent(server))
