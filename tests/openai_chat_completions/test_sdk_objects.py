"""The openai SDK's own objects fed as they are: ``ChatCompletionChunk`` through
``feed_event`` and ``ChatCompletion`` through ``parse_response`` give the turn the bytes give;
the SDK's ``ChatCompletionStreamState`` accumulator assembles the same calls from the golden
streams the gate releases. Runs under openai 3.57.0 and, in the baseline venv, 2.46.0."""

from __future__ import annotations

from typing import Any

import pytest

from callgate.contracts import Fixture, load_fixtures
from callgate.openai_chat_completions import Parser, parse_response, parse_stream

from .wire import FIXTURES

openai = pytest.importorskip("openai")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402

REVISION = "2026-11" if openai.__version__.startswith("3.") else "2026-07-21"
ALL = load_fixtures(FIXTURES)
RELEASING = [f for f in ALL if f.layer == "wire-sse" and "refused" not in f.expected]


def _chunks(fixture: Fixture) -> list[Any]:
    return [
        ChatCompletionChunk.model_validate(obj)
        for _n, obj in fixture.wire_events()
        if obj != "[DONE]"
    ]


def _options(fixture: Fixture) -> dict[str, Any]:
    return {"baseline": REVISION, "tool_choice": fixture.expected.get("tool_choice")}


def test_the_installed_sdk_is_a_baseline_generation() -> None:
    assert openai.__version__ in ("3.57.0", "2.46.0")


@pytest.mark.parametrize("fixture", RELEASING, ids=lambda f: f.name)
def test_sdk_chunk_objects_give_the_turn_the_bytes_give(fixture: Fixture) -> None:
    parser = Parser(**_options(fixture))
    for chunk in _chunks(fixture):
        parser.feed_event(chunk)
    by_objects = parser.finish()
    by_bytes = parse_stream(fixture.data, **_options(fixture))
    assert by_objects.calls == by_bytes.calls
    assert (by_objects.text, by_objects.refusal, by_objects.usage) == (
        by_bytes.text,
        by_bytes.refusal,
        by_bytes.usage,
    )


@pytest.mark.parametrize("fixture", RELEASING, ids=lambda f: f.name)
def test_the_sdk_accumulator_assembles_the_calls_the_gate_releases(fixture: Fixture) -> None:
    state: Any = ChatCompletionStreamState()
    for chunk in _chunks(fixture):
        state.handle_chunk(chunk)
    message = state.get_final_completion().choices[0].message
    sdk_calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    turn = parse_stream(fixture.data, **_options(fixture))
    assert sdk_calls == [(c.call_id, c.name, c.raw["function"]["arguments"]) for c in turn.calls]
    assert (message.content or "") == turn.text


def test_an_sdk_completion_object_gives_the_turn_its_body_gives() -> None:
    fixture = next(f for f in ALL if f.layer == "json-body")
    obj = ChatCompletion.model_validate(fixture.body())
    by_object = parse_response(obj, baseline=REVISION)
    by_body = parse_response(fixture.body(), baseline=REVISION)
    assert by_object.calls == by_body.calls
    assert by_object.usage == by_body.usage
