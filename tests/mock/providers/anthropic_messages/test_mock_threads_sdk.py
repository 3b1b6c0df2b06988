"""Anthropic message threads in the mock, over a real socket through anthropic 2.14.0.

``create`` stores the conversation under the reply's id; ``continue`` sends only the new
messages and the mock rebuilds the whole history, so ``expect`` and the native checks see
all of it; each thread error comes back in the provider's shape and status. The SDK's
``beta.messages.tool_runner`` uses threads by default; ``thread=False`` replays the history.
anthropic 0.117.0 has no threads: the module is skipped there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from callgate.mock import MockServer, ScriptBuilder, call

from .thread_wire import (
    BETA,
    FIRST,
    MODEL,
    RESULTS,
    TOOLS,
    answer,
    client_for,
    continue_,
    create,
    details,
    needs_threads,
    serve,
)

pytestmark = needs_threads


def _script() -> Any:
    b = ScriptBuilder(seed=5)
    runs = [f"{c}-{s}" for c in ("f", "g") for s in (False, True)]
    for name in ("a", "b", "c", "d", "e", "h", *runs):
        b.turn("anthropic_messages", conversation=name, text="Checking.",
               calls=[call("get_weather", city="Paris")])  # fmt: skip
        b.turn("anthropic_messages", conversation=name,
               expect={"function_results": RESULTS}, text="Sunny.")  # fmt: skip
    b.turn("anthropic_messages", conversation="i", text="One.",
           calls=[call("get_weather", city="Paris")])  # fmt: skip
    b.turn("anthropic_messages", conversation="i", expect={"function_results": RESULTS},
           text="Two.", calls=[call("get_weather", city="Rome")])  # fmt: skip
    b.turn("anthropic_messages", conversation="i", expect={"function_results": RESULTS},
           text="Three.")  # fmt: skip
    return b.build()


@pytest.fixture
def server() -> Iterator[MockServer]:
    yield from serve(_script())


def test_thread_continue_sends_only_the_new_turn_and_the_mock_rebuilds_history(
    server: MockServer,
) -> None:
    client = client_for(server, "a")
    first = create(client)
    second = continue_(client, first)
    assert [b.text for b in second.content if b.type == "text"] == ["Sunny."]
    sent = server.journal.last(conversation="a").body  # the journal keeps what was sent
    assert sent["messages"] == answer(first)
    assert "system" not in sent


def test_thread_unknown_previous_id_is_thread_not_found_404(server: MockServer) -> None:
    client = client_for(server, "b")
    first = client.beta.messages.create(model=MODEL, max_tokens=256, tools=TOOLS, messages=FIRST)
    with pytest.raises(anthropic.NotFoundError) as caught:
        continue_(client, first)  # created without a thread: nothing is held
    assert caught.value.status_code == 404
    assert details(caught.value) == {"error_code": "thread_not_found"}
    assert caught.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]


def test_thread_message_continued_twice_is_thread_already_continued(server: MockServer) -> None:
    client = client_for(server, "c")
    first = create(client)
    continue_(client, first)
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, first)
    assert details(caught.value) == {"error_code": "thread_already_continued"}


def test_thread_changed_system_is_thread_fingerprint_mismatch(server: MockServer) -> None:
    client = client_for(server, "d")
    first = create(client)
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, first, system="Be verbose.")
    assert details(caught.value) == {"error_code": "thread_fingerprint_mismatch"}
    assert "system" in caught.value.body["error"]["message"]  # type: ignore[index]
    # The refused request consumed nothing: the unchanged continuation is served.
    assert continue_(client, first).content[0].type == "text"


def test_thread_with_an_unsupported_field_is_thread_unsupported_request(
    server: MockServer,
) -> None:
    client = client_for(server, "e")
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, context_management={"edits": []})
    assert details(caught.value) == {
        "error_code": "thread_unsupported_request",
        "unsupported": ["context_management"],
    }


def _weather_tool() -> Any:
    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    return get_weather


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("conversation", "threaded"), [("f", True), ("g", False)])
def test_tool_runner_loop_runs_against_the_mock(
    server: MockServer, conversation: str, threaded: bool, stream: bool
) -> None:
    client = client_for(server, f"{conversation}-{stream}")
    extra: dict[str, Any] = {} if threaded else {"thread": False}
    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=256, messages=FIRST, tools=[_weather_tool()],
        stream=stream, **extra,
    )  # fmt: skip
    final = runner.until_done()
    assert [b.text for b in final.content if b.type == "text"] == ["Sunny."]
    first, second = server.journal.requests(conversation=f"{conversation}-{stream}")
    assert first.body.get("thread") == ({"type": "create"} if threaded else None)
    if threaded:
        assert second.body["thread"]["type"] == "continue"
        assert second.body["thread"]["previous_message_id"].startswith("msg_")
        assert [m["role"] for m in second.body["messages"]] == ["user"]
    else:
        assert [m["role"] for m in second.body["messages"]] == ["user", "assistant", "user"]


def test_build_thread_continuation_output_is_served_by_the_mock(server: MockServer) -> None:
    from callgate import ToolResult
    from callgate import anthropic_messages as am

    client = client_for(server, "h")
    create = {"model": MODEL, "max_tokens": 256, "system": "Be brief.", "tools": TOOLS,
              "messages": FIRST, "thread": {"type": "create"}}  # fmt: skip
    first = client.beta.messages.create(**create, betas=[BETA])
    turn = am.parse_response(first.to_dict(mode="json"))
    request = am.build_thread_continuation(
        turn, [ToolResult(turn.calls[0].call_id, "sunny")],
        previous_message_id=turn.message_id, thread_request=create,
        model=MODEL, max_tokens=256, tools=TOOLS, system="Be brief.",
    )  # fmt: skip
    second = client.beta.messages.create(**request, betas=[BETA])
    assert [b.text for b in second.content if b.type == "text"] == ["Sunny."]


def test_thread_continue_of_a_continue_rebuilds_the_whole_chain(server: MockServer) -> None:
    client = client_for(server, "i")
    first = create(client)
    second = continue_(client, first)
    third = continue_(client, second)
    assert [b.text for b in third.content if b.type == "text"] == ["Three."]
    with pytest.raises(anthropic.BadRequestError) as caught:
        continue_(client, second)  # the chain moved on: continue from its newest reply
    assert details(caught.value) == {"error_code": "thread_already_continued"}
