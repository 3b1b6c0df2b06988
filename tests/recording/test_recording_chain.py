"""The whole chain offline, with the mock standing in upstream: record through the proxy
and through the transport with the three official SDKs, replay, drift-check."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import httpx2
import openai
import pytest
import uvicorn
from google import genai

from callgate.cli import main
from callgate.cli._recording import parse_upstreams, proxy_app
from callgate.contracts import load_fixtures
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport
from callgate.recording._drift import check_directory

OAI_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {}}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def _script() -> object:
    return (
        ScriptBuilder(seed=11)
        .turn("openai_responses", calls=[call("get_weather", city="Rome")], chunking="char")
        .turn("anthropic_messages", calls=[call("get_weather", city="Rome")])
        .turn("gemini_interactions", calls=[call("get_weather", city="Rome")])
        .turn("openai_chat_completions", calls=[call("get_weather", city="Rome")])
        .build()
    )


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[tuple[str, Recorder, MockServer]]:
    with MockServer(_script()) as upstream:
        routes = parse_upstreams(
            [
                f"/openai={upstream.url}/openai",
                f"/anthropic={upstream.url}/anthropic",
                f"/gemini={upstream.url}/gemini",
            ]
        )
        recorder = Recorder(tmp_path / "rec")
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(
            uvicorn.Config(proxy_app(routes, recorder), log_level="warning", lifespan="on")
        )
        thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
        thread.start()
        while not server.started:
            time.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}", recorder, upstream
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()


def _drive(openai_url: str, anthropic_url: str, gemini_url: str, **clients: object) -> list:
    oai = openai.OpenAI(
        base_url=openai_url, api_key="x", max_retries=0, http_client=clients.get("oai")
    )
    ant = anthropic.Anthropic(
        base_url=anthropic_url, api_key="k", max_retries=0, http_client=clients.get("ant")
    )
    options: dict = {"base_url": gemini_url, "api_version": "v1"}
    if clients.get("gem") is not None:
        options["httpx_client"] = clients["gem"]
    gem = genai.Client(api_key="AIzaFAKE", http_options=options)
    out = [
        [e.to_dict(mode="json") for e in oai.responses.create(
            model="m", input="weather?", stream=True, tools=OAI_TOOLS)],
        [e.to_dict(mode="json") for e in ant.messages.create(
            model="m", max_tokens=64, stream=True,
            messages=[{"role": "user", "content": "weather?"}],
            tools=[{"name": "get_weather", "input_schema": {"type": "object"}}])],
        [e.model_dump(mode="json", exclude_none=True) for e in gem.interactions.create(
            model="m", input="weather?", stream=True, tools=OAI_TOOLS)],
        [e.to_dict(mode="json") for e in oai.chat.completions.create(
            model="m", stream=True, messages=[{"role": "user", "content": "weather?"}],
            tools=CHAT_TOOLS)],
    ]  # fmt: skip
    oai.close()
    ant.close()
    gem.close()
    for given in clients.values():
        given.close()  # type: ignore[attr-defined]
    return out


def test_record_through_the_proxy_replay_and_drift_check(proxy: tuple) -> None:
    url, recorder, _ = proxy
    live = _drive(f"{url}/openai/v1", f"{url}/anthropic", f"{url}/gemini")
    directory = recorder.directory
    # The proxy finishes a file after the client has every byte: the openai SDK closes a
    # Chat Completions stream at `[DONE]`, possibly before the proxy has written it.
    deadline = time.monotonic() + 10
    while any(p.suffix == ".part" for p in directory.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)
    names = [f.name for f in load_fixtures(directory)]
    assert names == ["0001-openai_responses", "0002-anthropic_messages",
                     "0003-gemini_interactions", "0004-openai_chat_completions"]  # fmt: skip
    sdks = [f.recording["sdk"]["name"] for f in load_fixtures(directory)]
    assert sdks == ["openai", "anthropic", "google-genai", "openai"]
    every = b"".join(p.read_bytes() for p in directory.iterdir())
    assert b"AIzaFAKE" not in every
    with MockServer.from_recordings(directory) as replay:
        again = _drive(replay.openai_base_url, replay.anthropic_base_url, replay.gemini_base_url)
        assert [e.outcome for e in replay.journal.entries()] == ["matched"] * 4
    assert again == live
    report = check_directory(directory)
    assert not report.affects_gate, report.text()
    assert len(report.files) == 4


def test_record_through_the_transports_of_each_sdk_then_replay(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    with MockServer(_script()) as upstream:
        live = _drive(
            upstream.openai_base_url, upstream.anthropic_base_url, upstream.gemini_base_url,
            oai=httpx2.Client(transport=recording_transport(httpx2.HTTPTransport(), recorder)),
            ant=httpx2.Client(transport=recording_transport(httpx2.HTTPTransport(), recorder)),
            gem=httpx.Client(transport=recording_transport(httpx.HTTPTransport(), recorder)),
        )  # fmt: skip
    with MockServer.from_recordings(tmp_path) as replay:
        again = _drive(replay.openai_base_url, replay.anthropic_base_url, replay.gemini_base_url)
    assert again == live
    assert main(["check", "--drift", str(tmp_path)]) == 0


def test_check_drift_exits_non_zero_on_an_event_type_the_parser_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(tmp_path)
    with MockServer(_script()) as upstream:
        transport = recording_transport(httpx.HTTPTransport(), recorder)
        with httpx.Client(transport=transport) as client:
            client.post(
                f"{upstream.openai_base_url}/responses",
                headers={"authorization": "Bearer x"},
                json={"model": "m", "input": "w", "stream": True, "tools": OAI_TOOLS},
            )
    sse = tmp_path / "0001-openai_responses.sse"
    planted = (
        b'event: response.brand_new\ndata: {"type":"response.brand_new","sequence_number":1}\n\n'
    )
    data = sse.read_bytes()
    cut = data.index(b"event: response.output_item.added")
    sse.write_bytes(data[:cut] + planted + data[cut:])
    meta_path = sse.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["recording"]["response"]["chunks"].append([len(planted), 0.0])  # keep sizes honest
    meta_path.write_text(json.dumps(meta))
    assert main(["check", "--drift", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "DRIFT" in out
    assert "response.brand_new" in out
    assert "new stream event type 'response.brand_new'" in out
    assert main(["check", "--drift", str(tmp_path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["affects_gate"] is True


def test_check_needs_a_stream_or_drift(capsys: pytest.CaptureFixture[str]) -> None:
    # (serve without --script or --recordings serves registered sessions: test_cli_serve_log)
    assert main(["check"]) == 2
    assert "--drift DIR" in capsys.readouterr().err


def test_upstreams_parse_as_one_url_or_prefixed_routes() -> None:
    from callgate import UsageError

    assert parse_upstreams(["https://api.openai.com/"]) == [("", "https://api.openai.com")]
    assert parse_upstreams(["/a=http://h/a", "/a/b=http://h/b"])[0] == ("/a/b", "http://h/b")
    with pytest.raises(UsageError):
        parse_upstreams(["openai=http://h"])
    with pytest.raises(UsageError):
        parse_upstreams(["/openai=ftp://h"])


def test_check_drift_names_what_the_mock_does_not_render_for_the_same_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(tmp_path)
    script = ScriptBuilder(seed=4).turn("anthropic_messages", text="Hi there.").build()
    with MockServer(script) as upstream:
        transport = recording_transport(httpx.HTTPTransport(), recorder)
        with httpx.Client(transport=transport) as client:
            client.post(
                f"{upstream.anthropic_base_url}/v1/messages",
                headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                json={"model": "m", "max_tokens": 64, "stream": True,
                      "messages": [{"role": "user", "content": "hi"}]},
            )  # fmt: skip
    sse = tmp_path / "0001-anthropic_messages.sse"
    block = b'"type":"text","text":""'
    data = sse.read_bytes().replace(block, block + b',"citations":null', 1)
    sse.write_bytes(data)
    meta_path = sse.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["recording"]["response"]["chunks"] = [[len(data), 1.0]]
    meta_path.write_text(json.dumps(meta))
    assert main(["check", "--drift", str(tmp_path)]) == 0  # informational only
    out = capsys.readouterr().out
    assert "against the mock's rendering of the same turn" in out
    assert "the mock's 'text' lacks citations" in out
    assert main(["check", "--drift", str(tmp_path), "--no-mock"]) == 0
    assert "lacks citations" not in capsys.readouterr().out
