"""``web_search_call.action.sources`` as the API sends them, not only as the SDK types them.

Both SDK generations type a source as ``{"type": "url", "url"}`` only; the API also sends
specialized feeds as ``{"type": "api", "name": "oai-weather"}`` (no ``url``), e.g. for a
weather or finance query, in ``response.output_item.done`` after an ``.added`` that has no
``action`` yet. Sources are telemetry: whatever their shape, they never refuse the turn or
the function calls beside them, and they reach the next request as they came.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from callgate import ToolResult
from callgate.openai_responses import (
    build_stateless_continuation,
    parse_response,
    parse_stream,
)

from .wire import Stream, fc_item, response, sse

SOURCES = [
    {"type": "url", "url": "https://weather.example/forecast?utm_source=openai"},
    {"type": "api", "name": "oai-weather"},
    {"type": "api", "name": "oai-finance"},
]
SEARCH = {
    "id": "ws_0b1", "type": "web_search_call", "status": "completed",
    "action": {"type": "search", "query": "weather: Helsinki, Finland",
               "queries": ["weather: Helsinki, Finland"], "sources": SOURCES},
}  # fmt: skip
CALL = fc_item("fc_1", "call_1", "get_forecast", '{"city":"Helsinki"}')
TOOLS = [{"type": "web_search"}, {"type": "function", "name": "get_forecast", "parameters": {}}]


def _stream() -> Stream:
    s = Stream("resp_ws").created()
    added = {key: SEARCH[key] for key in ("id", "type")} | {"status": "in_progress"}
    s.ev("response.output_item.added", output_index=0, item=added)  # no action yet
    for ping in ("in_progress", "searching", "completed"):
        s.ev(f"response.web_search_call.{ping}", output_index=0, item_id=SEARCH["id"])
    s.item_done(0, copy.deepcopy(SEARCH))
    s.call(1, CALL)
    return s.completed()


@pytest.mark.parametrize("baseline", ["2026-07-21", "2026-11"])
def test_api_sources_never_refuse_the_turn_or_its_calls(baseline: str) -> None:
    streamed = parse_stream(sse(_stream().events), baseline=baseline)
    body = response("resp_ws", "completed", [SEARCH, CALL])
    whole = parse_response(json.dumps(body), baseline=baseline, request={"tools": TOOLS})
    for turn in (streamed, whole):
        assert [(c.name, c.arguments) for c in turn.calls] == [
            ("get_forecast", {"city": "Helsinki"})
        ]
        assert [h.tool for h in turn.hosted_calls] == ["web_search_call"]
        assert turn.hosted_calls[0].raw["action"]["sources"] == SOURCES
        assert turn.warnings == ()
    assert streamed.items == whole.items


@pytest.mark.parametrize(
    "source",
    [{"type": "api"}, {"type": "api", "name": None}, {"name": "oai-news"}, "oai-weather", None],
)
def test_any_source_shape_is_kept_raw(source: Any) -> None:
    """Odder shapes than the API's are kept too: nothing in ``sources`` is a gate decision."""
    item = copy.deepcopy(SEARCH)
    item["action"]["sources"] = [source]
    turn = parse_response(response("resp_ws", "completed", [item, CALL]))
    assert [c.call_id for c in turn.calls] == ["call_1"]
    assert turn.hosted_calls[0].raw["action"]["sources"] == [source]


def test_api_sources_are_replayed_as_they_came() -> None:
    turn = parse_stream(sse(_stream().events))
    request = build_stateless_continuation(
        turn, [ToolResult("call_1", "sunny")], prior_input_items=[], store=False,
        model="m", instructions=None, tools=TOOLS,
    )  # fmt: skip
    replayed = [item for item in request["input"] if item.get("type") == "web_search_call"]
    assert [item["action"]["sources"] for item in replayed] == [SOURCES]
