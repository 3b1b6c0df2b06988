"""Stopping the server: in-flight paced streams do not keep it (or its thread) alive."""

from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder

from .conftest import AUTH

_PACED = {"first_byte_ms": 0, "event_delay_ms": 60_000, "flush": "per_event"}


def _paced_script() -> object:
    return (
        ScriptBuilder(seed=1)
        .turn("openai_responses", text="a long answer", chunking="char", pacing=_PACED)
        .build()
    )


def test_stop_returns_and_leaves_no_thread_with_a_paced_stream_in_flight() -> None:
    server = MockServer(_paced_script()).start()  # type: ignore[arg-type]
    server_thread = server._thread
    assert server_thread is not None
    first_bytes = threading.Event()
    outcome: list[object] = []

    def client() -> None:
        body = {"model": "m", "input": "x", "stream": True}
        try:
            with httpx.stream(
                "POST",
                f"{server.openai_base_url}/responses",
                json=body,
                headers=AUTH["openai_responses"],
                timeout=30,
            ) as response:
                for chunk in response.iter_raw():
                    if chunk:
                        first_bytes.set()
            outcome.append("ended")
        except httpx.HTTPError as exc:  # the server went away mid-stream
            outcome.append(exc)
        finally:
            first_bytes.set()

    reader = threading.Thread(target=client, name="paced-client")
    reader.start()
    assert first_bytes.wait(timeout=10)
    server.stop()
    assert not server_thread.is_alive()
    reader.join(timeout=5)
    assert not reader.is_alive()
    assert outcome  # the client saw the stream end (cut), it was not left hanging
    assert not [t for t in threading.enumerate() if t.name == "callgate-mock"]
    (entry,) = server.journal.entries()
    assert entry.outcome == "matched"
    assert entry.response.startswith("event: response.created")  # what was sent, journaled


def test_stop_closes_an_idle_keep_alive_connection_and_the_port() -> None:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    server = MockServer(script).start()
    host, port = server.url.removeprefix("http://").split(":")
    body = json.dumps({"model": "m", "input": "x"}).encode()
    request = (
        f"POST /openai/v1/responses HTTP/1.1\r\nhost: {host}\r\n"
        f"authorization: Bearer k\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((host, int(port)), timeout=10) as kept:
        kept.sendall(request)
        answer = b""
        while b'"status":"completed"' not in answer:
            answer += kept.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200")
        server_thread = server._thread
        server.stop()  # the connection is idle and kept alive
        assert server_thread is not None
        assert not server_thread.is_alive()
        assert kept.recv(1) == b""  # closed by the server
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=10).close()
    (entry,) = server.journal.entries()
    assert entry.outcome == "matched"


def test_a_stopped_server_starts_and_serves_again() -> None:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    server = MockServer(script)
    for _ in range(2):
        with server:
            answer = httpx.post(
                f"{server.openai_base_url}/responses",
                json={"model": "m", "input": "x"},
                headers=AUTH["openai_responses"],
                timeout=10,
            )
            assert answer.status_code == 200
        server.reset()
