"""``GET /_callgate/status``: per session, turns served and left, mismatches, done or not,
read as JSON over a real socket the way a suite in any language would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from callgate.mock import CONVERSATION_HEADER, TEST_ID_HEADER, MockServer, Script

from .conftest import AUTH

SCRIPT = {
    "conversations": {
        "main": [
            {"protocol": "openai_responses", "expect": {"model": "m"}, "respond": {"text": "1"}},
            {"protocol": "openai_responses", "respond": {"text": "2"}},
        ],
        "side": [{"protocol": "anthropic_messages", "respond": {"text": "s"}}],
    }
}


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(Script.from_dict(SCRIPT)) as mock:
        yield mock


def _status(server: MockServer, test_id: str | None = None) -> dict[str, Any]:
    params = {} if test_id is None else {"test_id": test_id}
    answer = httpx.get(f"{server.url}/_callgate/status", params=params)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    return body


def _openai(server: MockServer, test_id: str, model: str = "m") -> int:
    headers = {**AUTH["openai_responses"], TEST_ID_HEADER: test_id, CONVERSATION_HEADER: "main"}
    body = {"model": model, "input": "x"}
    return httpx.post(f"{server.openai_base_url}/responses", json=body, headers=headers).status_code


def _anthropic(server: MockServer, test_id: str) -> int:
    headers = {**AUTH["anthropic_messages"], TEST_ID_HEADER: test_id, CONVERSATION_HEADER: "side"}
    body = {"model": "c", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}
    url = f"{server.anthropic_base_url}/v1/messages"
    return httpx.post(url, json=body, headers=headers).status_code


def test_a_fresh_server_reports_its_default_session_not_done(server: MockServer) -> None:
    assert _status(server) == {
        "done": False,
        "sessions": [
            {
                "test_id": "default",
                "registered": False,
                "done": False,
                "served": 0,
                "left": 3,
                "mismatches": 0,
                "conversations": {
                    "main": {"served": 0, "left": 2, "done": False},
                    "side": {"served": 0, "left": 1, "done": False},
                },
                "verdicts": [],
            }
        ],
    }


def test_turns_served_and_left_per_session_until_done(server: MockServer) -> None:
    assert _openai(server, "t") == 200
    (t,) = _status(server, "t")["sessions"]
    assert (t["served"], t["left"], t["done"]) == (1, 2, False)
    assert t["conversations"]["main"] == {"served": 1, "left": 1, "done": False}
    assert _openai(server, "t") == 200
    assert _anthropic(server, "t") == 200
    (t,) = _status(server, "t")["sessions"]
    assert (t["served"], t["left"], t["done"]) == (3, 0, True)
    whole = _status(server)
    assert [s["test_id"] for s in whole["sessions"]] == ["t", "default"]
    assert whole["done"] is False  # "default" has not been served
    assert _status(server, "never-seen")["sessions"][0]["left"] == 3


def test_a_mismatch_keeps_a_session_from_being_done(server: MockServer) -> None:
    assert _openai(server, "t", model="other") == 400
    for _ in range(2):
        assert _openai(server, "t") == 200
    assert _anthropic(server, "t") == 200
    (t,) = _status(server, "t")["sessions"]
    assert (t["left"], t["mismatches"], t["done"]) == (0, 1, False)
    httpx.post(f"{server.url}/_callgate/reset?test_id=t")
    (t,) = _status(server, "t")["sessions"]
    assert (t["left"], t["mismatches"]) == (3, 0)


def test_registered_sessions_are_listed_with_their_own_script(server: MockServer) -> None:
    own = {"turns": [{"protocol": "openai_responses", "respond": {"text": "only"}}]}
    server.register("suite", Script.from_dict(own))
    (suite,) = _status(server, "suite")["sessions"]
    assert suite["registered"] is True
    assert suite["conversations"] == {"default": {"served": 0, "left": 1, "done": False}}
    headers = {**AUTH["openai_responses"], TEST_ID_HEADER: "suite"}
    answer = httpx.post(
        f"{server.openai_base_url}/responses", json={"model": "m", "input": "x"}, headers=headers
    )
    assert answer.status_code == 200
    assert server.status("suite")["done"] is True
    assert [s["test_id"] for s in _status(server)["sessions"]] == ["suite", "default"]
