"""The journal and per-test-id isolation."""

from __future__ import annotations

import httpx
import pytest

from callgate.mock import TEST_ID_HEADER, MockServer, ScriptBuilder


@pytest.fixture
def server() -> MockServer:
    script = (
        ScriptBuilder(seed=1).turn("openai_responses", expect={"model": "m"}, text="hi").build()
    )
    with MockServer(script) as srv:
        yield srv


def _post(server: MockServer, model: str, test_id: str | None = None) -> httpx.Response:
    headers = {"authorization": "Bearer sk-secret-value"}
    if test_id is not None:
        headers[TEST_ID_HEADER] = test_id
    return httpx.post(
        f"{server.openai_base_url}/responses?key=also-secret",
        json={"model": model, "input": "x"},
        headers=headers,
        timeout=10,
    )


def test_every_request_is_journaled_with_credentials_redacted(server: MockServer) -> None:
    assert _post(server, "wrong").status_code == 400
    assert _post(server, "m").status_code == 200
    first, second = server.journal.entries()
    assert first.outcome == "mismatch"
    assert first.status == 400
    assert "wrong" in first.problems[0]
    assert second.outcome == "matched"
    assert second.location == "/conversations/default/0"
    assert second.body == {"model": "m", "input": "x"}
    assert second.response["output"][0]["content"][0]["text"] == "hi"
    for entry in (first, second):
        assert entry.headers["authorization"] == "<redacted>"
        assert "sk-secret" not in repr(entry.to_dict())
        assert entry.query == "key=<redacted>"
        assert entry.duration_ms is not None


def test_journal_is_readable_over_http(server: MockServer) -> None:
    _post(server, "m", test_id="t1")
    _post(server, "m", test_id="t2")
    everything = httpx.get(f"{server.url}/_callgate/journal", timeout=10).json()
    assert [e["test_id"] for e in everything] == ["t1", "t2"]
    only = httpx.get(f"{server.url}/_callgate/journal?test_id=t2", timeout=10).json()
    assert len(only) == 1
    assert only[0]["outcome"] == "matched"
    assert only[0]["headers"]["authorization"] == "<redacted>"


def test_each_test_id_gets_its_own_cursor(server: MockServer) -> None:
    assert _post(server, "m", test_id="a").status_code == 200
    assert _post(server, "m", test_id="b").status_code == 200  # b's turn 0 is still unread
    assert _post(server, "m", test_id="a").status_code == 400  # a is exhausted
    assert server.state.remaining("a") == {"default": 0}
    assert server.state.remaining("b") == {"default": 0}
    assert server.state.remaining("c") == {"default": 1}
    assert [m.test_id for m in server.mismatches] == ["a"]


def test_journal_helpers(server: MockServer) -> None:
    _post(server, "m")
    server.journal.assert_requests(1, protocol="openai_responses", outcome="matched")
    with pytest.raises(AssertionError):
        server.journal.assert_requests(2, protocol="openai_responses")
    assert server.journal.last(outcome="matched").status == 200
    with pytest.raises(LookupError):
        server.journal.last(outcome="fault")
