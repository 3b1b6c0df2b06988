"""Who may talk to the mock: loopback Host names only, one test id, credentials redacted."""

from __future__ import annotations

import socket

import httpx
import pytest

from callgate.mock import TEST_ID_HEADER, Journal, MockServer, ScriptBuilder
from callgate.mock._app import host_is_loopback

from .conftest import AUTH, PATHS


@pytest.fixture(scope="module")
def server() -> MockServer:
    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    with MockServer(script) as srv:
        yield srv


def _raw(server: MockServer, request: bytes) -> bytes:
    """Send ``request`` as is (httpx would fix up the Host header) and read the answer."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


# -- C10: DNS-rebinding protection ----------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "10.0.0.1", "localhost.evil"])
def test_a_foreign_host_header_is_refused_with_403(server: MockServer, host: str) -> None:
    request = (
        f"GET /_callgate/journal HTTP/1.1\r\nHost: {host}\r\n"
        f"{TEST_ID_HEADER}: rebinding {host}\r\nConnection: close\r\n\r\n"
    ).encode()
    answer = _raw(server, request)
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert b'"callgate_mock_error"' in answer
    assert b"loopback Host" in answer
    (entry,) = server.journal.entries(test_id=f"rebinding {host}")
    assert (entry.status, entry.outcome) == (403, "rejected")
    assert b"rebinding" not in answer.partition(b"\r\n\r\n")[2]  # no journal was sent


@pytest.mark.parametrize(
    "host", ["localhost", "LOCALHOST:1", "127.0.0.1", "127.9.8.7:80", "[::1]:8080", "localhost."]
)
def test_loopback_host_names_are_served(server: MockServer, host: str) -> None:
    request = (
        f"GET /_callgate/journal?limit=0 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    assert _raw(server, request.encode()).startswith(b"HTTP/1.1 200 ")


def test_a_provider_route_refuses_a_foreign_host_in_the_providers_shape(
    server: MockServer,
) -> None:
    response = httpx.post(
        f"{server.url}{PATHS['anthropic_messages']}",
        json={"model": "m"},
        headers={**AUTH["anthropic_messages"], "host": "attacker.example"},
        timeout=10,
    )
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "permission_error"


def test_binding_a_non_loopback_host_warns_and_still_checks_host() -> None:
    assert host_is_loopback("127.0.0.1")
    assert host_is_loopback("::1")
    assert not host_is_loopback("0.0.0.0")
    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    with pytest.warns(UserWarning, match="not a loopback address"):
        server = MockServer(script, host="0.0.0.0", allowed_hosts=["mock.internal"]).start()
    try:
        port = server.url.rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}/_callgate/journal"
        assert httpx.get(url, timeout=10).status_code == 200
        for allowed in ("0.0.0.0", "mock.internal:8080"):
            assert httpx.get(url, headers={"host": allowed}, timeout=10).status_code == 200
        assert httpx.get(url, headers={"host": "other.example"}, timeout=10).status_code == 403
    finally:
        server.stop()


# -- C8: redaction and one test id per request ---------------------------------------------


def test_percent_encoded_key_proxy_authorization_and_cookie_are_redacted() -> None:
    journal = Journal()
    entry = journal.begin(
        test_id="t", conversation=None, protocol=None, method="GET", path="/",
        query="%6Bey=s1&k%65y=s2&KEY=s3&key=s4&monkey=kept&keys=kept",
        headers={"Proxy-Authorization": "Basic s5", "cookie": "sid=s6", "accept": "kept"},
        body=None,
    )  # fmt: skip
    assert entry.query == (
        "%6Bey=<redacted>&k%65y=<redacted>&KEY=<redacted>&key=<redacted>&monkey=kept&keys=kept"
    )
    assert entry.headers == {
        "Proxy-Authorization": "<redacted>",
        "cookie": "<redacted>",
        "accept": "kept",
    }


def test_percent_encoded_key_is_redacted_on_the_wire(server: MockServer) -> None:
    request = (
        "POST /gemini/v1/interactions?%6Bey=secret-value HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"{TEST_ID_HEADER}: encoded-key\r\ncontent-length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    _raw(server, request.encode())
    (entry,) = server.journal.entries(test_id="encoded-key")
    assert entry.query == "%6Bey=<redacted>"
    assert "secret-value" not in repr(entry.to_dict())


def test_two_test_id_headers_are_a_400_not_two_sessions(server: MockServer) -> None:
    before = server.state.remaining("one"), server.state.remaining("two")
    response = httpx.post(
        f"{server.url}{PATHS['openai_responses']}",
        json={"model": "m", "input": "x"},
        headers=[
            ("authorization", "Bearer t"),
            (TEST_ID_HEADER, "one"),
            (TEST_ID_HEADER, "two"),
        ],
        timeout=10,
    )
    assert response.status_code == 400
    assert TEST_ID_HEADER in response.json()["error"]["message"]
    assert (server.state.remaining("one"), server.state.remaining("two")) == before
    (entry,) = server.journal.entries(test_id="one, two")
    assert (entry.status, entry.outcome) == (400, "rejected")
