"""The mock renders an unstored Gemini Interaction (``store: false``) as the API does.

Over a real socket with the official google-genai SDK: the stream's interaction carries
``"id": ""`` and the non-streaming body no ``id`` (``Interaction.id`` is
``Optional[str] = ""``); callgate's turn has no id, so the conversation goes on with the
stateless builder, which the mock accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google import genai

from callgate import ContinuationError, ToolResult
from callgate import gemini_interactions as gi
from callgate.mock import MockServer, ScriptBuilder, call

MODEL = "unstored-model"
CONVERSATION = "x-callgate-conversation"
AUTH = {"x-goog-api-key": "k"}
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
USER = {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}
FIRST = {"model": MODEL, "input": [USER], "tools": TOOLS, "store": False}


def _script() -> Any:
    b = ScriptBuilder(seed=3)
    for name in ("stream", "json"):
        b.turn("gemini_interactions", conversation=name, calls=[call("get_weather", city="Paris")])
        b.turn(
            "gemini_interactions",
            conversation=name,
            expect={"function_results": [{"name": "get_weather", "output": "sunny"}]},
            text="Sunny in Paris.",
        )
    return b.build()


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(_script()) as running:
        yield running


def _client(server: MockServer, conversation: str) -> genai.Client:
    return genai.Client(
        api_key="k",
        http_options={
            "base_url": server.gemini_base_url,
            "api_version": "v1",
            "headers": {CONVERSATION: conversation},
            "retry_options": {"attempts": 1},
        },
    )


def _continue(turn: gi.Turn, origin: str) -> dict[str, Any]:
    results = [ToolResult(c.call_id, "sunny") for c in turn.calls]
    with pytest.raises(ContinuationError, match="build_stateless_continuation"):
        gi.build_stateful_continuation(
            turn, results, previous_interaction_was_stored=True, store=False,
            model=MODEL, tools=TOOLS,
        )  # fmt: skip
    return gi.build_stateless_continuation(
        turn, results, snapshot_source=origin, prior_input_steps=[USER], model=MODEL,
        tools=TOOLS,
    )  # fmt: skip


def test_sdk_stream_of_an_unstored_interaction_has_empty_ids(server: MockServer) -> None:
    parser = gi.Parser()
    with (
        _client(server, "stream") as client,
        client.interactions.create(**FIRST, stream=True) as stream,
    ):
        events = list(stream)
    for event in events:
        parser.feed_event(event.to_dict())
    assert events[0].event_type == "interaction.created"
    assert events[0].interaction.id == ""
    assert events[-1].interaction.id == ""
    updates = [e for e in events if e.event_type == "interaction.status_update"]
    assert [u.interaction_id for u in updates] == [""]
    turn = parser.finish()
    assert turn.interaction_id is None
    assert [c.name for c in turn.calls] == ["get_weather"]
    with _client(server, "stream") as client:
        final = client.interactions.create(**_continue(turn, "stream"))
    assert final.status == "completed"
    assert final.id == ""  # the continuation is store: false too
    assert server.state.remaining()["stream"] == 0


def test_sdk_body_of_an_unstored_interaction_has_no_id(server: MockServer) -> None:
    raw = httpx.post(
        f"{server.gemini_base_url}/v1/interactions",
        json=FIRST,
        headers={**AUTH, CONVERSATION: "json"},
    )
    assert raw.status_code == 200
    assert "id" not in raw.json()
    turn = gi.parse_interaction(raw.json(), source="create")
    assert turn.interaction_id is None
    with _client(server, "json") as client:
        final = client.interactions.create(**_continue(turn, "create"))
    assert final.id == ""  # what the SDK type defaults an absent id to
    assert gi.parse_interaction(final.to_dict(), source="create").interaction_id is None
    assert final.status == "completed"


def test_sdk_gives_the_same_unstored_turn_as_the_raw_body(server: MockServer) -> None:
    with _client(server, "json") as client:
        interaction = client.interactions.create(**FIRST)
    assert interaction.id == ""
    turn = gi.parse_interaction(interaction.to_dict(), source="create")
    assert turn.interaction_id is None
    assert [(c.name, c.arguments) for c in turn.calls] == [("get_weather", {"city": "Paris"})]
