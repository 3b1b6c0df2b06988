"""Order-free fixtures as the official SDKs drive them, over a real socket, the way agent
frameworks do: a title request, a tool loop that replays the whole history (or, on Gemini
Interactions, continues by previous id), and the SDK's own retry after a 5xx/429.

Strict response validation is on (openai, anthropic); the same file runs with the
2026-07-21 baseline SDKs (``make test-baseline``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import MockServer, Script

GENERATION = int(importlib.metadata.version("openai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
MODEL = "m"
TITLE = "Generate a short title for this conversation: weather in Paris"
TITLE_PATTERN = "^Generate a (short )?title"
ASK = "What is the weather in Paris?"
OAI_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]


def _script(protocol: str, *, retry_status: int = 500) -> Script:
    """A framework's weather agent for one protocol, as fixtures only."""
    return Script.from_dict(
        {
            "baseline": BASELINE,
            "fixtures": [
                {"protocol": protocol, "match": {"last_user_text_regex": TITLE_PATTERN},
                 "respond": {"text": "Paris weather"}},
                {"protocol": protocol, "match": {"last_user_text_contains": "flaky"}, "times": 1,
                 "respond": {"fault": {"type": "http_error", "status": retry_status,
                                       "retry_after": 0}}},
                {"protocol": protocol, "match": {"last_user_text_contains": "flaky"},
                 "respond": {"text": "served on the retry"}},
                {"protocol": protocol, "match": {"tool_results": ["get_weather"]},
                 "respond": {"text": "Sunny, 21 degrees."}},
                {"protocol": protocol, "match": {"tools": ["get_weather"],
                                                 "has_tool_results": False},
                 "respond": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                             "chunking": {"fixed": 4}}},
            ],
        }
    )  # fmt: skip


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[MockServer] = []

    def start(protocol: str, **options: Any) -> MockServer:
        server = MockServer(_script(protocol, **options)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _outcomes(server: MockServer) -> list[tuple[int | None, str | None]]:
    return [(e.status, e.outcome) for e in server.journal.entries()]


def test_openai_title_tool_loop_by_history_replay_and_a_retry(serve: Any) -> None:
    server = serve("openai_responses")
    with openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=1,
                       _strict_response_validation=True) as client:  # fmt: skip
        title = client.responses.create(model=MODEL, input=TITLE)
        assert title.output_text == "Paris weather"
        prior = [{"role": "user", "content": ASK}]
        with client.responses.create(
            model=MODEL, input=prior, tools=OAI_TOOLS, store=False, stream=True
        ) as events:
            last = list(events)[-1]
        turn = oai.parse_response(last.response.to_dict())
        assert [(c.name, c.arguments) for c in turn.calls] == [("get_weather", {"city": "Paris"})]
        request = oai.build_stateless_continuation(
            turn, [ToolResult(turn.calls[0].call_id, "sunny")], prior_input_items=prior,
            store=False, model=MODEL, instructions=None, tools=OAI_TOOLS,
        )  # fmt: skip
        assert "previous_response_id" not in request
        assert client.responses.create(**request).output_text == "Sunny, 21 degrees."
        retried = client.responses.create(model=MODEL, input="a flaky question")
        assert retried.output_text == "served on the retry"
    assert _outcomes(server)[-2:] == [(500, "fault"), (200, "matched")]
    assert server.mismatches == []


def test_anthropic_title_tool_loop_by_history_replay_and_a_retry(serve: Any) -> None:
    server = serve("anthropic_messages", retry_status=529)
    with anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="k", max_retries=1,
                             _strict_response_validation=True) as client:  # fmt: skip
        title = client.messages.create(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": TITLE}]
        )
        assert title.content[0].type == "text"
        assert title.content[0].text == "Paris weather"
        history: list[Any] = [{"role": "user", "content": ASK}]
        with client.messages.stream(
            model=MODEL, max_tokens=64, messages=history, tools=ANTHROPIC_TOOLS
        ) as stream:
            message = stream.get_final_message()
        turn = am.parse_response(message.to_dict(mode="json", exclude_none=True))
        request = am.build_continuation(
            turn, [ToolResult(turn.calls[0].call_id, "sunny")], history=history, model=MODEL,
            max_tokens=64, tools=ANTHROPIC_TOOLS,
        )  # fmt: skip
        final = client.messages.create(**request)
        assert final.content[0].type == "text"
        assert final.content[0].text == "Sunny, 21 degrees."
        retried = client.messages.create(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "flaky?"}]
        )
        assert retried.content[0].type == "text"
        assert retried.content[0].text == "served on the retry"
    assert _outcomes(server)[-2:] == [(529, "fault"), (200, "matched")]
    assert server.mismatches == []


