"""Hosted tools in the Responses gate: projection, lifecycle, release, parity, builders.

Streams come from the room's writer seam (the mock's renderer) and are then broken on
purpose; every broken stream must fail with the typed error that names the problem.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import (
    BindingError,
    Citation,
    ContinuationError,
    HostedCall,
    LimitExceededError,
    Limits,
    SchemaError,
    SequenceError,
    ToolResult,
    UsageError,
)
from callgate.contracts import load_fixtures
from callgate.openai_responses import (
    Parser,
    _render,
    build_stateful_continuation,
    build_stateless_continuation,
    parse_response,
    parse_stream,
)
from callgate.openai_responses._render import encode_sse

Event = dict[str, Any]

WS = {"id": "ws_1", "type": "web_search_call", "status": "completed",
      "action": {"type": "search", "query": "paris weather",
                 "sources": [{"type": "url", "url": "https://example.com/w"}]}}  # fmt: skip
OPEN = {"id": "ws_2", "type": "web_search_call", "status": "completed",
        "action": {"type": "open_page", "url": "https://example.com/w"}}  # fmt: skip
FIND = {"id": "ws_3", "type": "web_search_call", "status": "completed",
        "action": {"type": "find_in_page", "url": "https://example.com/w",
                   "pattern": "sun"}}  # fmt: skip
FS = {"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["policy"],
      "results": [{"file_id": "file-1", "filename": "p.md", "score": 0.75, "text": "t",
                   "attributes": {"team": "a", "year": 2026, "public": True}}]}  # fmt: skip
CI = {"id": "ci_1", "type": "code_interpreter_call", "status": "completed",
      "container_id": "cntr_1", "code": "import math\nprint(math.pi)",
      "outputs": [{"type": "logs", "logs": "3.14159"},
                  {"type": "image", "url": "https://x/i.png"}]}  # fmt: skip
TEXT = "Paris is sunny per the policy; see the plot. Done."
ANNOTATIONS = [
    {"type": "url_citation", "url": "https://example.com/w", "title": "W",
     "start_index": 0, "end_index": 14},
    {"type": "file_citation", "file_id": "file-1", "filename": "p.md", "index": 29},
    {"type": "container_file_citation", "container_id": "cntr_1", "file_id": "cfile_1",
     "filename": "plot.png", "start_index": 31, "end_index": 43},
    {"type": "file_path", "file_id": "cfile_1", "index": 0},
]  # fmt: skip
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
        "arguments": '{"city":"Paris"}'}  # fmt: skip
TOOLS = [
    {"type": "web_search"},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "code_interpreter", "container": {"type": "auto"}},
    {"type": "function", "name": "get_weather", "parameters": None, "strict": None},
]
REQUEST = {"model": "m", "tools": TOOLS}


def hosted(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": item["type"], "item": item}


def message(text: str = TEXT, annotations: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "text": text,
            "annotations": ANNOTATIONS if annotations is None else annotations}  # fmt: skip


FIXTURES = {
    "web_search": [hosted(WS), message(TEXT, ANNOTATIONS[:1])],
    "web_actions": [hosted(WS), hosted(OPEN), hosted(FIND), message(TEXT, ANNOTATIONS[:1])],
    "file_search": [hosted(FS), message(TEXT, ANNOTATIONS[1:2])],
    "code_interpreter": [hosted(CI), message(TEXT, ANNOTATIONS[2:])],
    "mixed_with_call": [hosted(WS), hosted(FS), hosted(CI), message(), CALL],
    "no_results": [hosted({**FS, "results": None}), hosted({**CI, "outputs": None}), message()],
}


def pieces(size: int) -> Callable[[str], list[str]]:
    return lambda text: [text[i : i + size] for i in range(0, len(text), size)]


def events(items: list[dict[str, Any]], size: int = 4, status: str = "completed") -> list[Event]:
    return _render.render_events(
        response_id="resp_h", model="m", items=items, split=pieces(size), status=status
    )


def body(items: list[dict[str, Any]]) -> dict[str, Any]:
    return _render.render_body(response_id="resp_h", model="m", items=items)


def feed(evs: list[Event], request: dict[str, Any] | None = None) -> Any:
    parser = Parser(request=request)
    for event in evs:
        parser.feed_event(event)
    return parser.finish()


def feed_all(parser: Parser, evs: list[Event]) -> None:
    for event in evs:
        parser.feed_event(event)


# -- projection and parity --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_stream_and_body_give_equal_projections(name: str, size: int) -> None:
    items = FIXTURES[name]
    streamed = parse_stream(encode_sse(events(items, size)), request=REQUEST)
    whole = parse_response(body(items), request=REQUEST)
    fed = feed(events(items, size), REQUEST)
    assert streamed.hosted_calls == whole.hosted_calls == fed.hosted_calls
    assert streamed.citations == whole.citations == fed.citations
    assert streamed.items == whole.items
    hosted_items = [s["item"] for s in items if "item" in s]
    assert [h.raw for h in streamed.hosted_calls] == hosted_items
    assert all(isinstance(h, HostedCall) for h in streamed.hosted_calls)


def test_hosted_calls_carry_the_provider_type_id_and_status() -> None:
    turn = parse_response(body(FIXTURES["mixed_with_call"]))
    assert [(h.tool, h.id, h.status) for h in turn.hosted_calls] == [
        ("web_search_call", "ws_1", "completed"),
        ("file_search_call", "fs_1", "completed"),
        ("code_interpreter_call", "ci_1", "completed"),
    ]


def test_citations_keep_the_providers_offsets_and_sources() -> None:
    turn = parse_response(body(FIXTURES["mixed_with_call"]))
    assert turn.citations == (
        Citation(kind="url_citation", source="https://example.com/w", start=0, end=14,
                 raw=ANNOTATIONS[0]),
        Citation(kind="file_citation", source="file-1", start=29, end=None, raw=ANNOTATIONS[1]),
        Citation(kind="container_file_citation", source="cfile_1", start=31, end=43,
                 raw=ANNOTATIONS[2]),
        Citation(kind="file_path", source="cfile_1", start=None, end=None, raw=ANNOTATIONS[3]),
    )  # fmt: skip
    assert turn.text[0:14] == "Paris is sunny"
    assert turn.text[31:43] == "see the plot"


def test_a_mixed_turn_releases_only_the_function_calls() -> None:
    turn = parse_stream(encode_sse(events(FIXTURES["mixed_with_call"])), request=REQUEST)
    assert [c.call_id for c in turn.calls] == ["call_1"]
    assert {h.id for h in turn.hosted_calls}.isdisjoint({c.item_id for c in turn.calls})


def test_annotations_are_streamed_after_the_text_that_covers_them() -> None:
    evs = events(FIXTURES["code_interpreter"], size=5)
    streamed = 0
    for event in evs:
        if event["type"] == "response.output_text.delta":
            streamed += len(event["delta"])
        if event["type"] == "response.output_text.annotation.added":
            annotation = event["annotation"]
            end = annotation.get("end_index", len(TEXT) if annotation["type"] == "file_path" else 0)
            assert streamed >= end


# -- failed hosted items are a stop, never hidden ---------------------------------------------


@pytest.mark.parametrize("status", ["failed", "incomplete"])
def test_a_failed_hosted_item_stops_the_turns_calls(status: str) -> None:
    items = [hosted({**WS, "status": status}), message(TEXT, []), CALL]
    for run in (
        lambda: parse_stream(encode_sse(events(items))),
        lambda: parse_response(body(items)),
    ):
        with pytest.raises(SequenceError, match=f"has status '{status}'") as info:
            run()
        assert info.value.turn is not None
        assert info.value.turn.calls == ()
        assert [h.status for h in info.value.turn.hosted_calls] == [status]


def test_a_failed_hosted_item_without_calls_is_surfaced_with_its_status() -> None:
    items = [hosted({**FS, "status": "failed", "results": None}), message(TEXT, [])]
    for turn in (parse_stream(encode_sse(events(items))), parse_response(body(items))):
        assert turn.calls == ()
        assert [(h.tool, h.status) for h in turn.hosted_calls] == [("file_search_call", "failed")]


def test_a_failed_item_gets_no_completed_ping() -> None:
    evs = events([hosted({**WS, "status": "failed"}), message(TEXT, [])])
    kinds = [e["type"] for e in evs if e["type"].startswith("response.web_search_call.")]
    assert kinds == ["response.web_search_call.in_progress", "response.web_search_call.searching"]


# -- undeclared hosted tools ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "tool"),
    [(WS, "web_search"), (FS, "file_search"), (CI, "code_interpreter")],
)
def test_an_undeclared_hosted_tool_is_a_sequence_error_when_the_request_is_given(
    item: dict[str, Any], tool: str
) -> None:
    items = [hosted(item), message(TEXT, [])]
    others = {"model": "m", "tools": [t for t in TOOLS if t["type"] != tool]}
    with pytest.raises(SequenceError, match="the request declared none of"):
        parse_stream(encode_sse(events(items)), request=others)
    with pytest.raises(SequenceError, match="the request declared none of"):
        parse_response(body(items), request=others)
    assert parse_stream(encode_sse(events(items))).hosted_calls  # no request: not checked
    assert parse_response(body(items), request=REQUEST).hosted_calls


def test_any_web_search_variant_declares_web_search_calls() -> None:
    items = [hosted(WS), message(TEXT, [])]
    for variant in ("web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"):
        assert parse_response(body(items), request={"tools": [{"type": variant}]}).hosted_calls


@pytest.mark.parametrize("request_", [[], {"tools": {}}, {"tools": [{"name": "x"}]}])
def test_a_malformed_request_is_a_usage_error(request_: Any) -> None:
    with pytest.raises(UsageError):
        Parser(request=request_)
    with pytest.raises(UsageError):
        parse_response(body([message(TEXT, [])]), request=request_)


# -- lifecycle of hosted items ----------------------------------------------------------------


def _index(evs: list[Event], kind: str) -> int:
    return next(i for i, e in enumerate(evs) if e["type"] == kind)


def _renumber(evs: list[Event]) -> list[Event]:
    return [{**e, "sequence_number": n} for n, e in enumerate(evs)]


def _swap(evs: list[Event], a: str, b: str) -> list[Event]:
    out = copy.deepcopy(evs)
    i, j = _index(out, a), _index(out, b)
    out[i], out[j] = out[j], out[i]
    return _renumber(out)


def test_status_pings_out_of_order_are_refused() -> None:
    evs = _swap(
        events([hosted(WS), message(TEXT, [])]),
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
    )
    with pytest.raises(SequenceError, match="status 'in_progress' after 'searching'"):
        feed(evs)


def test_a_repeated_ping_is_refused() -> None:
    evs = events([hosted(FS), message(TEXT, [])])
    at = _index(evs, "response.file_search_call.searching")
    with pytest.raises(SequenceError):
        feed(_renumber([*evs[: at + 1], evs[at], *evs[at + 1 :]]))


def test_a_ping_after_completed_is_refused() -> None:
    evs = events([hosted(FS), message(TEXT, [])])
    at = _index(evs, "response.file_search_call.completed")
    with pytest.raises(SequenceError, match="after the tool completed"):
        feed(_renumber([*evs[: at + 1], evs[at], *evs[at + 1 :]]))


def test_a_completed_ping_then_a_failed_item_is_refused() -> None:
    evs = events([hosted(WS), message(TEXT, [])])
    for event in evs:
        if event["type"] == "response.output_item.done" and event["item"]["id"] == "ws_1":
            event["item"]["status"] = "failed"
    with pytest.raises(SequenceError, match="pinged completed"):
        feed(evs)


def test_a_ping_for_another_tools_item_is_refused() -> None:
    evs = events([hosted(WS), message(TEXT, [])])
    at = _index(evs, "response.web_search_call.searching")
    evs[at]["type"] = "response.file_search_call.searching"
    with pytest.raises(SequenceError, match="addresses a 'web_search_call' item"):
        feed(evs)


def test_a_hosted_item_whose_results_change_at_the_terminal_is_refused() -> None:
    evs = events([hosted(FS), message(TEXT, [])])
    evs[-1]["response"]["output"][0]["results"][0]["score"] = 0.1
    with pytest.raises(SequenceError, match=r"differs from its output_item\.done"):
        feed(evs)


# Hosted-tool details are telemetry (docs/required-fields.md): each of these real-shaped
# variants (a field absent, a shape the SDK types do not list) parses, keeps the item raw
# and releases the call beside it.
TELEMETRY_VARIANTS = [
    {k: v for k, v in WS.items() if k != "action"},
    {**WS, "action": None},
    {**WS, "action": {"type": "browse"}},
    {**WS, "action": {"type": "search", "sources": [{"url": 1}]}},
    {k: v for k, v in FS.items() if k != "queries"},
    {**FS, "queries": [1]},
    {**FS, "results": [{"score": "high"}]},
    {**FS, "results": [{"attributes": {"k": [1]}}]},
    {**FS, "results": ["file-1"]},
    {k: v for k, v in CI.items() if k != "container_id"},
    {**CI, "outputs": "logs"},
    {**CI, "outputs": [{"type": "logs", "logs": 3}]},
    {**CI, "outputs": [{"type": "video", "url": "u"}]},
]


@pytest.mark.parametrize("item", TELEMETRY_VARIANTS)
def test_hosted_tool_details_never_refuse_a_turn(item: dict[str, Any]) -> None:
    turn = parse_response(body([hosted(item), message(TEXT, []), CALL]))
    assert [c.call_id for c in turn.calls] == ["call_1"]
    assert turn.hosted_calls[0].raw == item
    assert turn.hosted_calls[0].status == "completed"


@pytest.mark.parametrize("item", [WS, FS, CI], ids=lambda i: i["type"])
def test_a_hosted_item_added_bare_releases_the_call_beside_it(item: dict[str, Any]) -> None:
    # The API sends a hosted item in output_item.added as {id, type, status} only (a web
    # search's `action` arrives filled in on .done): the added item is partial.
    evs = events([hosted(item), message(TEXT, []), CALL])
    added = next(e for e in evs if e["type"] == "response.output_item.added")
    added["item"] = {"id": item["id"], "type": item["type"], "status": "in_progress"}
    for turn in (feed(evs, REQUEST), parse_stream(encode_sse(evs), request=REQUEST)):
        assert [c.call_id for c in turn.calls] == ["call_1"]
        assert turn.hosted_calls[0].raw == item
    del added["item"]["status"]
    assert [c.call_id for c in feed(evs, REQUEST).calls] == ["call_1"]


def test_a_done_hosted_item_without_a_status_is_refused() -> None:
    # The status is what the gate reads: a hosted tool that did not complete stops the
    # turn's calls, so a done hosted item must say how it ended.
    for item in (WS, FS, CI):
        bare = {k: v for k, v in item.items() if k != "status"}
        with pytest.raises(SchemaError, match="lacks required field 'status'"):
            parse_response(body([hosted(bare), message(TEXT, [])]))


def test_a_hosted_status_callgate_does_not_know_parses_and_stops_the_calls() -> None:
    odd = {**WS, "status": "done"}
    assert parse_response(body([hosted(odd), message(TEXT, [])])).hosted_calls[0].status == "done"
    with pytest.raises(SequenceError, match="has status 'done'"):
        parse_response(body([hosted(odd), message(TEXT, []), CALL]))


# -- code interpreter code deltas -------------------------------------------------------------


def test_code_deltas_are_assembled_into_the_done_code() -> None:
    evs = events([hosted(CI), message(TEXT, [])], size=1)
    deltas = [e for e in evs if e["type"] == "response.code_interpreter_call_code.delta"]
    assert len(deltas) == len(CI["code"])
    assert feed(evs).hosted_calls[0].raw["code"] == CI["code"]


def test_code_done_that_differs_from_the_deltas_is_refused() -> None:
    evs = events([hosted(CI), message(TEXT, [])])
    evs[_index(evs, "response.code_interpreter_call_code.done")]["code"] = "print(0)"
    with pytest.raises(SequenceError, match="differs from the deltas"):
        feed(evs)


def test_code_delta_after_interpreting_is_refused() -> None:
    evs = events([hosted(CI), message(TEXT, [])])
    delta = evs[_index(evs, "response.code_interpreter_call_code.delta")]
    at = _index(evs, "response.code_interpreter_call.interpreting")
    with pytest.raises(SequenceError, match="after the interpreter started"):
        feed(_renumber([*evs[: at + 1], delta, *evs[at + 1 :]]))


def test_code_deltas_are_bounded_by_max_text_chars() -> None:
    evs = events([hosted(CI), message(TEXT, [])], size=1)
    parser = Parser(limits=Limits(max_text_chars=5))
    with pytest.raises(LimitExceededError):
        feed_all(parser, evs)


# -- streamed annotations ---------------------------------------------------------------------


def _annotation_events(evs: list[Event]) -> list[int]:
    return [i for i, e in enumerate(evs) if e["type"] == "response.output_text.annotation.added"]


def test_a_streamed_annotation_that_differs_from_the_part_is_a_warning() -> None:
    evs = events([hosted(WS), message(TEXT, ANNOTATIONS[:1]), CALL])
    evs[_annotation_events(evs)[0]]["annotation"]["end_index"] = 3
    turn = feed(evs)
    assert turn.warnings == ("content_part.done annotations differ from the streamed ones",)
    assert [c.call_id for c in turn.calls] == ["call_1"]
    assert turn.citations[0].end == 14  # the done part's annotation is the turn's
    # Warnings are not digested: the body of the same Response, without them, seals alike.
    body = parse_response(turn.response)
    assert (body.warnings, body.digest) == ((), turn.digest)


def test_a_dropped_annotation_is_a_warning() -> None:
    evs = events([hosted(WS), hosted(FS), hosted(CI), message()])
    at = _annotation_events(evs)[1]
    turn = feed(_renumber(evs[:at] + evs[at + 1 :]))
    assert turn.warnings == (
        "annotation_index 2 where 1 was next",
        "annotation_index 3 where 2 was next",
        "content_part.done annotations differ from the streamed ones",
    )
    assert (
        turn.citations
        == parse_response(body([hosted(WS), hosted(FS), hosted(CI), message()])).citations
    )


def test_a_null_streamed_annotation_holds_its_place() -> None:
    evs = events([hosted(WS), message(TEXT, ANNOTATIONS[:1])])
    evs[_annotation_events(evs)[0]]["annotation"] = None
    assert feed(evs).citations[0].source == "https://example.com/w"


def test_an_unknown_annotation_type_is_a_citation_without_source_or_offsets() -> None:
    odd = [{"type": "page_citation", "page": 3}]
    for turn in (
        parse_response(body([message(TEXT, odd), CALL])),
        feed(events([message(TEXT, odd), CALL])),
    ):
        assert [(c.kind, c.source, c.start, c.end, c.raw) for c in turn.citations] == [
            ("page_citation", None, None, None, odd[0])
        ]
        assert turn.warnings == ()
        assert len(turn.calls) == 1


def test_an_annotation_missing_a_field_is_a_warning_and_none_in_the_projection() -> None:
    broken = [{k: v for k, v in ANNOTATIONS[0].items() if k != "url"}]
    turn = parse_response(body([hosted(WS), message(TEXT, broken), CALL]))
    assert turn.warnings == (
        "output item 1 content 0 annotation 0 (url_citation) lacks a str 'url'",
    )
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
        ("url_citation", None, 0, 14)
    ]
    assert len(turn.calls) == 1
    streamed = feed(events([hosted(WS), message(TEXT, broken), CALL]))
    assert streamed.citations == turn.citations
    assert (
        "output item 1 content 0 annotation 0 (url_citation) lacks a str 'url'" in streamed.warnings
    )


def test_annotations_that_are_no_citations_are_skipped_with_a_warning() -> None:
    turn = parse_response(body([message(TEXT, ["cite", {"url": "u"}]), CALL]))
    assert turn.citations == ()
    assert turn.warnings == (
        "output item 0 content 0 annotation 0 is not an object",
        "output item 0 content 0 annotation 1 has no string 'type'",
    )
    assert len(turn.calls) == 1


# -- builders ---------------------------------------------------------------------------------

RESULT = [ToolResult("call_1", '{"temp":21}')]


def test_stateless_replays_hosted_items_unchanged_and_in_order() -> None:
    turn = parse_stream(encode_sse(events(FIXTURES["mixed_with_call"])), request=REQUEST)
    prior = [{"role": "user", "content": "weather?"}]
    request = build_stateless_continuation(
        turn, RESULT, prior_input_items=prior, store=False, model="m",
        instructions=None, tools=TOOLS,
    )  # fmt: skip
    replay = request["input"][1:-1]
    assert replay == list(turn.items)
    assert [i.get("id") for i in replay] == ["ws_1", "fs_1", "ci_1", "msg_1", "fc_1"]
    assert replay[3]["content"][0]["annotations"] == ANNOTATIONS
    assert request["input"][-1] == {"type": "function_call_output", "call_id": "call_1",
                                    "output": '{"temp":21}'}  # fmt: skip
    assert request["tools"] == TOOLS  # re-sent exactly as the caller chose


def test_stateful_sends_only_the_results() -> None:
    turn = parse_response(body(FIXTURES["mixed_with_call"]), request=REQUEST)
    request = build_stateful_continuation(
        turn, RESULT, previous_response_was_stored=True, store=True, model="m",
        instructions=None, tools=TOOLS,
    )  # fmt: skip
    assert request["previous_response_id"] == "resp_h"
    assert request["input"] == [{"type": "function_call_output", "call_id": "call_1",
                                 "output": '{"temp":21}'}]  # fmt: skip


def test_a_hosted_item_mutated_after_parsing_is_refused_by_the_builders() -> None:
    turn = parse_response(body(FIXTURES["mixed_with_call"]))
    turn.hosted_calls[0].raw["action"]["query"] = "edited"
    with pytest.raises(ContinuationError, match="mutated"):
        build_stateless_continuation(
            turn, RESULT, prior_input_items=[], store=False, model="m",
            instructions=None, tools=TOOLS,
        )  # fmt: skip


def test_a_hosted_id_cannot_be_answered_as_a_call() -> None:
    turn = parse_response(body(FIXTURES["mixed_with_call"]))
    with pytest.raises(BindingError, match="ws_1"):
        build_stateful_continuation(
            turn, [ToolResult("ws_1", "x")], previous_response_was_stored=True, store=True,
            model="m", instructions=None, tools=TOOLS,
        )  # fmt: skip


# -- the recorded golden fixtures with hosted items -------------------------------------------

GOLDEN = [
    f
    for f in load_fixtures(Path(__file__).resolve().parent.parent / "fixtures" / "openai_responses")
    if f.name in ("text_with_citation", "code_interpreter_then_call")
]


@pytest.mark.parametrize("fixture", GOLDEN, ids=lambda f: f.name)
def test_golden_hosted_fixtures_project_the_same_streamed_and_whole(fixture: Any) -> None:
    streamed = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert streamed.response is not None
    whole = parse_response(streamed.response, baseline=fixture.contract_revision)
    assert streamed.hosted_calls
    assert streamed.hosted_calls == whole.hosted_calls
    assert streamed.citations == whole.citations
    assert {h.id for h in streamed.hosted_calls}.isdisjoint({c.item_id for c in streamed.calls})


def test_both_golden_hosted_fixtures_are_present() -> None:
    assert sorted(f.name for f in GOLDEN) == ["code_interpreter_then_call", "text_with_citation"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=40))
def test_any_byte_split_of_a_hosted_stream_gives_the_same_projection(cuts: list[int]) -> None:
    data = encode_sse(events(FIXTURES["mixed_with_call"], size=2))
    whole = parse_stream(data)
    chunks, at = [], 0
    for cut in cuts:
        chunks.append(data[at : at + cut])
        at += cut
    chunks.append(data[at:])
    split = parse_stream(chunks)
    assert (split.hosted_calls, split.citations, split.calls) == (
        whole.hosted_calls,
        whole.citations,
        whole.calls,
    )


def test_an_incomplete_web_search_parses_under_both_baselines() -> None:
    # openai 2.46.0 types no "incomplete" web search; the status is kept raw all the same
    # and, being no "completed", stops the calls beside it under either baseline.
    items = [hosted({**WS, "status": "incomplete"}), message(TEXT, [])]
    for baseline in ("2026-07-21", "2026-11"):
        assert parse_response(body(items), baseline=baseline).hosted_calls[0].status == "incomplete"
        assert (
            parse_stream(encode_sse(events(items)), baseline=baseline).hosted_calls[0].status
            == "incomplete"
        )
        with pytest.raises(SequenceError, match="status 'incomplete'"):
            parse_response(body([*items, CALL]), baseline=baseline)
