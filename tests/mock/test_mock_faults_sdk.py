"""Each fault as the unmodified official SDKs see it, over a real socket.

The same bytes are also fed to callgate's parsers where the SDK lets a fault through.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from google import genai
from google.genai import _interactions_errors as genai_errors

from callgate import ProviderError
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import MockServer, ScriptBuilder, call

from .conftest import AUTH, PATHS

MODEL = "m"
ARGS = {"city": "Paris"}


def _script(protocol: str, *responds: dict[str, Any]) -> Any:
    builder = ScriptBuilder(seed=4)
    for respond in responds or ({},):
        respond = {"calls": [call("get_weather", **ARGS)], "chunking": {"fixed": 3}, **respond}
        builder.turn(protocol, expect={"model": MODEL}, **respond)
    return builder.build()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[MockServer] = []

    def start(protocol: str, *responds: dict[str, Any]) -> MockServer:
        server = MockServer(_script(protocol, *responds)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _openai(server: MockServer, **options: Any) -> openai.OpenAI:
    options.setdefault("max_retries", 0)
    return openai.OpenAI(
        base_url=server.openai_base_url,
        api_key="k",
        _strict_response_validation=True,
        **options,
    )


def _anthropic(server: MockServer, **options: Any) -> anthropic.Anthropic:
    options.setdefault("max_retries", 0)
    return anthropic.Anthropic(
        base_url=server.anthropic_base_url,
        api_key="k",
        _strict_response_validation=True,
        **options,
    )


def _gemini(server: MockServer, **http_options: Any) -> genai.Client:
    return genai.Client(
        api_key="k",
        http_options={"base_url": server.gemini_base_url, "api_version": "v1", **http_options},
    )


def _sent(server: MockServer) -> bytes:
    """The SSE text the server sent for its last streamed answer (from the journal)."""
    return str(server.journal.last(outcome="matched").response).encode()


ANTHROPIC_REQUEST = {
    "model": MODEL,
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "weather?"}],
}


# -- in-stream error events -------------------------------------------------------------------


def test_openai_sdk_raises_on_a_nested_error_event(serve: Any) -> None:
    fault = {"type": "error_event", "after": 3, "message": "mid-stream limit"}
    server = serve("openai_responses", {"fault": fault})
    with _openai(server) as client, pytest.raises(openai.APIError) as info:
        list(client.responses.create(model=MODEL, input="weather?", stream=True))
    assert info.value.message == "mid-stream limit"
    with pytest.raises(ProviderError):
        oai.parse_stream(_sent(server))


def test_openai_sdk_yields_a_flat_error_event_and_callgate_still_fails_closed(serve: Any) -> None:
    fault = {"type": "error_event", "after": 3, "shape": "flat", "message": "flat one"}
    server = serve("openai_responses", {"fault": fault})
    with _openai(server) as client:
        events = list(client.responses.create(model=MODEL, input="weather?", stream=True))
    assert [e.type for e in events][-1] == "error"
    assert events[-1].message == "flat one"
    with pytest.raises(ProviderError) as info:
        oai.parse_stream(_sent(server))
    assert info.value.provider_message == "flat one"


def test_anthropic_sdk_raises_api_status_error_on_event_error(serve: Any) -> None:
    server = serve("anthropic_messages", {"fault": {"type": "error_event", "after": 2}})
    with _anthropic(server) as client, pytest.raises(anthropic.APIStatusError) as info:
        list(client.messages.create(**ANTHROPIC_REQUEST, stream=True))
    assert info.value.status_code == 200  # the stream had begun: the generic class
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    assert info.value.body == {"type": "error", "error": overloaded}


def test_gemini_sdk_yields_the_error_event_and_callgate_raises(serve: Any) -> None:
    server = serve("gemini_interactions", {"fault": {"type": "error_event", "after": 2}})
    with _gemini(server) as client:
        events = list(client.interactions.create(model=MODEL, input="weather?", stream=True))
    assert [e.event_type for e in events] == [
        "interaction.created", "interaction.status_update", "error",
    ]  # fmt: skip
    with pytest.raises(ProviderError):
        gi.parse_stream(_sent(server))


def test_openai_sdk_fails_on_a_malformed_frame(serve: Any) -> None:
    server = serve("openai_responses", {"fault": {"type": "malformed", "after": 2}})
    with _openai(server) as client, pytest.raises(json.JSONDecodeError):
        list(client.responses.create(model=MODEL, input="weather?", stream=True))


# -- HTTP errors and the SDKs' retries --------------------------------------------------------


def test_openai_sdk_retries_a_429_after_its_retry_after(serve: Any) -> None:
    server = serve("openai_responses", {"fault": {"type": "http_error", "status": 429}})
    started = time.monotonic()
    with _openai(server, max_retries=1) as client:
        response = client.responses.create(model=MODEL, input="weather?")
    assert time.monotonic() - started >= 1.0  # Retry-After: 1 was honoured
    assert json.loads(response.output[0].arguments) == ARGS
    assert [e.outcome for e in server.journal.entries()] == ["fault", "matched"]
    assert len(server.state.served_turns()) == 1
    server.assert_script_done()


def test_anthropic_sdk_retries_a_429_after_its_retry_after(serve: Any) -> None:
    server = serve("anthropic_messages", {"fault": {"type": "http_error", "status": 429}})
    started = time.monotonic()
    with _anthropic(server, max_retries=1) as client:
        message = client.messages.create(**ANTHROPIC_REQUEST)
    assert time.monotonic() - started >= 1.0
    assert message.content[0].input == ARGS
    assert [e.outcome for e in server.journal.entries()] == ["fault", "matched"]
    assert len(server.state.served_turns()) == 1


def test_gemini_sdk_retries_429_and_503_by_default(serve: Any) -> None:
    server = serve(
        "gemini_interactions",
        {"fault": {"type": "http_error", "status": 429}},
        {"fault": {"type": "http_error", "status": 503}},
    )
    with _gemini(server) as client:
        for _ in range(2):
            interaction = client.interactions.create(model=MODEL, input="weather?")
            assert interaction.status == "requires_action"
    outcomes = [(e.status, e.outcome) for e in server.journal.entries()]
    assert outcomes == [(429, "fault"), (200, "matched"), (503, "fault"), (200, "matched")]
    server.assert_script_done()


def test_sdks_without_retries_raise_their_typed_status_errors(serve: Any) -> None:
    server = serve("openai_responses", {"fault": {"type": "http_error", "status": 429}})
    with _openai(server) as client, pytest.raises(openai.RateLimitError) as info:
        client.responses.create(model=MODEL, input="weather?")
    assert info.value.code == "rate_limit_exceeded"
    assert info.value.response.headers["x-ratelimit-remaining-requests"] == "0"

    server = serve("anthropic_messages", {"fault": {"type": "http_error", "status": 529}})
    with _anthropic(server) as client, pytest.raises(anthropic.OverloadedError):
        client.messages.create(**ANTHROPIC_REQUEST, stream=True)

    server = serve("gemini_interactions", {"fault": {"type": "http_error", "status": 429}})
    with (
        _gemini(server, retry_options={"attempts": 1}) as client,
        pytest.raises(genai_errors.RateLimitError) as err,
    ):
        client.interactions.create(model=MODEL, input="weather?")
    details = err.value.body["error"]["details"]
    assert any(d["@type"].endswith("RetryInfo") for d in details)


# -- time to first byte, never-ending streams, client timeouts, shutdown ----------------------


def test_a_never_ending_stream_makes_a_short_read_timeout_fire(serve: Any) -> None:
    server = serve("openai_responses", {"fault": {"type": "never_end"}})
    with _openai(server, timeout=0.5) as client:
        stream = client.responses.create(model=MODEL, input="weather?", stream=True)
        seen: list[str] = []
        with pytest.raises(openai.APITimeoutError):
            seen.extend(event.type for event in stream)  # all events arrive, then nothing
    assert seen[-1] == "response.completed"
    # The client gave up and closed: the held response ends and is journaled.
    deadline = time.monotonic() + 3
    while server.journal.last().outcome is None and time.monotonic() < deadline:
        time.sleep(0.02)
    entry = server.journal.last()
    assert entry.outcome == "matched"
    assert "response.completed" in entry.response


def test_time_to_first_byte_beyond_the_read_timeout_is_a_timeout(serve: Any) -> None:
    # The status line and headers leave at once; the first event is what is late. The
    # anthropic SDK lets its transport's (httpx2) ReadTimeout escape mid-stream unwrapped.
    server = serve("anthropic_messages", {"pacing": {"first_byte_ms": 1500}})
    with _anthropic(server, timeout=0.3) as client:
        stream = client.messages.create(**ANTHROPIC_REQUEST, stream=True)
        with pytest.raises(httpx2.ReadTimeout):
            list(stream)


def test_a_held_stream_does_not_block_server_shutdown() -> None:
    server = MockServer(_script("gemini_interactions", {"fault": {"type": "never_end"}})).start()
    received: list[bytes] = []
    done = threading.Event()

    def client() -> None:
        protocol = "gemini_interactions"
        with httpx.stream(
            "POST",
            server.url + PATHS[protocol],
            json={"model": MODEL, "stream": True},
            headers=AUTH[protocol],
            timeout=httpx.Timeout(30.0),
        ) as response:
            for chunk in response.iter_bytes():
                received.append(chunk)
        done.set()

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while b"interaction.completed" not in b"".join(received) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert b"interaction.completed" in b"".join(received)
    assert not done.is_set()  # the stream is being held open
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 3
    assert done.wait(3)  # the client saw the stream end
    assert server.journal.last().outcome == "matched"