def test_gemini_interactions_title_and_a_tool_loop_by_previous_id(serve: Any) -> None:
    server = serve("gemini_interactions", retry_status=503)
    options = {"base_url": server.gemini_base_url, "api_version": "v1"}
    with genai.Client(api_key="k", http_options=options) as client:
        title = client.interactions.create(model=MODEL, input=TITLE)
        assert title.status == "completed"
        first = client.interactions.create(model=MODEL, input=ASK, tools=OAI_TOOLS)
        turn = gi.parse_interaction(first.to_dict(), source="create")
        request = gi.build_stateful_continuation(
            turn, [ToolResult(turn.calls[0].call_id, "sunny")],
            previous_interaction_was_stored=True, store=True, model=MODEL, tools=OAI_TOOLS,
        )  # fmt: skip
        assert client.interactions.create(**request).status == "completed"
        assert client.interactions.create(model=MODEL, input="flaky?").status == "completed"
    assert _outcomes(server)[-2:] == [(503, "fault"), (200, "matched")]
    assert server.mismatches == []


def test_google_genai_automatic_function_calling_replays_history_into_fixtures(
    serve: Any,
) -> None:
    server = serve("gemini_generate_content", retry_status=503)
    ran: list[str] = []

    def get_weather(city: str) -> dict[str, Any]:
        """Weather in a city."""
        ran.append(city)
        return {"temp": 21}

    get_weather.__annotations__ = {"city": str, "return": dict}  # real types for the SDK
    options = {"base_url": server.gemini_base_url, "api_version": "v1beta",
               "retry_options": {"attempts": 2}}  # fmt: skip
    client = genai.Client(api_key="k", http_options=options)
    title = client.models.generate_content(model=MODEL, contents=TITLE)
    assert title.text == "Paris weather"
    config = types.GenerateContentConfig(tools=[get_weather])
    answer = client.models.generate_content(model=MODEL, contents=ASK, config=config)
    assert ran == ["Paris"]
    assert answer.text == "Sunny, 21 degrees."
    replayed = [e.body for e in server.journal.entries() if e.outcome == "matched"][-1]
    assert [c["role"] for c in replayed["contents"]] == ["user", "model", "user"]
    assert client.models.generate_content(model=MODEL, contents="flaky?").text == (
        "served on the retry"
    )
    assert _outcomes(server)[-2:] == [(503, "fault"), (200, "matched")]
    assert server.mismatches == []


def _readme_script() -> Script:
    """The first example of docs/mock.md, as written there."""
    from callgate.mock import ScriptBuilder, call

    return (
        ScriptBuilder(seed=1, baseline=BASELINE)
        .turn("openai_responses", expect={"tools": ["get_weather"]},
              calls=[call("get_weather", city="Paris")], chunking="char")
        .turn("openai_responses", expect={
              "function_results": [{"name": "get_weather", "output": "sunny"}]},
              text="It is sunny.")
        .fixture(match={"last_user_text_contains": "title"}, text="Weather in Paris")
        .build()
    )  # fmt: skip


@pytest.mark.parametrize("stateful", [True, False])
def test_the_readme_example_serves_a_stateful_and_a_history_replaying_client(
    stateful: bool,
) -> None:
    with (
        MockServer(_readme_script()) as server,
        openai.OpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0,
                      _strict_response_validation=True) as client,
    ):  # fmt: skip
        prior = [{"role": "user", "content": ASK}]
        first = client.responses.create(model=MODEL, input=prior, tools=OAI_TOOLS)
        title = client.responses.create(model=MODEL, input="Write a title for this chat")
        assert title.output_text == "Weather in Paris"
        turn = oai.parse_response(first.to_dict())
        results = [ToolResult(turn.calls[0].call_id, "sunny")]
        common = {"model": MODEL, "instructions": None, "tools": OAI_TOOLS}
        if stateful:
            request = oai.build_stateful_continuation(
                turn, results, previous_response_was_stored=True, store=True, **common
            )
        else:
            request = oai.build_stateless_continuation(
                turn, results, prior_input_items=prior, store=True, **common
            )
        assert client.responses.create(**request).output_text == "It is sunny."
        server.assert_script_done()
