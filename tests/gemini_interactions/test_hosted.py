"""Hosted steps and citations on Interactions: projection, pairing, byte offsets, parity.

Every fixture is checked both ways: streamed (payload in ``step.start`` and, where the
delta is pinned, in one delta after a bare start) and as the non-streamed create body
holding the same steps; the projections must be equal.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest

from callgate import (
    CallgateError,
    ContinuationError,
    ToolResult,
)
from callgate.gemini_interactions import (
    Turn,
    build_stateless_continuation,
    parse_interaction,
    parse_stream,
)
from callgate.gemini_interactions._hosted import PAIRS, PINNED

from .wire import completed, created, delta, fcall, sse, start, stop

Steps = list[dict[str, Any]]
TEXT = "Paris — capital of France."  # the dash is 3 UTF-8 bytes
PARIS_END = len(b"Paris")
FRANCE = TEXT.encode().index(b"France")


def url_citation(start_index: int, end_index: int, url: str = "https://a.example") -> dict:
    return {
        "type": "url_citation",
        "url": url,
        "title": "A",
        "start_index": start_index,
        "end_index": end_index,
    }


def answer(annotations: list[dict[str, Any]], text: str = TEXT) -> dict[str, Any]:
    block = {"type": "text", "text": text, "annotations": annotations}
    return {"type": "model_output", "content": [block]}


SEARCH: Steps = [
    {
        "type": "google_search_call",
        "id": "gs1",
        "arguments": {"queries": ["capital of France"]},
        "signature": "c2ln",
    },
    {
        "type": "google_search_result",
        "call_id": "gs1",
        "result": [{"search_suggestions": "<div>chips</div>"}],
        "signature": "c2lnMg==",
    },
    answer([url_citation(0, PARIS_END), url_citation(FRANCE, FRANCE + 6, "https://b.example")]),
]
CODE: Steps = [
    {
        "type": "code_execution_call",
        "id": "ce1",
        "arguments": {"code": "1/0", "language": "python"},
    },
    {
        "type": "code_execution_result",
        "call_id": "ce1",
        "result": "ZeroDivisionError",
        "is_error": True,
    },
    answer([]),
]
URLS: Steps = [
    {"type": "url_context_call", "id": "u1", "arguments": {"urls": ["https://a.example"]}},
    {
        "type": "url_context_result",
        "call_id": "u1",
        "result": [{"url": "https://a.example", "status": "success"}],
    },
    answer([url_citation(0, len(TEXT.encode()))]),
]
FILES: Steps = [
    {"type": "file_search_call", "id": "f1"},
    {"type": "file_search_result", "call_id": "f1"},
    answer(
        [
            {
                "type": "file_citation",
                "document_uri": "fileSearchStores/s/documents/d",
                "file_name": "d.pdf",
                "start_index": 0,
                "end_index": PARIS_END,
            },
            {"type": "file_citation", "file_name": "e.pdf"},
            {"type": "place_citation", "place_id": "places/x", "start_index": 0, "end_index": 0},
        ]
    ),
]
MAPS_MCP: Steps = [
    {"type": "google_maps_call", "id": "m1", "arguments": {"queries": ["cafe"]}},
    {"type": "google_maps_result", "call_id": "m1", "result": [{"places": []}]},
    {"type": "mcp_server_tool_call", "id": "p1", "name": "t", "server_name": "s", "arguments": {}},
    {"type": "mcp_server_tool_result", "call_id": "p1", "result": {"ok": True}},
]
FIXTURES = {"search": SEARCH, "code": CODE, "urls": URLS, "files": FILES, "maps_mcp": MAPS_MCP}
BASELINES = ("2026-11", "2026-07-21")


def stream_of(steps: Steps, *, as_deltas: bool = False, status: str = "completed") -> bytes:
    """The steps as a stream: payload in step.start, or (``as_deltas``) a bare start plus
    one delta per hosted step carrying its pinned fields, and text deltas for answers."""
    events: list[Any] = [created()]
    for index, step in enumerate(copy.deepcopy(steps)):
        kind = step["type"]
        if kind == "model_output":
            events.append(start(index, {"type": "model_output"}))
            for block in step["content"]:
                events.append(delta(index, {"type": "text", "text": block["text"]}))
                body = {"type": "text_annotation_delta", "annotations": block["annotations"]}
                events.append(delta(index, body))
        elif as_deltas and kind in PINNED:
            moved = {k: step.pop(k) for k in list(step) if k in PINNED[kind]}
            events.append(start(index, step))
            if moved:
                events.append(delta(index, {"type": kind, **moved}))
        else:
            events.append(start(index, step))
        events.append(stop(index))
    events.append(completed(status))
    return sse(events)


def body_of(steps: Steps, status: str = "completed") -> dict[str, Any]:
    return {"id": "int-1", "status": status, "steps": copy.deepcopy(steps)}


def projection(turn: Turn) -> tuple[Any, ...]:
    return turn.hosted_calls, turn.citations


@pytest.mark.parametrize("baseline", BASELINES)
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_stream_and_body_give_equal_projections(name: str, baseline: str) -> None:
    steps = FIXTURES[name]
    body = parse_interaction(body_of(steps), source="create", baseline=baseline)
    for as_deltas in (False, True):
        streamed = parse_stream(stream_of(steps, as_deltas=as_deltas), baseline=baseline)
        assert projection(streamed) == projection(body), (name, as_deltas)
        assert list(streamed.steps) == list(body.steps)
        assert streamed.opaque == ()
    assert len(body.hosted_calls) == sum(s["type"] in PAIRS for s in steps)
    assert body.calls == ()


def test_search_projection_pairs_call_and_result_and_keeps_byte_offsets() -> None:
    turn = parse_stream(stream_of(SEARCH))
    (call,) = turn.hosted_calls
    assert (call.tool, call.id, call.status) == ("google_search", "gs1", "completed")
    assert call.raw == {"call": SEARCH[0], "result": SEARCH[1]}
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
        ("url_citation", "https://a.example", 0, 5),
        ("url_citation", "https://b.example", FRANCE, FRANCE + 6),
    ]
    # byte offsets, not characters: the em dash shifts "France" by two
    assert TEXT.index("France") + 2 == FRANCE
    assert TEXT.encode()[FRANCE : FRANCE + 6] == b"France"


def test_statuses_and_sources_are_derived_from_the_wire_only() -> None:
    code = parse_interaction(body_of(CODE), source="create")
    assert code.hosted_calls[0].status == "failed"  # is_error: true
    unanswered = parse_interaction(body_of(CODE[:1]), source="create")
    assert unanswered.hosted_calls[0].status is None  # the turn says nothing of the outcome
    files = parse_interaction(body_of(FILES), source="create")
    assert [(c.kind, c.source, c.start) for c in files.citations] == [
        ("file_citation", "fileSearchStores/s/documents/d", 0),
        ("file_citation", "e.pdf", None),
        ("place_citation", "places/x", 0),
    ]


def test_speech_and_unknown_annotations_are_not_citations() -> None:
    speech = {"type": "speech_metadata", "speaker": "A", "start_index": 0, "end_index": 1}
    for baseline in BASELINES:
        turn = parse_interaction(body_of([answer([speech])]), source="create", baseline=baseline)
        assert (turn.citations, turn.warnings) == ((), ())
        assert turn.steps[0]["content"][0]["annotations"] == [speech]
    hologram = parse_stream(stream_of([answer([{"type": "hologram"}])]))
    assert (hologram.citations, hologram.warnings) == ((), ())


CALL = fcall("c1", "get_weather", {"city": "Paris"})


def _both(steps: Steps) -> tuple[Turn, Turn]:
    """The steps and a function call after them, streamed and as a create body."""
    steps = [*steps, CALL]
    streamed = parse_stream(stream_of(steps, status="requires_action"))
    body = parse_interaction(body_of(steps, "requires_action"), source="create")
    for turn in (streamed, body):
        assert [c.call_id for c in turn.calls] == ["c1"]
    return streamed, body


BROKEN_PAIRS = {
    "result without call": ([SEARCH[1]], "google_search_result 'gs1' answers no earlier"),
    "result before call": ([SEARCH[1], SEARCH[0]], "answers no earlier google_search_call"),
    "duplicate call id": ([SEARCH[0], SEARCH[0]], "duplicate hosted call id 'gs1'"),
    "second result": ([SEARCH[0], SEARCH[1], SEARCH[1]], "a second google_search_result"),
    "result of another tool": (
        [SEARCH[0], {**CODE[1], "call_id": "gs1"}],
        "answers a google_search_call step (another tool)",
    ),
    "hosted call without id": (
        [{k: v for k, v in SEARCH[0].items() if k != "id"}],
        "google_search_call step needs a non-empty string 'id'",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN_PAIRS))
def test_broken_hosted_pairing_is_a_warning_streamed_and_not(case: str) -> None:
    steps, warning = BROKEN_PAIRS[case]
    for turn in _both(steps):
        assert len(turn.warnings) == 1
        assert warning in turn.warnings[0]


OUT_OF_RANGE = {
    "end past the text": url_citation(0, len(TEXT.encode()) + 1),
    "start after end": url_citation(4, 3),
    "negative start": url_citation(-1, 3),
    "character count, not bytes": url_citation(len(TEXT) - 1, len(TEXT.encode()) + 1),
    "offset of another type": {**url_citation(0, 1), "start_index": "0"},
}


@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE))
def test_annotation_offsets_outside_their_text_are_none_and_a_warning(case: str) -> None:
    for turn in _both([answer([OUT_OF_RANGE[case]])]):
        assert [(c.source, c.start, c.end) for c in turn.citations] == [
            ("https://a.example", None, None)
        ]
        assert len(turn.warnings) == 1
        assert "is not inside its text: no offsets" in turn.warnings[0]


WRONG_TYPES = {
    "is_error": ([CODE[0], {**CODE[1], "is_error": "yes"}], "'is_error' is not a bool"),
    "signature": ([{**SEARCH[0], "signature": 7}], "'signature' is not a str"),
    "arguments": ([{**SEARCH[0], "arguments": ["q"]}], "'arguments' is not a JSON object"),
    "list result": ([SEARCH[0], {**SEARCH[1], "result": "r"}], "'result' is not a list"),
    "url": ([answer([{**url_citation(0, 1), "url": 3}])], "(url_citation) 'url' is not a string"),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_hosted_fields_of_another_type_are_kept_raw_with_a_warning(case: str) -> None:
    steps, warning = WRONG_TYPES[case]
    for turn in _both(steps):
        assert list(turn.steps[: len(steps)]) == steps
        assert len(turn.warnings) == 1
        assert warning in turn.warnings[0]


def test_code_execution_version_differences_are_kept_raw() -> None:
    # 2.12.1 types a code language "python" only and a result a string; both are kept raw
    # under either baseline (hosted steps never refuse a turn).
    bash = {**CODE[0], "arguments": {"code": "ls", "language": "bash"}}
    content = {**CODE[1], "result": [{"type": "text", "text": "ok"}]}
    for baseline in BASELINES:
        turn = parse_interaction(body_of([bash, content]), source="create", baseline=baseline)
        assert [(h.id, h.status) for h in turn.hosted_calls] == [("ce1", "failed")]
        assert turn.warnings == ()


def test_repeated_or_contradicting_hosted_deltas_make_the_step_opaque() -> None:
    bare = {"type": "url_context_call", "id": "u1"}
    first = {"type": "url_context_call", "arguments": {"urls": ["a"]}}
    second = {"type": "url_context_call", "arguments": {"urls": ["b"]}}
    events = [
        created(),
        start(0, bare),
        delta(0, first),
        delta(0, second),
        stop(0),
        completed("completed"),
    ]
    turn = parse_stream(sse(events))
    assert turn.opaque == (0,)
    assert "two url_context_call deltas set 'arguments'" in turn.opaque_reasons[0]
    same = [
        created(),
        start(0, bare),
        delta(0, first),
        delta(0, first),
        stop(0),
        completed("completed"),
    ]
    assert parse_stream(sse(same)).opaque == ()  # a repeated equal value adds nothing
    started = {**bare, "arguments": {"urls": ["a"]}}
    events = [created(), start(0, started), delta(0, second), stop(0), completed("completed")]
    turn = parse_stream(sse(events))
    assert turn.opaque_reasons == (
        "url_context_call has 'arguments' in step.start and a different one in a delta",
    )


# -- the stateless builder ---------------------------------------------------------------

USER = {"type": "user_input", "content": [{"type": "text", "text": "weather in Paris?"}]}
TOOLS = [{"type": "function", "name": "get_weather"}, {"type": "google_search"}]


def _continue(turn: Turn, prior: Steps | None = None) -> dict[str, Any]:
    return build_stateless_continuation(
        turn,
        [ToolResult("c1", "sunny")],
        snapshot_source=turn.origin,
        prior_input_steps=prior or [USER],
        model="m",
        tools=TOOLS,
    )


def test_stateless_replay_keeps_hosted_steps_their_signatures_and_annotations() -> None:
    steps = [*SEARCH, fcall("c1", "get_weather", {"city": "Paris"})]
    for turn in (
        parse_stream(stream_of(steps, status="requires_action")),
        parse_stream(stream_of(steps, as_deltas=True, status="requires_action")),
        parse_interaction(body_of(steps, "requires_action"), source="create"),
    ):
        sent = _continue(turn)["input"]
        assert sent[1:5] == steps
        assert sent[-1] == {
            "type": "function_result",
            "call_id": "c1",
            "name": "get_weather",
            "result": "sunny",
        }


def test_stateless_replay_refuses_a_history_whose_hosted_pairs_are_broken() -> None:
    steps = [SEARCH[1], fcall("c1", "get_weather", {})]
    turn = parse_interaction(
        body_of([fcall("c1", "get_weather", {})], "requires_action"), source="create"
    )
    with pytest.raises(ContinuationError, match="answers no earlier google_search_call"):
        _continue(turn, [USER, *steps[:1]])


def test_no_hosted_error_escapes_as_a_bare_exception() -> None:
    hostile: list[Any] = [
        {"type": "google_search_result", "call_id": "x", "result": [None]},
        answer([None]),  # type: ignore[list-item]
        answer([{"type": ["url_citation"]}]),
        {"type": "model_output", "content": [{"type": "text", "annotations": []}]},
    ]
    for step in hostile:
        with contextlib.suppress(CallgateError):  # anything else fails the test
            parse_interaction(body_of([step]), source="create")


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_hosted_streams_parse_the_same_at_any_chunking(name: str) -> None:
    data = stream_of(FIXTURES[name], as_deltas=True)
    whole = parse_stream(data)
    for size in (1, 7):
        pieces = [data[i : i + size] for i in range(0, len(data), size)]
        turn = parse_stream(pieces)
        assert projection(turn) == projection(whole)
        assert turn.digest == whole.digest


def test_a_hosted_call_id_of_another_type_is_a_warning_not_a_crash() -> None:
    steps = [{**SEARCH[0], "id": ["gs1"]}, {**SEARCH[1], "call_id": {"id": "gs1"}}]
    for turn in _both(steps):
        assert [(h.tool, h.id, h.status) for h in turn.hosted_calls] == [
            ("google_search", None, None)
        ]
        assert len(turn.warnings) == 3  # two ids of another type, one unpaired result
