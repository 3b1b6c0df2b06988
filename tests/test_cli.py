"""The `callgate` command: the demo, `serve` over a real socket, and `check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from callgate import demo as _demo
from callgate.cli import main
from callgate.mock import ScriptBuilder, call
from callgate.mock._render_turn import render


def test_demo_runs_every_scenario_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # five scripted loops + the WebSocket one + generateContent + Chat Completions
    assert out.count("gate released 2 call(s)") == 8
    assert out.count("final answer: It is sunny") == 8
    assert "socket: 2 frame(s) ['response.create'] on 1 connection" in out
    assert "continuation: full history, 5 messages replayed ['system', 'user'," in out
    assert "finishReason MAX_TOKENS: nothing is released" in out
    assert "gate refused: ProviderError" in out
    assert "held for recovery" in out
    assert "gate refused: TruncatedStreamError" in out
    assert "final answer (cited): No umbrella needed" in out  # the hosted web search loop
    assert "citation web_search_result_location -> https://louvre.example/hours" in out
    assert "demo passed: all 17 scenarios" in out


def test_demo_exits_nonzero_when_a_scenario_goes_wrong(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A tool that returns the wrong value makes the server's expect check fail.
    monkeypatch.setitem(_demo.TOOLS, "get_time", lambda tz: {"tz": tz, "time": "13:00"})
    assert main(["demo"]) == 1
    out = capsys.readouterr().out
    assert "demo FAILED" in out
    assert "get_time" in out


def _stream_file(tmp_path: Path, **respond: object) -> Path:
    script = ScriptBuilder().turn("anthropic_messages", **respond).build()
    rendered = render(
        script.conversations["default"][0], seed=0, conversation="default", turn_number=0,
        stream=True,
    )  # fmt: skip
    path = tmp_path / "capture.sse"
    path.write_bytes(rendered.sse)
    return path


def test_check_prints_released_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _stream_file(tmp_path, calls=[call("get_weather", city="Oslo")], chunking="char")
    assert main(["check", str(path), "--protocol", "anthropic_messages"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in out["released_calls"]] == ["get_weather"]
    assert out["released_calls"][0]["arguments"] == {"city": "Oslo"}


def test_check_refuses_a_truncated_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _stream_file(tmp_path, calls=[call("f", a=1)], chunking="char", disconnect_after=6)
    assert main(["check", str(path), "--protocol", "anthropic_messages"]) == 1
    assert "refused: TruncatedStreamError" in capsys.readouterr().out


def test_serve_prints_base_urls_and_answers_on_a_real_socket(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps({"turns": [{"protocol": "openai_responses", "respond": {"text": "pong"}}]})
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "callgate.cli", "serve", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.rsplit(" ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:")
        lines = [proc.stdout.readline() for _ in range(2)]
        assert lines[0].strip() == "OpenAI Responses"
        assert f"{url}/openai/v1 " in lines[1]
        resp = httpx.post(
            f"{url}/openai/v1/responses",
            json={"model": "m", "input": "ping"},
            headers={"authorization": "Bearer x"},
            timeout=10,
        )
        assert resp.status_code == 200
        assert resp.json()["output"][0]["content"][0]["text"] == "pong"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_serve_reports_an_invalid_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"turns": [{"protocol": "nope"}]}))
    assert main(["serve", "--script", str(script)]) == 2
    assert "bad.json:/turns/0/protocol" in capsys.readouterr().err
