"""Capture through the official SDKs' own http clients, with the mock standing in upstream.

Each test drives an unmodified SDK whose transport is wrapped by ``recording_transport``:
the SDK sees exactly what the server sent (its decoded result equals an unrecorded run), the
recording holds the very bytes, loads as a ``recorded`` fixture, and the room's parser gives
the same turn from the recorded bytes as from the live ones.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import anthropic
import httpx
import httpx2
import openai
import pytest
from google import genai

from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.contracts import load_fixture, load_fixtures
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, SecretFoundError, recording_transport


def _script(protocol: str) -> object:
    return (
        ScriptBuilder(seed=3)
        .turn(protocol, calls=[call("get_weather", city="Paris")], chunking="char")
        .build()
    )


def _openai_events(client: openai.OpenAI) -> list[dict]:
    stream = client.responses.create(
        model="m",
        input="weather?",
        stream=True,
        tools=[{"type": "function", "name": "get_weather", "parameters": {}}],
    )
    return [event.to_dict(mode="json") for event in stream]


def test_openai_sdk_on_httpx2_sees_the_same_stream_and_the_recording_holds_its_bytes(
    tmp_path: Path,
) -> None:
    with MockServer(_script("openai_responses")) as server:
        recorder = Recorder(tmp_path)
        transport = recording_transport(httpx2.HTTPTransport(), recorder)
        client = openai.OpenAI(
            base_url=server.openai_base_url,
            api_key="sk-test-not-a-real-key",
            http_client=httpx2.Client(transport=transport),
            max_retries=0,
        )
        with client:
            events = _openai_events(client)
    (path,) = recorder.written
    fixture = load_fixture(path)
    assert fixture.layer == "recorded"
    assert fixture.streamed
    assert fixture.recording["sdk"] == {"name": "openai", "version": openai.__version__}
    assert fixture.recording["response"]["status"] == 200
    headers = dict(fixture.recording["request"]["headers"])
    assert "authorization" not in headers
    assert "sk-test" not in path.read_text() + fixture.path_sse.read_text()
    live = oai.Parser()
    for event in events:
        live.feed_event(event)
    recorded = oai.parse_stream(fixture.data)
    assert [(c.call_id, c.name, c.arguments) for c in recorded.calls] == [
        (c.call_id, c.name, c.arguments) for c in live.finish().calls
    ]


def test_anthropic_async_sdk_on_httpx2_is_recorded_chunk_by_chunk(tmp_path: Path) -> None:
    async def run(server: MockServer, recorder: Recorder) -> list[dict]:
        transport = recording_transport(httpx2.AsyncHTTPTransport(), recorder)
        client = anthropic.AsyncAnthropic(
            base_url=server.anthropic_base_url,
            api_key="sk-ant-test",
            http_client=httpx2.AsyncClient(transport=transport),
            max_retries=0,
        )
        stream = await client.messages.create(
            model="m",
            max_tokens=100,
            stream=True,
            messages=[{"role": "user", "content": "weather?"}],
            tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
        )
        events = [event.to_dict(mode="json") async for event in stream]
        await client.close()
        return events

    with MockServer(_script("anthropic_messages")) as server:
        recorder = Recorder(tmp_path)
        events = asyncio.run(run(server, recorder))
    (path,) = recorder.written
    fixture = load_fixture(path)
    assert fixture.recording["sdk"]["name"] == "anthropic"
    assert fixture.recording["model"] == "m"
    assert len(fixture.recording["response"]["chunks"]) >= 1
    live = am.Parser()
    for event in events:
        live.feed_event(event)
    assert am.parse_stream(fixture.data).calls == live.finish().calls


def test_gemini_sdk_on_httpx_is_recorded_and_the_key_never_reaches_disk(tmp_path: Path) -> None:
    with MockServer(_script("gemini_interactions")) as server:
        recorder = Recorder(tmp_path)
        transport = recording_transport(httpx.HTTPTransport(), recorder)
        http = httpx.Client(transport=transport)
        client = genai.Client(
            api_key="AIzaTESTKEYnotreal",
            http_options={
                "base_url": server.gemini_base_url,
                "api_version": "v1",
                "httpx_client": http,
            },
        )
        stream = client.interactions.create(
            model="m",
            input="weather?",
            stream=True,
            tools=[{"type": "function", "name": "get_weather", "parameters": {}}],
        )
        events = [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in stream]
        client.close()
        http.close()
    (fixture,) = load_fixtures(tmp_path)
    assert fixture.api_family == "gemini_interactions"
    assert "AIzaTESTKEY" not in fixture.path_json.read_text()
    live = gi.Parser()
    for event in events:
        live.feed_event(event)
    assert gi.parse_stream(fixture.data).calls == live.finish().calls


def test_a_planted_secret_in_the_request_refuses_the_recording_and_writes_nothing(
    tmp_path: Path,
) -> None:
    with MockServer(_script("openai_responses")) as server:
        recorder = Recorder(tmp_path)
        client = openai.OpenAI(
            base_url=server.openai_base_url,
            api_key="x",
            http_client=httpx2.Client(
                transport=recording_transport(httpx2.HTTPTransport(), recorder)
            ),
            max_retries=0,
        )
        planted = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0" * 2
        with client:
            stream = client.responses.create(
                model="m",
                input=f"my key is {planted}",
                stream=True,
                tools=[{"type": "function", "name": "get_weather", "parameters": {}}],
            )
            with pytest.raises(SecretFoundError, match="request body at byte"):
                list(stream)
    assert recorder.written == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_stream_cut_by_the_client_is_recorded_as_incomplete(tmp_path: Path) -> None:
    with MockServer(_script("openai_responses")) as server:
        recorder = Recorder(tmp_path)
        client = openai.OpenAI(
            base_url=server.openai_base_url,
            api_key="x",
            http_client=httpx2.Client(
                transport=recording_transport(httpx2.HTTPTransport(), recorder)
            ),
            max_retries=0,
        )
        stream = client.responses.create(
            model="m",
            input="weather?",
            stream=True,
            tools=[{"type": "function", "name": "get_weather", "parameters": {}}],
        )
        next(iter(stream))
        stream.close()
        client.close()
    (path,) = recorder.written
    recording = json.loads(path.read_text())["recording"]
    assert recording["response"]["complete"] is False
