"""Replay: recordings served back byte-exact, matched by conversation position."""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
import openai
import pytest

from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {}}]


def _record(tmp_path: Path) -> Path:
    script = (
        ScriptBuilder(seed=9)
        .turn("openai_responses", calls=[call("get_weather", city="Oslo")], chunking={"fixed": 3})
        .turn("openai_responses", text="Cold.", chunking="char")
        .build()
    )
    with MockServer(script) as server:
        recorder = Recorder(tmp_path)
        client = openai.OpenAI(
            base_url=server.openai_base_url,
            api_key="x",
            http_client=httpx2.Client(
                transport=recording_transport(httpx2.HTTPTransport(), recorder)
            ),
            max_retries=0,
        )
        with client:
            _conversation(client)
    return tmp_path


def _conversation(client: openai.OpenAI) -> list[list[dict]]:
    first = [e.to_dict(mode="json") for e in client.responses.create(
        model="m", input="weather?", stream=True, tools=TOOLS)]  # fmt: skip
    done = first[-1]["response"]
    call_id = done["output"][0]["call_id"]
    second = [e.to_dict(mode="json") for e in client.responses.create(
        model="m", previous_response_id=done["id"], stream=True, tools=TOOLS,
        input=[{"type": "function_call_output", "call_id": call_id, "output": "-3C"}])]  # fmt: skip
    return [first, second]


def test_replay_serves_the_recorded_bytes_and_the_sdk_sees_the_same_turns(tmp_path: Path) -> None:
    directory = _record(tmp_path)
    files = sorted(directory.glob("*.sse"))
    with MockServer.from_recordings(directory) as server:
        raw = httpx.post(
            f"{server.openai_base_url}/responses",
            content=(directory / "0001-openai_responses.json").read_bytes(),  # wrong body
            headers={"authorization": "Bearer x"},
        )
        assert raw.status_code == 400
        message = raw.json()["error"]["message"]
        assert "expected to match recording '0001-openai_responses'" in message
        assert "body differs" in message
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)
        with client:
            turns = _conversation(client)
        assert server.replay is not None
        assert server.replay.unserved() == []
        outcomes = [e.outcome for e in server.journal.entries()]
    assert outcomes == ["mismatch", "matched", "matched"]
    assert turns[1][-1]["response"]["output"][0]["content"][0]["text"] == "Cold."
    # byte-exact: fetch again in a new session and compare with the files
    with MockServer.from_recordings(directory) as server:
        for sse, turn_body in zip(files, _recorded_bodies(directory), strict=True):
            got = httpx.post(f"{server.openai_base_url}/responses", json=turn_body,
                             headers={"authorization": "Bearer x"})  # fmt: skip
            assert got.content == sse.read_bytes()
            assert got.headers["content-type"].startswith("text/event-stream")


def _recorded_bodies(directory: Path) -> list[dict]:
    from callgate.contracts import load_fixtures

    return [f.recording["request"]["body"] for f in load_fixtures(directory)]


@pytest.mark.parametrize("pacing", [False, True])
def test_order_free_matching_and_pacing_give_the_same_bytes(tmp_path: Path, pacing: bool) -> None:
    directory = _record(tmp_path)
    bodies = _recorded_bodies(directory)
    with MockServer.from_recordings(directory, match="body", pacing=pacing) as server:
        url = f"{server.openai_base_url}/responses"
        second = httpx.post(url, json=bodies[1], headers={"authorization": "Bearer x"})
        first = httpx.post(url, json=bodies[0], headers={"authorization": "Bearer x"})
        again = httpx.post(url, json=bodies[0], headers={"authorization": "Bearer x"})
    assert second.content == (directory / "0002-openai_responses.sse").read_bytes()
    assert first.content == (directory / "0001-openai_responses.sse").read_bytes()
    assert again.status_code == 400


def test_position_matching_refuses_a_request_past_the_last_recording(tmp_path: Path) -> None:
    directory = _record(tmp_path)
    bodies = _recorded_bodies(directory)
    with MockServer.from_recordings(directory) as server:
        url = f"{server.anthropic_base_url}/v1/messages"
        wrong = httpx.post(url, json=bodies[0], headers={"x-api-key": "k"})
        assert "it went to anthropic_messages" in wrong.json()["error"]["message"]
        assert wrong.json()["type"] == "error"  # the provider's own error shape
        url = f"{server.openai_base_url}/responses"
        for body in bodies:
            assert httpx.post(url, json=body).status_code == 200
        late = httpx.post(url, json=bodies[0])
    assert "already served" in late.json()["error"]["message"]


def test_from_recordings_refuses_a_folder_without_recordings(tmp_path: Path) -> None:
    from callgate import CallgateError

    with pytest.raises(CallgateError):
        MockServer.from_recordings(tmp_path)


@pytest.mark.parametrize(
    "chunks", [[["3", 1.0]], [[3]], [[-1, 0.5]], [[3, "soon"]], "all", [[1, 0.0]]]
)
def test_a_recording_with_bad_or_inconsistent_chunk_timing_is_a_contract_error(
    tmp_path: Path, chunks: object
) -> None:
    import json

    from callgate import ContractError
    from callgate.contracts import load_fixture

    directory = _record(tmp_path)
    meta_path = directory / "0001-openai_responses.json"
    meta = json.loads(meta_path.read_text())
    meta["recording"]["response"]["chunks"] = chunks
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ContractError, match="chunks"):
        load_fixture(meta_path)
    with pytest.raises(ContractError):
        MockServer.from_recordings(directory)


def test_a_generate_content_recording_replays_under_the_gemini_prefix_and_is_drift_checked(
    tmp_path: Path,
) -> None:
    from callgate.recording._drift import check_directory

    sse = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"Hi."}],"role":"model"},'
        b'"finishReason":"STOP","index":0}],"modelVersion":"m","responseId":"r1"}\r\n\r\n'
    )

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse, headers={"content-type": "text/event-stream"})

    recorder = Recorder(tmp_path)
    with httpx.Client(transport=recording_transport(httpx.MockTransport(handler), recorder)) as c:
        c.post(
            "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent"
            "?alt=sse&key=AIzaNOTKEPT",
            json={"contents": []},
        )
    (written,) = recorder.written
    assert written.name == "0001-gemini_generate_content.json"
    assert "AIzaNOTKEPT" not in written.read_text()
    report = check_directory(tmp_path)
    assert [f.protocol for f in report.files] == ["gemini_generate_content"]
    with MockServer.from_recordings(tmp_path) as server:
        wrong = httpx.post(f"{server.gemini_base_url}/v1beta/interactions", json={"contents": []})
        url = f"{server.gemini_base_url}/v1beta/models/m:streamGenerateContent?alt=sse"
        got = httpx.post(url, json={"contents": []})
    assert got.content == sse
    assert "went to gemini_interactions" in wrong.json()["error"]["message"]


def test_replay_refuses_an_oversized_body_with_413(tmp_path: Path) -> None:
    directory = _record(tmp_path)
    with MockServer.from_recordings(directory, max_body_bytes=1000) as server:
        got = httpx.post(f"{server.openai_base_url}/responses", content=b"{" + b" " * 5000 + b"}")
        assert got.status_code == 413
        assert [e.outcome for e in server.journal.entries()] == ["rejected"]
