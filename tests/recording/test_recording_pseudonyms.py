"""Opt-in pseudonyms, unrecorded side routes, and decoded gzip bodies."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import httpx2
import openai

from callgate import openai_responses as oai
from callgate.contracts import load_fixtures
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport
from callgate.recording._pseudo import Pseudonyms


def _two_turns() -> object:
    return (
        ScriptBuilder(seed=5)
        .turn("openai_responses", calls=[call("get_weather", city="Paris")])
        .turn("openai_responses", text="Sunny.")
        .build()
    )


def _client(server: MockServer, recorder: Recorder) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.openai_base_url,
        api_key="x",
        http_client=httpx2.Client(transport=recording_transport(httpx2.HTTPTransport(), recorder)),
        max_retries=0,
    )


def _run_two_turns(server: MockServer, recorder: Recorder) -> list[str]:
    tools = [{"type": "function", "name": "get_weather", "parameters": {}}]
    with _client(server, recorder) as client:
        first = client.responses.create(model="m", input="weather?", stream=True, tools=tools)
        done = next(e for e in list(first) if e.type == "response.completed").response
        call_id = done.output[0].call_id
        second = client.responses.create(
            model="m",
            previous_response_id=done.id,
            input=[{"type": "function_call_output", "call_id": call_id, "output": "sunny"}],
            stream=True,
            tools=tools,
        )
        list(second)
        return [done.id, call_id]


def test_pseudonyms_are_consistent_across_files_and_hide_the_provider_ids(
    tmp_path: Path,
) -> None:
    with MockServer(_two_turns()) as server:
        recorder = Recorder(tmp_path, pseudonymize=True)
        real_ids = _run_two_turns(server, recorder)
    first, second = load_fixtures(tmp_path)
    every_byte = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for real in real_ids:
        assert real.encode() not in every_byte
    turn = oai.parse_stream(first.data)
    (fake_call,) = turn.calls
    assert fake_call.call_id.startswith("call_")
    assert len(fake_call.call_id) == len(real_ids[1])
    body = second.recording["request"]["body"]
    assert body["input"][0]["call_id"] == fake_call.call_id  # same pseudonym in a request
    assert body["previous_response_id"] == turn.response_id
    # chunk sizes still add up to the pseudonymised bytes
    assert sum(n for n, _ in first.recording["response"]["chunks"]) == len(first.data)


def test_without_pseudonymize_the_ids_are_kept(tmp_path: Path) -> None:
    with MockServer(_two_turns()) as server:
        real_ids = _run_two_turns(server, Recorder(tmp_path))
    assert real_ids[0].encode() in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_a_pseudonym_keeps_prefix_and_length_and_leaves_other_tokens_alone() -> None:
    table = Pseudonyms(key=b"k" * 32)
    table.learn(b'{"id":"resp_0123456789abcdef","name":"resp_0123456789abcdef_x"}')
    out = table.apply(b'{"id":"resp_0123456789abcdef","name":"resp_0123456789abcdef_x"}')
    new_id = json.loads(out)["id"]
    assert new_id.startswith("resp_")
    assert len(new_id) == len("resp_0123456789abcdef")
    assert new_id != "resp_0123456789abcdef"
    assert json.loads(out)["name"] == "resp_0123456789abcdef_x"
    assert Pseudonyms(key=b"k" * 32).apply(b"resp_0123456789abcdef") == b"resp_0123456789abcdef"


def test_side_routes_pass_through_unrecorded(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": []})

    recorder = Recorder(tmp_path)
    transport = recording_transport(httpx.MockTransport(handler), recorder)
    with httpx.Client(transport=transport) as client:
        assert client.get("https://api.openai.com/v1/models").json() == {"data": []}
    assert recorder.skipped == 1
    assert list(tmp_path.iterdir()) == []


def test_a_gzip_body_is_recorded_decoded_and_the_client_still_sees_it(tmp_path: Path) -> None:
    body = json.dumps(
        {"id": "resp_1", "object": "response", "status": "completed", "output": []}
    ).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            content=gzip.compress(body),
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )

    recorder = Recorder(tmp_path)
    transport = recording_transport(httpx.MockTransport(handler), recorder)
    with httpx.Client(transport=transport) as client:
        seen = client.post("https://api.openai.com/v1/responses", json={"model": "m"}).content
    assert seen == body
    (fixture,) = load_fixtures(tmp_path)
    assert fixture.data == body
    assert fixture.body()["status"] == "completed"
    assert "content-encoding" not in dict(fixture.recording["response"]["headers"])
    # the schema hash of a JSON body comes from the body, not from '<not json>' lines
    other = Recorder(tmp_path / "b")
    with httpx.Client(transport=recording_transport(httpx.MockTransport(handler), other)) as c:
        c.post("https://api.openai.com/v1/responses", json={"model": "m"})
    (again,) = load_fixtures(tmp_path / "b")
    assert again.recording["schema_hash"] == fixture.recording["schema_hash"]


def test_a_transport_that_is_both_sync_and_async_is_wrapped_for_both(tmp_path: Path) -> None:
    import asyncio

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": "resp_1", "output": []})

    recorder = Recorder(tmp_path)
    transport = recording_transport(httpx.MockTransport(handler), recorder)
    with httpx.Client(transport=transport) as client:
        client.post("https://api.openai.com/v1/responses", json={"model": "m"})

    async def run() -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            await client.post("https://api.openai.com/v1/responses", json={"model": "m"})

    asyncio.run(run())
    assert len(recorder.written) == 2
