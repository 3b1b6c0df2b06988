"""Verdicts on every protocol: a scripted client that commits one gets exactly it, with its
evidence; the same client done right gets none (docs/verdicts.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from callgate.mock import MockServer, Script
from callgate.mock._verdicts._catalogue import NO_BACKOFF_S

from .verdict_clients import PROTOCOLS, STATEFUL, Client, answer, call_spec, first, script


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(Script(conversations={})) as mock:
        yield mock


_count = iter(range(1_000_000))


def _client(server: MockServer, protocol: str, the_script: Script) -> Client:
    test_id = f"verdicts-{next(_count)}"
    server.register(test_id, the_script)
    return Client(server, protocol, test_id)


def _cut_then_ok(protocol: str, fault: dict[str, Any]) -> Script:
    """A turn with one call, ``fault`` on its stream, then a text turn."""
    return script({"calls": [call_spec("c1")], "fault": fault}, {"text": "ok"}, protocol=protocol)


def _previous(client: Client) -> str | None:
    return client.turn_id() if client.protocol in STATEFUL else None


# -- a result for a call the gate withheld ------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_result_for_a_call_of_a_cut_turn_is_executed_unreleased_call(
    server: MockServer, protocol: str
) -> None:
    cut = {"type": "disconnect", "before_terminal": True}
    client = _client(server, protocol, _cut_then_ok(protocol, cut))
    assert client.post(first(protocol), stream=True).status_code == 200
    previous = _previous(client)
    assert client.post(answer(protocol, ["c1"], previous=previous)).status_code == 200
    (verdict,) = client.verdicts()
    assert verdict["id"] == "executed_unreleased_call"
    assert verdict["severity"] == "error"
    assert verdict["evidence"]["call_id"] == "c1"
    assert verdict["evidence"]["fault"] == cut
    assert verdict["evidence"]["served_by"] < verdict["seq"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_result_for_a_call_of_an_error_event_turn_is_executed_unreleased_call(
    server: MockServer, protocol: str
) -> None:
    fault = {"type": "error_event", "before_terminal": True}
    client = _client(server, protocol, _cut_then_ok(protocol, fault))
    client.post(first(protocol), stream=True)
    client.post(answer(protocol, ["c1"], previous=_previous(client)))
    assert client.ids() == ["executed_unreleased_call"]
    assert client.verdicts()[0]["evidence"]["fault"]["type"] == "error_event"


@pytest.mark.parametrize("protocol", [p for p in PROTOCOLS if p != "gemini_generate_content"])
def test_a_result_for_a_call_whose_arguments_were_cut_is_executed_partial_arguments(
    server: MockServer, protocol: str
) -> None:
    fault = {"type": "truncate", "call": 0, "keep": 5}
    client = _client(server, protocol, _cut_then_ok(protocol, fault))
    client.post(first(protocol), stream=True)
    client.post(answer(protocol, ["c1"], previous=_previous(client)))
    (verdict,) = client.verdicts()
    assert verdict["id"] == "executed_partial_arguments"
    assert verdict["evidence"]["call_id"] == "c1"
    assert verdict["evidence"]["fault"] == fault


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_results_after_a_max_tokens_terminal_are_executed_unreleased_call(
    server: MockServer, protocol: str
) -> None:
    """No fault at all: the scripted terminal itself withholds the calls."""
    stop = {"openai_responses": {"status": "incomplete"},
            "openai_chat_completions": {"status": "length"},
            "anthropic_messages": {"status": "max_tokens"},
            "gemini_interactions": {"status": "incomplete"},
            "gemini_generate_content": {"status": "MAX_TOKENS"}}[protocol]  # fmt: skip
    the_script = script({"calls": [call_spec("c1")], **stop}, {"text": "ok"}, protocol=protocol)
    client = _client(server, protocol, the_script)
    client.post(first(protocol), stream=True)
    client.post(answer(protocol, ["c1"], previous=_previous(client)))
    assert client.ids() == ["executed_unreleased_call"]
    assert client.verdicts()[0]["evidence"]["fault"] is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_results_for_a_whole_turn_give_no_verdict(server: MockServer, protocol: str) -> None:
    client = _client(server, protocol, script(
        {"calls": [call_spec("c1")]}, {"text": "ok"}, protocol=protocol))  # fmt: skip
    assert client.post(first(protocol), stream=True).status_code == 200
    assert client.post(answer(protocol, ["c1"], previous=_previous(client))).status_code == 200
    assert client.verdicts() == []
    assert server.status(client.test_id)["sessions"][0]["verdicts"] == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cut_turn_posted_again_and_both_answered_is_duplicate_execution_suspected(
    server: MockServer, protocol: str
) -> None:
    cut = {"type": "disconnect", "before_terminal": True}
    client = _client(server, protocol, script(
        {"calls": [call_spec("c1")], "fault": cut}, {"calls": [call_spec("c2")]},
        {"text": "one"}, {"text": "two"}, protocol=protocol,
    ))  # fmt: skip
    body = first(protocol, store=False) if protocol in STATEFUL else first(protocol)
    client.post(body, stream=True)
    client.post(body, stream=True)  # the same request again: new call ids
    client.post(answer(protocol, ["c1"]))
    client.post(answer(protocol, ["c2"]))
    ids = client.ids()
    assert sorted(ids) == ["duplicate_execution_suspected", "executed_unreleased_call"], ids
    (dup,) = (v for v in client.verdicts() if v["id"] == "duplicate_execution_suspected")
    assert (dup["evidence"]["cut_calls"], dup["evidence"]["repost_calls"]) == (["c1"], ["c2"])


# -- retries ------------------------------------------------------------------------------------


def _error_script(protocol: str, **fault: Any) -> Script:
    return script({"fault": {"type": "http_error", **fault}}, {"text": "ok"}, protocol=protocol)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_retry_after_a_non_retryable_status_is_retried_non_retryable(
    server: MockServer, protocol: str, status: int
) -> None:
    client = _client(server, protocol, _error_script(protocol, status=status))
    assert client.post(first(protocol)).status_code == status
    assert client.post(first(protocol)).status_code == 200
    (verdict,) = client.verdicts()
    assert verdict["id"] == "retried_non_retryable"
    assert verdict["evidence"]["previous_status"] == status


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_retry_sooner_than_retry_after_is_retry_after_ignored(
    server: MockServer, protocol: str
) -> None:
    client = _client(server, protocol, _error_script(protocol, status=429, retry_after=30))
    assert client.post(first(protocol)).status_code == 429
    assert client.post(first(protocol)).status_code == 200
    (verdict,) = client.verdicts()
    assert verdict["id"] == "retry_after_ignored"
    assert verdict["evidence"]["retry_after_s"] == 30
    assert verdict["evidence"]["gap_s"] < 30


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_immediate_retry_of_a_500_is_no_backoff_and_five_are_a_storm(
    server: MockServer, protocol: str
) -> None:
    server.state.verdicts.no_backoff_s = 60.0  # every retry here is "too soon", however slow
    client = _client(server, protocol, _error_script(protocol, status=500, times=5))
    codes = [client.post(first(protocol)).status_code for _ in range(6)]
    assert codes == [500] * 5 + [200]
    ids = client.ids()
    assert ids.count("no_backoff") == 5
    assert ids.count("retry_storm") == 1
    assert set(ids) == {"no_backoff", "retry_storm"}
    server.state.verdicts.no_backoff_s = NO_BACKOFF_S


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_different_request_after_an_error_is_no_retry(server: MockServer, protocol: str) -> None:
    client = _client(server, protocol, _error_script(protocol, status=400))
    assert client.post(first(protocol)).status_code == 400
    assert client.post(first(protocol, prompt="Weather in Rome?")).status_code == 200
    assert client.verdicts() == []


# -- stored turns: resuming, previous ids, controls ---------------------------------------------


def test_a_cut_stored_interaction_posted_again_is_reposted_instead_of_resuming(
    server: MockServer,
) -> None:
    protocol = "gemini_interactions"
    cut = {"type": "disconnect", "before_terminal": True}
    client = _client(server, protocol, script(
        {"text": "Hel" * 5, "fault": cut}, {"text": "Hello"}, protocol=protocol))  # fmt: skip
    client.post(first(protocol), stream=True)
    client.post(first(protocol), stream=True)
    ids = client.ids()
    assert ids == ["reposted_instead_of_resuming"], ids
    assert client.verdicts()[0]["evidence"]["fault"] == cut


def test_a_cut_stored_interaction_resumed_by_last_event_id_gives_no_verdict(
    server: MockServer,
) -> None:
    protocol = "gemini_interactions"
    cut = {"type": "disconnect", "before_terminal": True}
    client = _client(server, protocol, _cut_then_ok(protocol, cut))
    received = client.post(first(protocol), stream=True).text
    last = [json.loads(line[6:]) for line in received.splitlines() if line.startswith("data: {")]
    interaction = client.turn_id()
    url = f"{server.url}/gemini/v1beta/interactions/{interaction}"
    resumed = httpx.get(url, params={"stream": "true", "last_event_id": last[-1]["event_id"]},
                        headers=client.headers)  # fmt: skip
    assert resumed.status_code == 200
    assert "interaction.completed" in resumed.text  # the terminal the cut withheld
    client.post(answer(protocol, ["c1"], previous=interaction))
    assert client.verdicts() == []


@pytest.mark.parametrize("protocol", STATEFUL)
def test_a_continuation_replaying_the_output_it_names_is_history_and_previous_id(
    server: MockServer, protocol: str
) -> None:
    client = _client(server, protocol, script(
        {"calls": [call_spec("c1")]}, {"text": "ok"}, protocol=protocol))  # fmt: skip
    reply = client.post(first(protocol)).json()
    previous = client.turn_id()
    output = reply["output"] if protocol == "openai_responses" else reply["steps"]
    replayed = [item for item in output if item.get("type") == "function_call"]
    body = answer(protocol, ["c1"], previous=previous)
    body["input"] = replayed + body["input"]
    assert client.post(body).status_code == 200
    (verdict,) = client.verdicts()
    assert verdict["id"] == "history_and_previous_id"
    assert verdict["evidence"]["previous_id"] == previous
    assert verdict["evidence"]["replayed"] == ["function_call"]


@pytest.mark.parametrize("protocol", STATEFUL)
def test_a_continuation_without_the_declared_controls_is_controls_not_resent(
    server: MockServer, protocol: str
) -> None:
    turns = ({"calls": [call_spec("c1")]}, {"text": "ok"}, {"text": "again"})
    client = _client(server, protocol, script(*turns, protocol=protocol))
    key = "instructions" if protocol == "openai_responses" else "system_instruction"
    client.post(first(protocol, **{key: "Answer briefly."}))
    previous = client.turn_id()
    with_controls = answer(protocol, ["c1"], previous=previous) | {key: "Answer briefly."}
    assert client.post(with_controls).status_code == 200
    assert client.verdicts() == []
    body = first(protocol) | {("previous_response_id" if protocol == "openai_responses"
                               else "previous_interaction_id"): client.turn_id()}  # fmt: skip
    assert client.post(body).status_code == 200
    (verdict,) = client.verdicts()
    assert verdict["id"] == "controls_not_resent"
    assert verdict["evidence"]["missing"] == [key]


# -- native validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_continuation_leaving_a_call_unanswered_is_unanswered_call(
    server: MockServer, protocol: str
) -> None:
    client = _client(server, protocol, script(
        {"calls": [call_spec("c1"), call_spec("c2", "get_time")]}, {"text": "ok"},
        protocol=protocol))  # fmt: skip
    client.post(first(protocol))
    body = answer(protocol, ["c1"], previous=_previous(client))
    if protocol == "gemini_generate_content":  # the model's turn as sent: both calls
        body["contents"][1]["parts"].append(
            {"functionCall": {"name": "get_time", "args": {"city": "Paris"}, "id": "c2"}}
        )
    if protocol == "openai_chat_completions":
        body["messages"][1]["tool_calls"].append({"id": "c2", "type": "function", "function": {
            "name": "get_time", "arguments": '{"city": "Paris"}'}})  # fmt: skip
    if protocol == "anthropic_messages":
        body["messages"][1]["content"].append(
            {"type": "tool_use", "id": "c2", "name": "get_time", "input": {"city": "Paris"}}
        )
    assert client.post(body).status_code == 400
    (verdict,) = client.verdicts()
    assert verdict["id"] == "unanswered_call", verdict
    assert verdict["evidence"]["status"] == 400
    assert verdict["evidence"]["check"].endswith(("has_output", "has_result", "one_content"))


def test_verdicts_are_served_over_http_and_forgotten_on_reset(server: MockServer) -> None:
    protocol = "anthropic_messages"
    client = _client(server, protocol, _error_script(protocol, status=400))
    client.post(first(protocol))
    client.post(first(protocol))
    over_http = httpx.get(f"{server.url}/_callgate/verdicts", params={"test_id": client.test_id})
    assert [v["id"] for v in over_http.json()] == ["retried_non_retryable"]
    (verdict,) = over_http.json()
    assert set(verdict) == {"id", "severity", "test_id", "seq", "at", "message", "rule",
                            "source", "evidence"}  # fmt: skip
    assert verdict["source"]
    server.reset(client.test_id)
    assert server.verdicts(client.test_id) == []
