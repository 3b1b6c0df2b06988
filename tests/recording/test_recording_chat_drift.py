"""``callgate check --drift`` on Chat Completions recordings: the chunks, choices, deltas,
tool calls and finish reasons are compared with both openai generations' ``types/chat``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from callgate.cli import main
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport
from callgate.recording._drift import check_directory

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def _record(tmp_path: Path, *, stream: bool) -> Path:
    script = ScriptBuilder(seed=5).turn(
        "openai_chat_completions", calls=[call("get_weather", city="Rome")]
    )
    recorder = Recorder(tmp_path)
    with MockServer(script.build()) as upstream:
        transport = recording_transport(httpx.HTTPTransport(), recorder)
        with httpx.Client(transport=transport) as client:
            client.post(
                f"{upstream.openai_base_url}/chat/completions",
                headers={"authorization": "Bearer x"},
                json={"model": "m", "stream": stream, "tools": TOOLS,
                      "messages": [{"role": "user", "content": "weather?"}]},
            )  # fmt: skip
    (written,) = recorder.written
    return written.with_suffix(".sse")


def _rewrite(sse: Path, old: bytes, new: bytes) -> None:
    data = sse.read_bytes()
    assert old in data
    data = data.replace(old, new, 1)
    sse.write_bytes(data)
    meta_path = sse.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    if meta["recording"]["response"].get("chunks"):
        meta["recording"]["response"]["chunks"] = [[len(data), 1.0]]  # keep sizes honest
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "body"])
def test_a_clean_chat_recording_has_no_sdk_findings(tmp_path: Path, stream: bool) -> None:
    _record(tmp_path, stream=stream)
    (drift,) = check_directory(tmp_path).files
    assert drift.protocol == "openai_chat_completions"
    assert not drift.affects_gate
    assert all(v.startswith("accepted (1 call") for v in drift.verdicts.values())
    assert drift.findings == {revision: [] for revision in drift.verdicts}


def test_a_field_the_sdk_does_not_declare_is_reported_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sse = _record(tmp_path, stream=True)
    head = b'"delta":{"role":"assistant"'
    _rewrite(sse, head, b'"delta":{"reasoning_content":"hm","role":"assistant"')
    assert main(["check", "--drift", str(tmp_path)]) == 0  # the parser accepts the turn
    out = capsys.readouterr().out
    assert "'ChoiceDelta' has fields the SDK does not declare: reasoning_content" in out
    assert "the mock's 'ChoiceDelta' lacks reasoning_content" in out


def test_a_new_finish_reason_is_reported_and_affects_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sse = _record(tmp_path, stream=True)
    _rewrite(sse, b'"finish_reason":"tool_calls"', b'"finish_reason":"tool_use"')
    assert main(["check", "--drift", str(tmp_path), "--no-mock"]) == 1
    out = capsys.readouterr().out
    assert "DRIFT" in out
    assert "new chat finish reasons value 'tool_use'" in out


def test_a_new_tool_call_type_in_a_body_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sse = _record(tmp_path, stream=False)
    _rewrite(sse, b'"type":"function"', b'"type":"hosted_function"')
    main(["check", "--drift", str(tmp_path), "--no-mock"])
    out = capsys.readouterr().out
    assert "new chat message tool call type 'hosted_function'" in out
    required = "'ChatCompletion' misses required"
    assert required not in out
