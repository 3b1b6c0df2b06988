"""``callgate record`` and ``callgate serve --recordings`` as the processes users run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from callgate.mock import MockServer, ScriptBuilder

SRC = str(Path(__file__).resolve().parents[2] / "src")
BODY = {"model": "m", "input": "hi", "stream": True}


@contextmanager
def _command(*args: str) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-m", "callgate.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "http://" in first, first + (proc.stderr.read() if proc.stderr else "")
        yield first.split("http://", 1)[1].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_record_then_serve_recordings_as_commands(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    script = ScriptBuilder(seed=2).turn("openai_responses", text="Hello.").build()
    with MockServer(script) as upstream:
        live = httpx.post(f"{upstream.openai_base_url}/responses", json=BODY,
                          headers={"authorization": "Bearer x"})  # fmt: skip
        upstream.reset()
        record = ("record", "--upstream", upstream.url, "--port", "0", "--out", str(out))
        with _command(*record) as at:
            headers = {"authorization": "Bearer sk-not-kept"}
            url = f"http://{at}/openai/v1/responses"
            proxied = httpx.post(url, json=BODY, headers=headers, timeout=30)
    assert proxied.content == live.content
    (sse,) = out.glob("*.sse")
    assert sse.read_bytes() == live.content
    assert b"sk-not-kept" not in b"".join(p.read_bytes() for p in out.iterdir())
    with _command("serve", "--recordings", str(out), "--port", "0") as at:
        replayed = httpx.post(f"http://{at}/openai/v1/responses", json=BODY, timeout=30)
        journal = httpx.get(f"http://{at}/_callgate/journal", timeout=30).json()
    assert replayed.content == live.content
    assert [e["outcome"] for e in journal] == ["matched"]
