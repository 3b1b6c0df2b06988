"""The mock's own HTTP/1.1 connection (``mock._http1``), on raw sockets: what HTTP clients
other than the SDKs' may send (pipelining, chunked and 100-continue bodies, HTTP/1.0,
garbage), and the shape of what it answers (one response per request, in order, the head
of a held stream before any body)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from callgate import openai_responses
from callgate.mock import MockServer, ScriptBuilder
from callgate.mock._http1 import PROTOCOL, Http1
from callgate.mock._http1_exchange import header_bytes

pytestmark = pytest.mark.skipif(PROTOCOL is not Http1, reason="needs httptools")

CALLS = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
BODY = json.dumps({"model": "m", "stream": True, "input": "hi"}).encode()


def _script(turns: int = 1, **respond: Any) -> Any:
    builder = ScriptBuilder(seed=3)
    for _ in range(turns):
        builder.turn("openai_responses", calls=list(CALLS), **respond)
    return builder.build()


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(_script(turns=2)) as mock:
        yield mock


def _request(test_id: str = "t", body: bytes = BODY, extra: str = "") -> bytes:
    head = (
        "POST /openai/v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        "authorization: Bearer k\r\ncontent-type: application/json\r\n"
        f"x-callgate-test-id: {test_id}\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


def _connect(server: MockServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


class _Reader:
    """Reads HTTP/1.1 responses off a socket (content-length or chunked bodies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        self.buf += data
        return bool(data)

    def head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                raise EOFError("connection closed before a response head")
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.lower()] = value.strip()
        return int(status_line.split()[1]), headers

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise EOFError("connection closed inside a body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise EOFError("connection closed inside a chunk size")
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers = self.head()
        if "content-length" in headers:
            return status, headers, self._take(int(headers["content-length"]))
        body = b""
        while size := int(self._line(), 16):
            body += self._take(size)
            self._take(2)
        self._take(2)
        return status, headers, body

    def closed(self) -> bool:
        return not self.buf and not self._fill()


def _calls(body: bytes) -> list[str]:
    return [c.name for c in openai_responses.parse_stream(body).calls]


def test_pipelined_requests_are_answered_in_order(server: MockServer) -> None:
    with _connect(server) as sock:
        sock.sendall(_request() + _request())  # one write: the second waits for the first
        reader = _Reader(sock)
        first, second = reader.response(), reader.response()
    assert [first[0], second[0]] == [200, 200]
    assert _calls(first[2]) == _calls(second[2]) == ["get_weather"]
    entries = server.journal.requests(test_id="t")
    assert [(e.status, e.outcome, e.location) for e in entries] == [
        (200, "matched", "/conversations/default/0"),
        (200, "matched", "/conversations/default/1"),
    ]


def test_a_keep_alive_connection_serves_one_request_after_another(server: MockServer) -> None:
    with _connect(server) as sock:
        reader = _Reader(sock)
        sock.sendall(_request())
        assert reader.response()[0] == 200
        sock.sendall(_request())
        assert reader.response()[0] == 200
    assert server.state.remaining("t") == {"default": 0}


def test_a_chunked_request_body_is_read_whole(server: MockServer) -> None:
    chunks = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in (BODY[:7], BODY[7:])) + b"0\r\n\r\n"
    head = _request(body=b"").replace(b"content-length: 0\r\n", b"transfer-encoding: chunked\r\n")
    with _connect(server) as sock:
        sock.sendall(head)
        sock.sendall(chunks)
        status, _, body = _Reader(sock).response()
    assert status == 200
    assert _calls(body) == ["get_weather"]
    assert server.journal.last(test_id="t").body_size == len(BODY)


def test_a_body_larger_than_the_read_buffer_reaches_the_app_whole(server: MockServer) -> None:
    body = json.dumps({"model": "m", "stream": True, "input": "x" * 300_000}).encode()
    with _connect(server) as sock:
        sock.sendall(_request(body=body) + _request())  # the second waits behind the first
        reader = _Reader(sock)
        first, second = reader.response(), reader.response()
    assert [first[0], second[0]] == [200, 200]
    assert [e.body_size for e in server.journal.requests(test_id="t")] == [len(body), len(BODY)]


def test_expect_100_continue_gets_its_interim_response_before_the_body(
    server: MockServer,
) -> None:
    with _connect(server) as sock:
        reader = _Reader(sock)
        request = _request(extra="expect: 100-continue\r\n")
        head, body = request.split(b"\r\n\r\n", 1)
        sock.sendall(head + b"\r\n\r\n")
        assert reader.head() == (100, {})
        sock.sendall(body)
        status, _, streamed = reader.response()
    assert status == 200
    assert _calls(streamed) == ["get_weather"]


def test_an_http_1_0_client_gets_its_answer_and_the_connection_closed(
    server: MockServer,
) -> None:
    with _connect(server) as sock:
        sock.sendall(_request().replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        reader = _Reader(sock)
        status, headers, body = reader.response()
        assert reader.closed()
    assert status == 200
    assert "chunked" not in headers.get("transfer-encoding", "")
    assert _calls(body) == ["get_weather"]


def test_garbage_gets_400_and_a_closed_connection(server: MockServer) -> None:
    with _connect(server) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        reader = _Reader(sock)
        status, headers, body = reader.response()
        assert reader.closed()
    assert (status, headers["connection"]) == (400, "close")
    assert body == b"Invalid HTTP request received."


def test_a_held_stream_shows_its_status_before_any_event() -> None:
    script = _script(fault={"type": "never_end", "after": 0})
    with MockServer(script) as mock, _connect(mock) as sock:
        sock.sendall(_request())
        status, headers = _Reader(sock).head()  # no event will ever follow
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"


def test_a_paced_stream_leaves_one_chunk_per_event() -> None:
    script = _script(pacing={"flush": "per_event"})
    with MockServer(script) as mock, _connect(mock) as sock:
        sock.sendall(_request())
        reader = _Reader(sock)
        reader.head()
        sizes = []
        while size := int(reader._line(), 16):
            frame = reader._take(size)
            reader._take(2)
            sizes.append(frame.count(b"\n\n"))
    assert len(sizes) > 3
    assert set(sizes) == {1}  # every chunk is exactly one SSE frame


@pytest.mark.parametrize(
    "headers",
    [
        [(b"x-ok", b"1"), (b"x-bad", b"a\r\nset-cookie: x=1")],
        [(b"bad name", b"1")],
        [(b"", b"1")],
    ],
)
def test_a_response_header_that_could_split_the_head_is_refused(
    headers: list[tuple[bytes, bytes]],
) -> None:
    with pytest.raises(RuntimeError, match="invalid HTTP response header"):
        header_bytes(headers)
