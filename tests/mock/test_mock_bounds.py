"""Bounded bodies, bounded and resettable memory (journal caps, sessions, reset, paging)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from callgate.mock import TEST_ID_HEADER, Journal, MockServer, MockState, ScriptBuilder, create_app
from callgate.mock._journal import BODY_PREFIX

from .conftest import AUTH, PATHS


def _script(protocol: str = "openai_responses") -> Any:
    return ScriptBuilder(seed=1).turn(protocol, expect={"model": "m"}, text="hi").build()


def _post(server: MockServer, test_id: str | None = None, model: str = "m") -> httpx.Response:
    headers = dict(AUTH["openai_responses"])
    if test_id is not None:
        headers[TEST_ID_HEADER] = test_id
    return httpx.post(
        f"{server.url}{PATHS['openai_responses']}",
        json={"model": model, "input": "x"},
        headers=headers,
        timeout=10,
    )


# -- C1: request bodies are bounded --------------------------------------------------------


@pytest.mark.parametrize("protocol", sorted(PATHS))
def test_oversized_body_gets_the_providers_413_and_a_bounded_journal_entry(
    protocol: str,
) -> None:
    padding = "x" * 9000
    with MockServer(_script(protocol), max_body_bytes=8192) as server:
        response = httpx.post(
            f"{server.url}{PATHS[protocol]}",
            content=json.dumps({"model": "m", "input": padding}).encode(),
            headers={**AUTH[protocol], "content-type": "application/json"},
            timeout=10,
        )
        assert response.status_code == 413
        body = response.json()
        if protocol == "anthropic_messages":
            assert body["type"] == "error"
            assert body["error"]["type"] == "request_too_large"
        elif protocol == "gemini_interactions":  # no documented code for 413
            assert body["error"]["code"] == "invalid_request"
        elif protocol == "gemini_generate_content":
            assert body["error"]["code"] == 413
            assert body["error"]["status"] == "INVALID_ARGUMENT"
        else:
            assert body["error"]["type"] == "invalid_request_error"
        assert "8192" in json.dumps(body)
        (entry,) = server.journal.entries()
        assert entry.outcome == "rejected"
        assert entry.status == 413
        assert entry.body_size == len(padding) + len('{"model": "m", "input": ""}')
        if protocol != "gemini_generate_content":
            # A generateContent path names its model, so it is routed, not dispatched
            # straight: the app refuses the declared size before reading any of the body.
            assert isinstance(entry.body, str)
            assert len(entry.body) <= BODY_PREFIX
            assert entry.body.startswith('{"model": "m"')
        assert server.state.remaining() == {"default": 1}  # no turn consumed
        # The server still reads a well-sized body afterwards.
        small = httpx.post(
            f"{server.url}{PATHS[protocol]}", json={"model": "m"}, headers=AUTH[protocol]
        )
        assert small.status_code != 413
        assert server.journal.entries()[-1].body == {"model": "m"}


def _chunked_call(app: Any, chunks: int, size: int, headers: dict[str, str]) -> tuple[int, int]:
    """POST ``chunks`` body messages of ``size`` bytes; return (status, messages pulled)."""
    pulled = 0
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        more = pulled < chunks
        return {"type": "http.request", "body": b"x" * size, "more_body": more}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATHS["openai_responses"],
        "raw_path": PATHS["openai_responses"].encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    return status[0], pulled


def test_an_oversized_body_is_never_read_whole() -> None:
    # Chunked (no content-length): reading stops at the first chunk over the limit.
    app = create_app(_script(), max_body_bytes=4096)
    status, pulled = _chunked_call(app, 1000, 1024, AUTH["openai_responses"])
    assert status == 413
    assert pulled == 5
    (entry,) = app.state.callgate.journal.entries()
    assert entry.body_size == 5 * 1024  # what was read before refusing
    assert len(entry.body) <= BODY_PREFIX


def test_a_declared_oversized_body_is_refused_after_its_prefix() -> None:
    app = create_app(_script())  # the default limit: 32 MiB
    assert app.max_body_bytes == 32 * 1024 * 1024
    declared = {**AUTH["openai_responses"], "content-length": str(64 * 1024 * 1024)}
    status, pulled = _chunked_call(app, 100_000, 1024, declared)
    assert status == 413
    assert pulled * 1024 <= 2 * BODY_PREFIX
    (entry,) = app.state.callgate.journal.entries()
    assert entry.body_size == 64 * 1024 * 1024


# -- C2: bounded, resettable memory --------------------------------------------------------


def _begin(journal: Journal, test_id: str) -> None:
    journal.begin(
        test_id=test_id, conversation=None, protocol=None, method="GET", path="/",
        query="", headers={}, body=None,
    )  # fmt: skip


def test_journal_caps_drop_the_oldest_entries_and_count_them() -> None:
    journal = Journal(max_entries=5, max_per_test=3)
    for test_id in ["a", "a", "a", "a", "b", "b", "c", "c"]:
        _begin(journal, test_id)
    # "a" kept its 3 newest (seq 1-3) until the global cap of 5 dropped the oldest.
    assert [(e.seq, e.test_id) for e in journal] == [
        (3, "a"),
        (4, "b"),
        (5, "b"),
        (6, "c"),
        (7, "c"),
    ]
    assert journal.dropped() == 3
    assert journal.dropped("a") == 3
    assert journal.dropped("b") == 0
    assert [e.seq for e in journal.page(after=4, limit=2)] == [5, 6]
    assert [e.seq for e in journal.page(test_id="c", after=6)] == [7]
    journal.clear("b")
    assert [e.test_id for e in journal] == ["a", "c", "c"]
    _begin(journal, "d")
    assert journal.entries()[-1].seq == 8  # seq numbers never repeat
    journal.clear()
    assert (len(journal), journal.dropped()) == (0, 0)


def test_journal_read_over_http_is_paged_and_counts_drops() -> None:
    with MockServer(_script(), journal_max_entries=4) as server:
        for n in range(6):
            _post(server, test_id=f"t{n}")
        url = f"{server.url}/_callgate/journal"
        everything = httpx.get(url, timeout=10)
        assert [e["seq"] for e in everything.json()] == [2, 3, 4, 5]
        assert everything.headers["x-callgate-journal-dropped"] == "2"
        first = httpx.get(url, params={"limit": 2}, timeout=10).json()
        assert [e["seq"] for e in first] == [2, 3]
        after = str(first[-1]["seq"])
        rest = httpx.get(url, params={"limit": 10, "after": after}, timeout=10).json()
        assert [e["seq"] for e in rest] == [4, 5]
        assert httpx.get(url, params={"limit": "x"}, timeout=10).status_code == 400


def test_reset_forgets_one_test_id_or_everything() -> None:
    with MockServer(_script()) as server:
        assert _post(server, test_id="a").status_code == 200
        assert _post(server, test_id="b").status_code == 200
        assert _post(server, test_id="b").status_code == 400  # b is exhausted
        reset = f"{server.url}/_callgate/reset"
        # One test id, by header ...
        assert httpx.post(reset, headers={TEST_ID_HEADER: "b"}, timeout=10).json() == {"reset": "b"}
        assert server.state.remaining("a") == {"default": 0}
        assert server.state.remaining("b") == {"default": 1}
        assert server.mismatches == []
        assert {e.test_id for e in server.journal} == {"a", "b"}  # a's, and the reset call
        assert _post(server, test_id="b").status_code == 200  # b starts over
        # ... or by query parameter; then everything, from Python and over HTTP.
        assert httpx.post(reset, params={"test_id": "a"}, timeout=10).json() == {"reset": "a"}
        assert server.state.remaining("a") == {"default": 1}
        server.reset()
        assert len(server.journal) == 0
        assert server.state.served_turns() == []
        assert _post(server, test_id="b").status_code == 200
        assert httpx.post(reset, timeout=10).json() == {"reset": "all"}
        assert server.state.remaining("b") == {"default": 1}


def test_state_keeps_no_per_request_list_and_bounds_its_sessions() -> None:
    state = MockState(_script(), max_sessions=3)
    assert not hasattr(state, "served")
    app = create_app(_script(), state=state)
    from .conftest import asgi_call

    for n in range(10):
        headers = {**AUTH["openai_responses"], TEST_ID_HEADER: f"t{n}"}
        status, _, _ = asgi_call(app, PATHS["openai_responses"], {"model": "m"}, headers)
        assert status == 200
    served = state.served_turns()
    assert [s.test_id for s in served] == ["t7", "t8", "t9"]  # the 3 newest sessions
    assert state.served_turns("t9")[0].rendered.body is not None
    for _ in range(1500):
        state.record_mismatch(state.session("t9"), "default", "openai_responses", None, "x")
    assert len(state.mismatches) == 1000


def test_a_long_journal_read_is_one_json_list_sent_in_slices() -> None:
    with MockServer(_script()) as server:
        for n in range(450):
            _begin(server.journal, f"t{n % 7}")
        response = httpx.get(f"{server.url}/_callgate/journal", timeout=30)
        assert response.headers.get("transfer-encoding") == "chunked"  # not one big body
        assert [e["seq"] for e in response.json()] == list(range(450))
        only = httpx.get(f"{server.url}/_callgate/journal", params={"test_id": "t3"}, timeout=30)
        assert [e["seq"] for e in only.json()] == list(range(3, 450, 7))


def test_a_declared_oversized_body_on_a_control_route_is_a_413() -> None:
    app = create_app(_script(), max_body_bytes=100)
    from .conftest import asgi_call

    scope_path = "/_callgate/faults"
    status, _, bodies = asgi_call(app, scope_path, b"x" * 10, {"content-length": "5000"})
    assert status == 413
    assert json.loads(b"".join(bodies))["error"]["code"] == 413
    (entry,) = app.state.callgate.journal.entries()
    assert (entry.body_size, entry.outcome) == (5000, "rejected")
