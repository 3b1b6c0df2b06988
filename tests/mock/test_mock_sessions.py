"""Registered sessions: one server, each test id with a script of its own.

Registered over HTTP (``POST/DELETE /_callgate/sessions/{id}``, as a suite in another
language would) and in-process (``MockServer.register``/``drop``), driven with the
official OpenAI SDK (strict response validation) on a real socket.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from callgate import UsageError
from callgate.mock import TEST_ID_HEADER, MockServer, Script, ScriptBuilder, ScriptError


def _say(*texts: str, **top: Any) -> dict[str, Any]:
    turns = [{"protocol": "openai_responses", "respond": {"text": t}} for t in texts]
    return {"turns": turns, **top}


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(Script.from_dict(_say("from the server's script"))) as mock:
        yield mock


def _client(server: MockServer, test_id: str | None) -> openai.OpenAI:
    headers = {} if test_id is None else {TEST_ID_HEADER: test_id}
    return openai.OpenAI(
        base_url=server.openai_base_url,
        api_key="k",
        max_retries=0,
        default_headers=headers,
        _strict_response_validation=True,
    )


def _ask(server: MockServer, test_id: str | None, **kwargs: Any) -> str:
    with _client(server, test_id) as client:
        return client.responses.create(model="m", input="hi", **kwargs).output_text


def _post(server: MockServer, test_id: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{server.url}/_callgate/sessions/{test_id}", content=content)


def test_registered_sessions_each_serve_their_own_script(server: MockServer) -> None:
    first = _post(server, "suite-a", _say("a1", "a2"))
    assert first.status_code == 201
    assert first.json() == {
        "test_id": "suite-a",
        "registered": True,
        "done": False,
        "served": 0,
        "left": 2,
        "mismatches": 0,
        "conversations": {"default": {"served": 0, "left": 2, "done": False}},
        "verdicts": [],
    }
    assert _post(server, "suite-b", _say("b1")).status_code == 201
    assert _ask(server, "suite-a") == "a1"
    assert _ask(server, "suite-b") == "b1"
    assert _ask(server, "suite-a") == "a2"
    # Unregistered test ids (and no header at all) keep the server's own script.
    assert _ask(server, None) == "from the server's script"
    assert _ask(server, "anyone") == "from the server's script"
    assert {e.test_id for e in server.journal} == {"suite-a", "suite-b", "default", "anyone"}


def test_drop_answers_the_final_status_and_forgets_the_session(server: MockServer) -> None:
    assert _post(server, "t", _say("one", "two")).status_code == 201
    assert _ask(server, "t") == "one"
    dropped = httpx.delete(f"{server.url}/_callgate/sessions/t")
    assert dropped.status_code == 200
    final = dropped.json()
    assert (final["served"], final["left"], final["done"]) == (1, 1, False)
    assert server.journal.entries(test_id="t") == []
    # The id is an ordinary (unregistered) session again, over the server's script.
    assert _ask(server, "t") == "from the server's script"
    again = httpx.delete(f"{server.url}/_callgate/sessions/t")
    assert again.status_code == 404
    assert again.json()["error"]["message"] == "test id 't' is not registered"


def test_register_refuses_what_it_cannot_serve(server: MockServer) -> None:
    not_json = _post(server, "t", b"{turns:")
    assert not_json.status_code == 400
    assert "strict JSON" in not_json.json()["error"]["message"]
    bad = _post(server, "t", {"turns": [{"protocol": "nope"}]})
    assert bad.status_code == 400
    assert "/turns/0/protocol" in bad.json()["error"]["message"]
    switch = _post(server, "t", _say("x", validation={"no_such_check": False}))
    assert switch.status_code == 400
    assert "unknown validation check 'no_such_check'" in switch.json()["error"]["message"]
    assert _post(server, "t", _say("x")).status_code == 201
    twice = _post(server, "t", _say("y"))
    assert twice.status_code == 409
    assert twice.json()["error"]["message"] == "test id 't' is already registered"
    assert _ask(server, "t") == "x"  # the refused registrations changed nothing


def test_at_most_max_sessions_are_registered_and_none_is_evicted() -> None:
    script = Script.from_dict(_say("server"))
    with MockServer(script, max_sessions=2) as server:
        server.register("kept", Script.from_dict(_say("k1", "k2")))
        assert _ask(server, "kept") == "k1"
        for n in range(5):  # more unregistered ids than max_sessions: LRU eviction
            assert _ask(server, f"other-{n}") == "server"
        assert _ask(server, "kept") == "k2"  # the registered cursor survived
        server.register("second", script)
        full = _post(server, "third", _say("x"))
        assert full.status_code == 429
        assert "2 sessions are registered already" in full.json()["error"]["message"]


def test_stored_state_and_faults_stay_in_their_session(server: MockServer) -> None:
    server.register("a", Script.from_dict(_say("a1")))
    server.register("b", Script.from_dict(_say("b1", "b2")))
    with _client(server, "a") as client:
        stored = client.responses.create(model="m", input="hi")
    with _client(server, "b") as client, pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="m", input="hi", previous_response_id=stored.id)
    assert refused.value.code == "previous_response_not_found"
    armed = httpx.post(
        f"{server.url}/_callgate/faults",
        json={"fault": {"type": "http_error", "status": 503}},
        headers={TEST_ID_HEADER: "b"},
    )
    assert armed.status_code == 200
    with _client(server, "b") as client, pytest.raises(openai.InternalServerError):
        client.responses.create(model="m", input="hi")
    assert _ask(server, "b") == "b1"  # the fault fired once, in b only
    server.register("c", Script.from_dict(_say("c1")))
    assert _ask(server, "c") == "c1"


def test_validation_switches_are_the_sessions_own(server: MockServer) -> None:
    lenient = _say("accepted", validation={"openai_previous_response_found": False})
    server.register("lenient", Script.from_dict(lenient))
    server.register("strict", Script.from_dict(_say("never")))
    assert _ask(server, "lenient", previous_response_id="resp_unknown") == "accepted"
    with pytest.raises(openai.BadRequestError):
        _ask(server, "strict", previous_response_id="resp_unknown")


def test_a_default_session_takes_requests_without_a_test_id(server: MockServer) -> None:
    server.register("the-test", Script.from_dict(_say("mine")), default=True)
    assert _ask(server, None) == "mine"
    (entry,) = server.journal.entries()
    assert entry.test_id == "the-test"
    server.drop("the-test")
    assert _ask(server, None) == "from the server's script"


def test_reset_restarts_a_registered_session_and_keeps_it(server: MockServer) -> None:
    server.register("t", Script.from_dict(_say("first", "second")))
    assert _ask(server, "t") == "first"
    server.reset()
    assert _ask(server, "t") == "first"
    httpx.post(f"{server.url}/_callgate/reset?test_id=t")
    assert _ask(server, "t") == "first"
    assert server.status("t")["sessions"][0]["registered"] is True


def test_in_process_register_refuses_like_the_route(server: MockServer) -> None:
    builder = ScriptBuilder(seed=1).turn("openai_responses", text="x")
    server.register("t", builder.build())
    with pytest.raises(UsageError, match="already registered"):
        server.register("t", builder.build())
    with pytest.raises(ScriptError, match="unknown validation check"):
        server.register("u", Script.from_dict(_say("x", validation={"nope": True})))
    with pytest.raises(UsageError, match="not registered"):
        server.drop("u")


def test_test_ids_with_slashes_register_over_http(server: MockServer) -> None:
    test_id = "tests/test_x.py::test_y[1]"
    answer = _post(server, "tests/test_x.py::test_y%5B1%5D", _say("slashed"))
    assert answer.status_code == 201
    assert answer.json()["test_id"] == test_id
    assert _ask(server, test_id) == "slashed"
