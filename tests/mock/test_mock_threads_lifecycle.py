"""Anthropic message threads in the mock: the beta header, in-flight continuations and
expiry, over a real socket through anthropic 2.14.0 with strict validation.

A ``thread`` needs ``message-threads-2026-08-12`` in ``anthropic-beta``; a continuation
from a message whose other continuation is still streaming is ``thread_continue_in_flight``
(and ``thread_already_continued`` once that stream has ended); a thread unused for an hour,
or expired through the control route, is ``thread_not_found`` — which the SDK's threaded
tool runner recovers from by replaying the whole conversation in a new thread.
anthropic 0.117.0 has no threads: the module is skipped there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder, call
from callgate.mock._providers import _anthropic_messages_threads as threads

pytestmark = pytest.mark.skipif(
    tuple(int(p) for p in anthropic.__version__.split(".")[:2]) < (2, 14),
    reason="message threads arrived in anthropic 2.14.0",
)

BETA = "message-threads-2026-08-12"
MODEL = "thread-model"
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]
RESULTS = [{"name": "get_weather", "output": "sunny"}]
FIRST = [{"role": "user", "content": "Weather in Paris?"}]
# A stream that sends two events and stays open until its client goes away.
HELD = {"type": "never_end", "after": 2}


def _script() -> Any:
    b = ScriptBuilder(seed=9)
    for name in ("beta", "expire", "ttl", "last-use", "runner"):
        b.turn("anthropic_messages", conversation=name, text="Checking.",
               calls=[call("get_weather", city="Paris")])  # fmt: skip
        b.turn("anthropic_messages", conversation=name,
               expect={"function_results": RESULTS}, text="Sunny.",
               calls=[call("get_weather", city="Rome")])  # fmt: skip
        b.turn("anthropic_messages", conversation=name,
               expect={"function_results": RESULTS}, text="Done.")  # fmt: skip
    b.turn("anthropic_messages", conversation="flight", text="Checking.",
           calls=[call("get_weather", city="Paris")])  # fmt: skip
    b.turn("anthropic_messages", conversation="flight", expect={"function_results": RESULTS},
           text="Sunny.", fault=HELD)  # fmt: skip
    return b.build()


_OPEN: list[anthropic.Anthropic] = []


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(_script()) as running:
        yield running
        while _OPEN:
            _OPEN.pop().close()


def _client(server: MockServer, conversation: str) -> anthropic.Anthropic:
    client = anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=0,
        _strict_response_validation=True,
        default_headers={"x-callgate-conversation": conversation},
    )  # fmt: skip
    _OPEN.append(client)
    return client


def _create(client: anthropic.Anthropic, **extra: Any) -> Any:
    extra.setdefault("betas", [BETA])
    return client.beta.messages.create(
        model=MODEL, max_tokens=256, system="Be brief.", tools=TOOLS, messages=FIRST,
        thread={"type": "create"}, **extra,
    )  # fmt: skip


def _answer(message: Any) -> list[dict[str, Any]]:
    (use,) = [b for b in message.content if b.type == "tool_use"]
    return [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]}]  # fmt: skip


def _continue(client: anthropic.Anthropic, previous: Any, **extra: Any) -> Any:
    extra.setdefault("betas", [BETA])
    return client.beta.messages.create(
        model=MODEL, max_tokens=256, messages=_answer(previous),
        thread={"type": "continue", "previous_message_id": previous.id}, **extra,
    )  # fmt: skip


def _code(exc: anthropic.APIStatusError) -> Any:
    assert isinstance(exc.body, dict)
    return exc.body["error"].get("details", {}).get("error_code")


def test_thread_without_the_beta_header_is_refused_and_consumes_nothing(
    server: MockServer,
) -> None:
    client = _client(server, "beta")
    with pytest.raises(anthropic.BadRequestError) as caught:
        _create(client, betas=[])
    assert BETA in caught.value.message
    with pytest.raises(anthropic.BadRequestError):
        _create(client, betas=["some-other-beta-2026-01-01"])
    first = _create(client, betas=["some-other-beta-2026-01-01", BETA])
    assert [b.type for b in first.content] == ["text", "tool_use"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        _continue(client, first, betas=[])
    assert BETA in caught.value.message
    assert _continue(client, first).content[0].type == "text"


def test_a_second_continuation_while_the_first_streams_is_in_flight(server: MockServer) -> None:
    client, other = _client(server, "flight"), _client(server, "flight")
    first = _create(client)
    with client.beta.messages.stream(
        model=MODEL, max_tokens=256, betas=[BETA], messages=_answer(first),
        thread={"type": "continue", "previous_message_id": first.id},
    ) as stream:  # fmt: skip
        assert next(iter(stream)).type == "message_start"  # begun, held open
        with pytest.raises(anthropic.BadRequestError) as caught:
            _continue(other, first)
        assert caught.value.status_code == 400
        assert _code(caught.value) == "thread_continue_in_flight"
        continuing = list(_records(server).values())[-1]
    # The client went away: once the server has seen it, the message counts as continued.
    deadline = time.monotonic() + 10
    while continuing.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(anthropic.BadRequestError) as caught:
        _continue(client, first)
    assert _code(caught.value) == "thread_already_continued"


def _expire(server: MockServer, message_id: str) -> httpx.Response:
    url = f"{server.url}/_callgate/anthropic/threads/{message_id}/expire"
    return httpx.post(url)


def test_an_expired_thread_is_thread_not_found_for_every_message_in_it(
    server: MockServer,
) -> None:
    client = _client(server, "expire")
    first = _create(client)
    second = _continue(client, first)
    answer = _expire(server, first.id)  # any message of the thread deletes all of it
    assert (answer.status_code, answer.json()) == (200, {"expired": first.id})
    with pytest.raises(anthropic.NotFoundError) as caught:
        _continue(client, second)
    assert _code(caught.value) == "thread_not_found"
    missing = _expire(server, "msg_unknown")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


def _records(server: MockServer) -> dict[str, Any]:
    return server.state.session("default").store.records


def test_a_thread_unused_for_an_hour_is_deleted(server: MockServer) -> None:
    client = _client(server, "ttl")
    first = _create(client)
    for record in _records(server).values():
        record.served_at -= threads.THREAD_TTL_SECONDS + 1
    with pytest.raises(anthropic.NotFoundError) as caught:
        _continue(client, first)
    assert _code(caught.value) == "thread_not_found"
    assert _records(server)[first.id].deleted


def test_retention_counts_from_the_threads_last_use(server: MockServer) -> None:
    client = _client(server, "last-use")
    first = _create(client)
    second = _continue(client, first)
    _records(server)[first.id].served_at -= 2 * threads.THREAD_TTL_SECONDS  # old create
    third = _continue(client, second)  # the thread was used a moment ago: still held
    assert [b.text for b in third.content if b.type == "text"] == ["Done."]


def test_the_sdk_tool_runner_replays_in_a_new_thread_after_expiry(server: MockServer) -> None:
    client = _client(server, "runner")

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        latest = list(_records(server))[-1]
        assert _expire(server, latest).status_code == 200  # deleted before it is continued
        return "sunny"

    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=256, messages=FIRST, tools=[get_weather]
    )
    final = runner.until_done()
    assert [b.text for b in final.content if b.type == "text"] == ["Done."]
    sent = server.journal.requests(conversation="runner")
    threads_sent = [e.body.get("thread", {}).get("type") for e in sent]
    outcomes = [e.outcome for e in sent]
    # create; continue -> 404 (expired); create again with the whole conversation; ...
    assert threads_sent[:3] == ["create", "continue", "create"]
    assert outcomes[:3] == ["matched", "rejected", "matched"]
    assert [m["role"] for m in sent[2].body["messages"]] == ["user", "assistant", "user"]
