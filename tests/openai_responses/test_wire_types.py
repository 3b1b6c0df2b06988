"""Wire values of the wrong JSON type, checked before they are used as keys or flags.

Each test names one place where the parser (or a builder) used a wire value in a dict
lookup, a set membership test or an ``in (None, False)`` test before checking its type.
Such a value must give a typed, specific error, never a bare ``TypeError`` and never the
parser's generic "malformed event" backstop message.
"""

from __future__ import annotations

from typing import Any

import pytest

from callgate import SchemaError, ToolResult, UnsupportedProviderState, UsageError
from callgate.openai_responses import _render, build_stateful_continuation

from .check import OLD, fail, run
from .wire import Stream, fc_item, message_item

DELTA = "response.function_call_arguments.delta"
UNHASHABLE: list[Any] = [[0], {"i": 0}]


def _specific(err: Exception) -> None:
    assert "TypeError" not in str(err), str(err)
    assert "malformed" not in str(err), str(err)


@pytest.mark.parametrize("index", UNHASHABLE)
def test_argument_delta_with_a_list_or_object_output_index_is_a_schema_error(index: Any) -> None:
    """The hot path probed ``_open`` with the raw ``output_index`` (unhashable)."""
    s = Stream().created()
    s.added(0, fc_item("fc_0", "call_0", "get_weather", "{}"))
    s.ev(DELTA, item_id="fc_0", output_index=index, delta="{}")
    _specific(fail(s.events, SchemaError))


@pytest.mark.parametrize("kind", UNHASHABLE)
def test_content_part_with_a_list_or_object_type_is_a_schema_error(kind: Any) -> None:
    """``part.type`` was tested for membership in a frozenset before its type was checked."""
    s = Stream().created()
    s.added(0, message_item("msg_0", "hi"))
    s.ev(
        "response.content_part.added",
        item_id="msg_0",
        output_index=0,
        content_index=0,
        part={"type": kind, "text": ""},
    )
    _specific(fail(s.events, SchemaError))


@pytest.mark.parametrize("flag", [0, 0.0, 1, "false", [], {}])
def test_async_flag_other_than_null_or_false_fails_closed(flag: Any) -> None:
    """``async in (None, False)`` let ``0`` (== False) and ``0.0`` through as synchronous."""
    s = Stream().created()
    s.added(0, fc_item("fc_0", "call_0", "get_weather", "{}", **{"async": flag}))
    fail(s.events, UnsupportedProviderState)


@pytest.mark.parametrize("flag", [None, False])
def test_async_null_or_false_is_an_ordinary_call(flag: Any) -> None:
    item = fc_item("fc_0", "call_0", "get_weather", "{}", **{"async": flag})
    turn = run(Stream().created().call(0, item).completed().events)
    assert turn.calls[0].name == "get_weather"


@pytest.mark.parametrize("kind", UNHASHABLE)
def test_builder_text_format_with_a_list_or_object_type_is_a_usage_error(kind: Any) -> None:
    """The builder tested ``text.format.type`` against a frozenset before its type: a bare
    ``TypeError`` escaped from ``build_stateful_continuation``."""
    turn = run(Stream().created().call(0, fc_item("fc_0", "c0", "f", "{}")).completed().events)
    with pytest.raises(UsageError, match=r"text\.format"):
        build_stateful_continuation(
            turn,
            [ToolResult("c0", "ok")],
            previous_response_was_stored=True,
            store=True,
            model="gpt-test",
            instructions=None,
            tools=[{"type": "function", "name": "f", "parameters": {}}],
            request_controls={"text": {"format": {"type": kind}}},
        )


def test_mock_render_still_sends_name_on_done_under_2026_07_21() -> None:
    """Both shapes are valid under 2026-07-21: the mock keeps the SDK type's ``name``."""
    spec = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
    for baseline, named in ((OLD, True), ("2026-11", False)):
        events = _render.render_events(
            response_id="resp_1", model="m", items=[spec], status="completed", baseline=baseline
        )
        done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
        assert [("name" in e) for e in done] == [named]
        assert run(events, baseline=baseline).calls[0].name == "f"
