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
from callgate.mock._providers.anthropic_messages import _threads as threads

from .thread_wire import (
    BETA,
    FIRST,
    MODEL,
    RESULTS,
    answer,
    client_for,
    continue_,
    create,
    details,
    needs_threads,
    serve,
)

pytestmark = needs_threads

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


@pytest.fixture
def server() -> Iterator[MockServer]:
    yield from serve(_script())


def _code(exc: anthropic.APIStatusError) -> Any:
    return details(exc).get("error_code")


def test_thread_without_the_beta_header_is_refused_and_consumes_nothing(
    server: MockServer,
) -> None:
    client = client_for(server, "beta")
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, betas=[])
    assert BETA in caught.value.message
    with pytest.raises(anthropic.BadRequestError):
        create(client, betas=["some-other-beta-2026-01-01"])
    first = create(client, betas=["some-other-beta-2026-01-01", BETA])
    assert [b.type for b in first.content] == ["text", "tool_use"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, first, betas=[])
    assert BETA in caught.value.message
    assert continue_(client, first).content[0].type == "text"


def test_a_second_continuation_while_the_first_streams_is_in_flight(server: MockServer) -> None:
    client, other = client_for(server, "flight"), client_for(server, "flight")
    first = create(client)
    with client.beta.messages.stream(
        model=MODEL, max_tokens=256, betas=[BETA], messages=answer(first),
        thread={"type": "continue", "previous_message_id": first.id},
    ) as stream:  # fmt: skip
        assert next(iter(stream)).type == "message_start"  # begun, held open
        with pytest.raises(anthropic.BadRequestError) as caught:
            continue_(other, first)
        assert caught.value.status_code == 400
        assert _code(caught.value) == "thread_continue_in_flight"
        continuing = list(_records(server).values())[-1]
    # The client went away: once the server has seen it, the message counts as continued.
    deadline = time.monotonic() + 10
    while continuing.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, first)
    assert _code(caught.value) == "thread_already_continued"


def _expire(server: MockServer, message_id: str) -> httpx.Response:
    url = f"{server.url}/_callgate/anthropic/threads/{message_id}/expire"
    return httpx.post(url)


def test_an_expired_thread_is_thread_not_found_for_every_message_in_it(
    server: MockServer,
) -> None:
    client = client_for(server, "expire")
    first = create(client)
    second = continue_(client, first)
    answer = _expire(server, first.id)  # any message of the thread deletes all of it
    assert (answer.status_code, answer.json()) == (200, {"expired": first.id})
    with pytest.raises(anthropic.NotFoundError) as caught:
        continue_(client, second)
    assert _code(caught.value) == "thread_not_found"
    missing = _expire(server, "msg_unknown")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


def _records(server: MockServer) -> dict[str, Any]:
    return server.state.session("default").store.records


def test_a_thread_unused_for_an_hour_is_deleted(server: MockServer) -> None:
    client = client_for(server, "ttl")
    first = create(client)
    for record in _records(server).values():
        record.served_at -= threads.THREAD_TTL_SECONDS + 1
    with pytest.raises(anthropic.NotFoundError) as caught:
        continue_(client, first)
    assert _code(caught.value) == "thread_not_found"
    assert _records(server)[first.id].deleted


def test_retention_counts_from_the_threads_last_use(server: MockServer) -> None:
    client = client_for(server, "last-use")
    first = create(client)
    second = continue_(client, first)
    _records(server)[first.id].served_at -= 2 * threads.THREAD_TTL_SECONDS  # old create
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, first)  # an old message of a live thread: continued, not expired
    assert _code(caught.value) == "thread_already_continued"
    third = continue_(client, second)  # the thread was used a moment ago: still held
    assert [b.text for b in third.content if b.type == "text"] == ["Done."]


def test_the_sdk_tool_runner_replays_in_a_new_thread_after_expiry(server: MockServer) -> None:
    client = client_for(server, "runner")

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
