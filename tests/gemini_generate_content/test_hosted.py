"""Hosted tools on generateContent: code execution, server-side tool invocations, grounding
and URL context become ``turn.hosted_calls`` and ``turn.citations``; grounding streams under
the pinned cumulative rule; supports are checked against the turn; the builder replays
hosted parts exactly, signatures included."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import (
    Citation,
    ContinuationError,
    HostedCall,
    SchemaError,
    ToolResult,
    TruncatedStreamError,
)
from callgate.gemini_generate_content import (
    Parser,
    Turn,
    build_continuation,
    parse_response,
    parse_stream,
)
from callgate.gemini_generate_content._render import encode_sse, render_body, render_events

ANSWER = "Ça coûte 5 €. Spain won Euro 2024."  # multi-byte characters before the cited text
FIRST = "Ça coûte 5 €."
SECOND = "Spain won Euro 2024."
START2 = len((FIRST + " ").encode())
SIG = "c2lnLWhvc3RlZA=="
CODE = {"executableCode": {"language": "PYTHON", "code": "print(2+3)", "id": "c1"}}
RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5\n", "id": "c1"}}


def _grounding(part_index: int = 2) -> dict[str, Any]:
    return {
        "webSearchQueries": ["euro 2024 winner", "price"],
        "searchEntryPoint": {"renderedContent": "<div>chips</div>"},
        "groundingChunks": [
            {"web": {"uri": "https://example.com/uefa", "title": "uefa.com"}},
            {
                "retrievedContext": {
                    "uri": "https://files.example/doc1",
                    "title": "prices.pdf",
                    "text": "5 euros",
                    "fileSearchStore": "fileSearchStores/s1",
                }
            },
        ],
        "groundingSupports": [
            {
                "segment": {
                    "partIndex": part_index,
                    "endIndex": len(FIRST.encode()),
                    "text": FIRST,
                },
                "groundingChunkIndices": [1],
                "confidenceScores": [0.8],
            },
            {
                "segment": {
                    "partIndex": part_index,
                    "startIndex": START2,
                    "endIndex": START2 + len(SECOND.encode()),
                    "text": SECOND,
                },
                "groundingChunkIndices": [0, 1],
            },
        ],
    }


URLS = {
    "urlMetadata": [
        {
            "retrievedUrl": "https://example.com/a",
            "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
        },
        {
            "retrievedUrl": "https://example.com/b",
            "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_PAYWALL",
        },
    ]
}


def _parts() -> list[dict[str, Any]]:
    deltas = ["Ça co", "ûte 5 €.", " Spain won", " Euro 2024."]
    return [
        {"raw": CODE},
        {"raw": RESULT},
        {"text": ANSWER, "deltas": deltas},
        {"text": "", "signature": SIG},
    ]


def _extra() -> dict[str, Any]:
    return {"groundingMetadata": _grounding(), "urlContextMetadata": URLS}


def _body() -> Turn:
    return parse_response(render_body(parts=_parts(), candidate_extra=_extra()))


def _stream(data: bytes) -> Turn:
    return parse_stream(data)


def _projection(turn: Turn) -> tuple[Any, ...]:
    return turn.hosted_calls, turn.citations, turn.parts, turn.candidate, turn.digest


def test_body_projects_code_search_file_search_and_url_context() -> None:
    turn = _body()
    assert turn.calls == ()
    assert turn.hosted_calls == (
        HostedCall(tool="codeExecution", id="c1", status="OUTCOME_OK", raw=(CODE, RESULT)),
        HostedCall(tool="googleSearch", id=None, status=None, raw="euro 2024 winner"),
        HostedCall(tool="googleSearch", id=None, status=None, raw="price"),
        HostedCall(
            tool="fileSearch",
            id=None,
            status=None,
            raw=(_grounding()["groundingChunks"][1],),
        ),
        HostedCall(
            tool="urlContext",
            id=None,
            status="URL_RETRIEVAL_STATUS_SUCCESS",
            raw=URLS["urlMetadata"][0],
        ),
        HostedCall(
            tool="urlContext",
            id=None,
            status="URL_RETRIEVAL_STATUS_PAYWALL",
            raw=URLS["urlMetadata"][1],
        ),
    )
    supports = _grounding()["groundingSupports"]
    end2 = START2 + len(SECOND.encode())
    assert turn.citations == (
        Citation(kind="retrievedContext", source="https://files.example/doc1", start=0,
                 end=len(FIRST.encode()), raw=supports[0]),
        Citation(kind="web", source="https://example.com/uefa", start=START2, end=end2,
                 raw=supports[1]),
        Citation(kind="retrievedContext", source="https://files.example/doc1", start=START2,
                 end=end2, raw=supports[1]),
    )  # fmt: skip
    text = turn.parts[2]["text"].encode()
    assert text[START2:end2].decode() == SECOND  # offsets are UTF-8 bytes, end exclusive
    assert len(FIRST) != len(FIRST.encode())  # ...and not characters


def test_stream_equals_body_whole_and_byte_by_byte() -> None:
    events = render_events(parts=_parts(), candidate_extra=_extra(), chunk_plan=[1, 1, 2, 2, 1])
    data = encode_sse(events)
    body = _body()
    whole = _stream(data)
    parser = Parser()
    for i in range(len(data)):
        parser.feed_bytes(data[i : i + 1])
    by_byte = parser.finish()
    for turn in (whole, by_byte):
        assert turn.hosted_calls == body.hosted_calls
        assert turn.citations == body.citations
        assert turn.parts == body.parts


def _chunks_with(metadata: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The streamed turn, one chunk per wire part, ``metadata[n]`` on chunk ``n``."""
    events = render_events(parts=_parts())
    assert len(events) == len(metadata)
    for event, extra in zip(events, metadata, strict=True):
        if extra is not None:
            event["candidates"][0]["groundingMetadata"] = extra
    return events


def _feed(events: list[dict[str, Any]]) -> Turn:
    parser = Parser()
    for event in events:
        parser.feed_event(copy.deepcopy(event))
    return parser.finish()


def _count() -> int:
    return len(render_events(parts=_parts()))


def test_grounding_on_the_last_chunk_only() -> None:
    n = _count()
    turn = _feed(_chunks_with([None] * (n - 1) + [_grounding()]))
    assert turn.citations == _body().citations


def test_grounding_on_an_early_chunk_only() -> None:
    """vercel/ai#13123: some models send it early and not on the finishReason chunk (the
    support is checked at the end, against the whole turn)."""
    n = _count()
    turn = _feed(_chunks_with([_grounding()] + [None] * (n - 1)))
    assert turn.citations == _body().citations


def test_grounding_field_by_field_then_cumulative() -> None:
    """Queries early, chunks and supports later, the accumulated value re-sent."""
    full = _grounding()
    early = {"webSearchQueries": full["webSearchQueries"][:1]}
    middle = {
        "webSearchQueries": full["webSearchQueries"],
        "groundingChunks": full["groundingChunks"][:1],
    }
    n = _count()
    turn = _feed(_chunks_with([early, middle] + [None] * (n - 3) + [full]))
    assert turn.hosted_calls == _body().hosted_calls[:4]
    assert turn.citations == _body().citations
    assert turn.candidate["groundingMetadata"] == full


def test_a_field_null_before_is_filled_by_a_later_chunk() -> None:
    n = _count()
    early = {"searchEntryPoint": None, "groundingChunks": []}
    turn = _feed(_chunks_with([early] + [None] * (n - 2) + [_grounding()]))
    assert turn.candidate["groundingMetadata"] == _grounding()
    assert turn.citations == _body().citations


@pytest.mark.parametrize("nothing", [[], None])
def test_a_chunk_resending_nothing_keeps_what_came_before(nothing: Any) -> None:
    n = _count()
    later = {"groundingChunks": nothing, "searchEntryPoint": None}
    turn = _feed(_chunks_with([_grounding()] + [None] * (n - 2) + [later]))
    assert turn.citations == _body().citations
    assert turn.candidate["groundingMetadata"] == _grounding()


def test_incremental_grounding_chunks_are_a_warning_and_the_later_list_is_kept() -> None:
    """A list re-sent that does not extend the earlier one would be incremental delivery,
    whose indices nobody pins: the turn says so and keeps the later list (grounding is
    telemetry; it never refuses a turn)."""
    full = _grounding()
    first = {"groundingChunks": full["groundingChunks"][:1]}
    second = {**full, "groundingChunks": full["groundingChunks"][1:]}
    n = _count()
    turn = _feed(_chunks_with([first] + [None] * (n - 2) + [second]))
    assert turn.warnings[0] == (
        "groundingMetadata.groundingChunks re-sent with a value that does not extend the "
        "earlier one: the later one is kept"
    )
    assert turn.candidate["groundingMetadata"]["groundingChunks"] == full["groundingChunks"][1:]


def test_a_changed_search_entry_point_is_a_warning() -> None:
    full = _grounding()
    changed = {"searchEntryPoint": {"renderedContent": "<div>other</div>"}}
    n = _count()
    turn = _feed(_chunks_with([full] + [None] * (n - 2) + [changed]))
    assert turn.warnings == (
        "groundingMetadata.searchEntryPoint re-sent with a value that does not extend the "
        "earlier one: the later one is kept",
    )
    assert turn.citations == _body().citations


def test_url_context_merges_under_the_same_rule() -> None:
    events = render_events(parts=_parts())
    events[0]["candidates"][0]["urlContextMetadata"] = {"urlMetadata": URLS["urlMetadata"][:1]}
    events[-1]["candidates"][0]["urlContextMetadata"] = URLS
    turn = _feed(events)
    assert [c.raw for c in turn.hosted_calls if c.tool == "urlContext"] == URLS["urlMetadata"]
    assert turn.warnings == ()
    events[-1]["candidates"][0]["urlContextMetadata"] = {"urlMetadata": URLS["urlMetadata"][1:]}
    turn = _feed(events)
    assert [c.raw for c in turn.hosted_calls if c.tool == "urlContext"] == URLS["urlMetadata"][1:]
    assert len(turn.warnings) == 1


def test_grounding_that_is_no_object_is_a_warning() -> None:
    turn = parse_response(render_body(parts=_parts(), candidate_extra={"groundingMetadata": []}))
    assert (turn.citations, turn.warnings) == (
        (),
        ("candidate 'groundingMetadata' is not an object: ignored",),
    )


def _with_support(mutate: Any) -> dict[str, Any]:
    grounding = _grounding()
    mutate(grounding["groundingSupports"][1])
    return render_body(parts=_parts(), candidate_extra={"groundingMetadata": grounding})


def _segment(**values: Any) -> Any:
    return lambda support: support["segment"].update(values)


CALL = {"function_call": {"name": "lookup", "id": "f1", "args": {}}}
S2, E2 = START2, START2 + len(SECOND.encode())
NAMED = "groundingSupports[1] names part {}; its text is in part 2"
NO_OFFSETS = "groundingSupports[1]: part 2 "


@pytest.mark.parametrize(
    ("mutate", "offsets", "warning"),
    [
        # partIndex names no text part, but the cited text is in part 2: resolved there.
        (_segment(partIndex=9), (S2, E2), NAMED.format(9)),
        (_segment(partIndex=0), (S2, E2), NAMED.format(0)),  # the executableCode part
        (_segment(partIndex=3), (S2, E2), NAMED.format(3)),  # the empty signed text part
        # the segment fits no text part: its source is still cited, without offsets
        (_segment(endIndex=len(ANSWER.encode()) + 1), (None, None), NO_OFFSETS + "holds no"),
        (_segment(startIndex=S2 + 3, endIndex=S2 + 1), (None, None), NO_OFFSETS + "holds no"),
        (_segment(startIndex=1, endIndex=4, text=None), (None, None), NO_OFFSETS + "holds no"),
        (_segment(text="Spain lost."), (None, None), NO_OFFSETS + "does not hold"),
        (_segment(partIndex=0, text=None), (None, None), "part 0 is no text part"),
        (_segment(startIndex=-1), (None, None), "lacks an integer"),
        (_segment(partIndex="2"), (None, None), "lacks an integer"),
        (lambda s: s["segment"].pop("endIndex"), (None, None), "lacks an integer"),
        (lambda s: s.pop("segment"), (None, None), "has no segment object"),
    ],
)
def test_a_support_the_turn_does_not_hold_keeps_its_source_and_warns(
    mutate: Any, offsets: tuple[Any, Any], warning: str
) -> None:
    def drop_none(support: dict[str, Any]) -> None:
        mutate(support)
        if "segment" in support:
            support["segment"] = {k: v for k, v in support["segment"].items() if v is not None}

    grounding = _grounding()
    drop_none(grounding["groundingSupports"][1])
    extra = {"groundingMetadata": grounding}
    body = parse_response(render_body(parts=[*_parts(), CALL], candidate_extra=extra))
    streamed = parse_stream(
        encode_sse(render_events(parts=[*_parts(), CALL], candidate_extra=extra))
    )
    for turn in (body, streamed):
        assert [c.call_id for c in turn.calls] == ["f1"]
        assert len(turn.warnings) == 1
        assert warning in turn.warnings[0]
        second = [(c.source, c.start, c.end) for c in turn.citations[1:]]
        assert second == [
            ("https://example.com/uefa", *offsets),
            ("https://files.example/doc1", *offsets),
        ]
    assert body.citations == streamed.citations


@pytest.mark.parametrize(
    ("mutate", "cited", "warning"),
    [
        (lambda s: s.update(groundingChunkIndices=[2]), 0, "names chunk 2 of 2: skipped"),
        (lambda s: s.update(groundingChunkIndices=[-1]), 0, "names chunk -1 of 2: skipped"),
        (lambda s: s.update(groundingChunkIndices=[True]), 0, "names chunk True of 2: skipped"),
        (lambda s: s.update(groundingChunkIndices=[1, 7]), 1, "names chunk 7 of 2: skipped"),
        (
            lambda s: s.update(confidenceScores=[0.1]),
            2,
            "confidenceScores and chunk indices differ",
        ),
    ],
)
def test_chunk_indices_the_turn_does_not_hold_are_skipped_with_a_warning(
    mutate: Any, cited: int, warning: str
) -> None:
    grounding = _grounding()
    mutate(grounding["groundingSupports"][1])
    turn = parse_response(
        render_body(parts=[*_parts(), CALL], candidate_extra={"groundingMetadata": grounding})
    )
    assert len(turn.citations) == 1 + cited
    assert turn.warnings == (
        f"groundingSupports[1] {warning}"
        if "differ" not in warning
        else f"groundingSupports[1]: {warning}",
    )
    assert [c.call_id for c in turn.calls] == ["f1"]


def test_a_file_search_support_naming_a_signature_part_resolves_to_the_text() -> None:
    """The shape a file-search turn of a thinking model takes (issue 24): the first part
    carries only the thought signature, the answer is the text part after it, and the
    support names part 0 (proto3 omits it) with the cited text."""
    answer = "The policy allows 20 days of leave."
    cited = "20 days of leave"
    start = len(answer.split(cited)[0].encode())
    grounding = {
        "groundingChunks": [
            {
                "retrievedContext": {
                    "title": "policy.pdf",
                    "text": "20 days",
                    "fileSearchStore": "fileSearchStores/s1",
                }
            }
        ],
        "groundingSupports": [
            {
                "segment": {
                    "startIndex": start,
                    "endIndex": start + len(cited.encode()),
                    "text": cited,
                },
                "groundingChunkIndices": [0],
            }
        ],
    }
    parts = [{"text": "", "signature": SIG}, {"text": answer}, CALL]
    for turn in (
        parse_response(render_body(parts=parts, candidate_extra={"groundingMetadata": grounding})),
        parse_stream(
            encode_sse(render_events(parts=parts, candidate_extra={"groundingMetadata": grounding}))
        ),
    ):
        assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
            ("retrievedContext", None, start, start + len(cited.encode()))
        ]
        assert turn.warnings == ("groundingSupports[0] names part 0; its text is in part 1",)
        assert [c.call_id for c in turn.calls] == ["f1"]
        assert [h.tool for h in turn.hosted_calls] == ["fileSearch"]


def test_omitted_offsets_are_proto3_zero() -> None:
    grounding = {
        "groundingChunks": [{"web": {"uri": "https://example.com/x"}}],
        "groundingSupports": [{"segment": {"endIndex": 2}, "groundingChunkIndices": [0]}],
    }
    turn = parse_response(
        render_body(parts=[{"text": "ok then"}], candidate_extra={"groundingMetadata": grounding})
    )
    assert [(c.start, c.end, c.source) for c in turn.citations] == [(0, 2, "https://example.com/x")]


def test_an_unknown_grounding_chunk_kind_is_cited_by_its_own_key() -> None:
    grounding = {
        "groundingChunks": [{"podcast": {"uri": "x"}}],
        "groundingSupports": [{"segment": {"endIndex": 1}, "groundingChunkIndices": [0]}],
    }
    turn = parse_response(
        render_body(parts=[{"text": "a"}], candidate_extra={"groundingMetadata": grounding})
    )
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [("podcast", None, 0, 1)]
    assert turn.warnings == ()


@pytest.mark.parametrize(
    "outcome", ["OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED", "OUTCOME_UNSPECIFIED"]
)
def test_code_execution_outcomes(outcome: str) -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "1/0"}}
    result = {"codeExecutionResult": {"outcome": outcome, "output": "ZeroDivisionError"}}
    turn = parse_response(render_body(parts=[{"raw": code}, {"raw": result}, {"text": "done"}]))
    assert turn.hosted_calls == (
        HostedCall(tool="codeExecution", id=None, status=outcome, raw=(code, result)),
    )


def _code_turn(*parts: dict[str, Any]) -> Turn:
    return parse_response(render_body(parts=[{"raw": p} for p in parts] + [{"text": "x"}]))


def _code(id_: str | None = None, **extra: Any) -> dict[str, Any]:
    body = {"language": "PYTHON", "code": "print(1)", **extra}
    return {"executableCode": body if id_ is None else {**body, "id": id_}}


def _result(id_: str | None = None, outcome: str = "OUTCOME_OK") -> dict[str, Any]:
    body = {"outcome": outcome}
    return {"codeExecutionResult": body if id_ is None else {**body, "id": id_}}


def test_code_pairs_by_id_across_other_parts() -> None:
    turn = _code_turn(_code("a"), _code("b"), _result("b"), _result("a", "OUTCOME_FAILED"))
    assert [(c.id, c.status) for c in turn.hosted_calls] == [
        ("a", "OUTCOME_FAILED"),
        ("b", "OUTCOME_OK"),
    ]


def test_code_without_a_result_is_kept_with_no_status() -> None:
    turn = _code_turn(_code())
    assert [(c.tool, c.status, c.raw[1]) for c in turn.hosted_calls] == [
        ("codeExecution", None, None)
    ]


OK, ORPHAN, TWO = "OUTCOME_OK", "answers no earlier call", "could answer 2"


@pytest.mark.parametrize(
    ("parts", "calls", "warning"),
    [
        ((_result(),), [(None, OK, False)], ORPHAN),
        ((_code("a"), _result("b")), [("a", None, True), ("b", OK, False)], ORPHAN),
        ((_code("a"), _result()), [("a", None, True), (None, OK, False)], ORPHAN),
        ((_code(), _result("a")), [(None, None, True), ("a", OK, False)], ORPHAN),
        ((_code(), _code(), _result()), [(None, OK, True), (None, None, True)], TWO),
        ((_code(), _result(), _result()), [(None, OK, True), (None, OK, False)], ORPHAN),
        ((_code("a"), _code("a"), _result("a")), [("a", OK, True), ("a", None, True)], TWO),
    ],
)
def test_code_execution_pairing_problems_are_warnings(
    parts: tuple[dict[str, Any], ...], calls: list[tuple[Any, Any, bool]], warning: str
) -> None:
    turn = parse_response(render_body(parts=[*({"raw": p} for p in parts), {"text": "x"}, CALL]))
    assert [(h.id, h.status, h.raw[0] is not None) for h in turn.hosted_calls] == calls
    assert len(turn.warnings) == 1
    assert warning in turn.warnings[0]
    assert [c.call_id for c in turn.calls] == ["f1"]


@pytest.mark.parametrize(
    "part",
    [
        _code(language="BASH"),
        {"executableCode": {"language": "PYTHON"}},
        _code(""),
        {"codeExecutionResult": {"outcome": "OUTCOME_MAYBE"}},
        {"codeExecutionResult": {"output": "1"}},
    ],
)
def test_code_execution_details_are_kept_raw(part: dict[str, Any]) -> None:
    turn = _code_turn(_code(), part) if "codeExecutionResult" in part else _code_turn(part)
    assert turn.hosted_calls[-1].raw[-1 if "codeExecutionResult" in part else 0] == part
    assert turn.warnings == ()


def test_a_hosted_part_that_is_no_object_is_refused() -> None:
    # The part's data field is typed when present (it is what a builder replays).
    with pytest.raises(SchemaError, match="must be an object"):
        _code_turn({"executableCode": "print(1)"})


def _tool(
    kind: str, id_: str, tool_type: str | None = "GOOGLE_SEARCH_WEB", **body: Any
) -> dict[str, Any]:
    value: dict[str, Any] = {"id": id_, **body}
    if tool_type is not None:
        value["toolType"] = tool_type
    return {kind: value, "thoughtSignature": SIG} if kind == "toolCall" else {kind: value}


def test_server_side_tool_invocations_pair_by_id_and_are_never_released() -> None:
    call = _tool("toolCall", "t1", args={"queries": ["q"]})
    answer = _tool("toolResponse", "t1", response={"results": []})
    url_call = _tool("toolCall", "t2", "URL_CONTEXT")
    fc = {"function_call": {"name": "lookup", "id": "f1", "args": {}}}
    turn = parse_response(
        render_body(parts=[{"raw": call}, {"raw": url_call}, {"raw": answer}, fc])
    )
    assert [c.call_id for c in turn.calls] == ["f1"]  # only functionCall parts are executable
    assert turn.hosted_calls == (
        HostedCall(tool="GOOGLE_SEARCH_WEB", id="t1", status=None, raw=(call, answer)),
        HostedCall(tool="URL_CONTEXT", id="t2", status=None, raw=(url_call, None)),
    )


@pytest.mark.parametrize(
    ("parts", "baseline", "tools", "warning"),
    [
        ((_tool("toolResponse", "t1"),), "2026-11", ["GOOGLE_SEARCH_WEB"], "answers no earlier"),
        (
            (_tool("toolCall", "t1"), _tool("toolResponse", "t1", "FILE_SEARCH")),
            "2026-11",
            ["GOOGLE_SEARCH_WEB"],
            "toolResponse FILE_SEARCH answers a GOOGLE_SEARCH_WEB toolCall",
        ),
        ((_tool("toolCall", "t1", "MEDIA_PROCESSING"),), "2026-07-21", ["MEDIA_PROCESSING"], None),
        ((_tool("toolCall", "t1", "SOMETHING_NEW"),), "2026-11", ["SOMETHING_NEW"], None),
        ((_tool("toolCall", "t1", args=[1]),), "2026-11", ["GOOGLE_SEARCH_WEB"], None),
    ],
)
def test_server_side_tool_invocation_details_never_refuse(
    parts: tuple[dict[str, Any], ...], baseline: str, tools: list[str], warning: str | None
) -> None:
    body = render_body(parts=[*({"raw": p} for p in parts), {"text": "x"}, CALL])
    turn = parse_response(body, baseline=baseline)
    assert [h.tool for h in turn.hosted_calls] == tools
    assert [c.call_id for c in turn.calls] == ["f1"]
    if warning is None:
        assert turn.warnings == ()
    else:
        assert len(turn.warnings) == 1
        assert warning in turn.warnings[0]


def test_media_processing_tool_type_is_known_to_the_current_baseline() -> None:
    call = _tool("toolCall", "t1", "MEDIA_PROCESSING")
    turn = parse_response(render_body(parts=[{"raw": call}, {"text": "x"}]))
    assert turn.hosted_calls[0].tool == "MEDIA_PROCESSING"


def test_an_unknown_url_retrieval_status_is_kept_raw() -> None:
    entry = {"retrievedUrl": "u", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_LATER"}
    extra = {"urlContextMetadata": {"urlMetadata": [entry]}}
    turn = parse_response(render_body(parts=[{"text": "x"}], candidate_extra=extra))
    assert [(h.tool, h.status, h.raw) for h in turn.hosted_calls] == [
        ("urlContext", "URL_RETRIEVAL_STATUS_LATER", entry)
    ]


def test_a_partial_turn_projects_what_arrived() -> None:
    """EOF before the cited text arrived: the error carries a partial turn whose citations
    have no offsets yet (warnings say why); nothing is released."""
    events = render_events(parts=_parts(), candidate_extra=_extra(), finish_reason=None)
    events[0]["candidates"][0]["groundingMetadata"] = _grounding()
    with pytest.raises(TruncatedStreamError) as caught:
        parse_stream(encode_sse(events[:1]))
    partial = caught.value.turn
    assert partial is not None
    assert partial.calls == ()
    assert {(c.start, c.end) for c in partial.citations} == {(None, None)}
    assert len(partial.warnings) == 2


HISTORY = [{"role": "user", "parts": [{"text": "What does 2+3 give, and look it up"}]}]
TOOLS = [
    {"codeExecution": {}},
    {"googleSearch": {}},
    {"functionDeclarations": [{"name": "lookup"}]},
]


def _mixed_parts() -> list[dict[str, Any]]:
    return [
        {"text": "thinking", "thought": True, "signature": SIG},
        {"raw": {**CODE, "thoughtSignature": "Y29kZS1zaWc="}},
        {"raw": RESULT},
        {"raw": _tool("toolCall", "t1", args={"q": "x"})},
        {"raw": _tool("toolResponse", "t1", response={"r": 1})},
        {"text": "It is 5.", "deltas": ["It ", "is 5."]},
        {"function_call": {"name": "lookup", "args": {"k": "v"}}, "signature": "Y2FsbC1zaWc="},
    ]


def _continue(turn: Turn) -> dict[str, Any]:
    return build_continuation(
        turn,
        [ToolResult(call_id=turn.calls[0].call_id, output={"ok": True})],
        history=HISTORY,
        model="gemini-3-flash-preview",
        tools=TOOLS,
        tool_config=None,
        system_instruction=None,
        generation_config=None,
        safety_settings=None,
    )


def test_builder_replays_hosted_parts_exactly_with_their_signatures() -> None:
    body = render_body(parts=_mixed_parts())
    sent = body["candidates"][0]["content"]["parts"]
    for turn in (
        parse_response(body),
        parse_stream(encode_sse(render_events(parts=_mixed_parts()))),
    ):
        request = _continue(turn)["body"]
        model = request["contents"][1]
        assert model["role"] == "model"
        assert model["parts"] == sent  # every part, in order, equal JSON (keys sorted)
        signatures = [p.get("thoughtSignature") for p in model["parts"]]
        assert signatures == [p.get("thoughtSignature") for p in sent]  # the very strings
        assert request["contents"][2]["parts"][0]["functionResponse"]["name"] == "lookup"


def test_builder_detects_mutated_grounding() -> None:
    grounding = {
        "webSearchQueries": ["2+3"],
        "groundingChunks": [{"web": {"uri": "https://example.com/math"}}],
        "groundingSupports": [
            {
                "segment": {"partIndex": 5, "endIndex": 8, "text": "It is 5."},
                "groundingChunkIndices": [0],
            }
        ],
    }
    turn = parse_response(
        render_body(parts=_mixed_parts(), candidate_extra={"groundingMetadata": grounding})
    )
    assert [(c.source, c.start, c.end) for c in turn.citations] == [
        ("https://example.com/math", 0, 8)
    ]
    turn.candidate["groundingMetadata"]["webSearchQueries"].append("injected")
    with pytest.raises(ContinuationError, match="mutated"):
        _continue(turn)


def test_hosted_projection_is_not_part_of_the_digest_input() -> None:
    turn = _body()
    again = dataclasses.replace(turn, hosted_calls=(), citations=())
    assert again.digest == turn.digest


def test_image_and_maps_chunks_are_cited_by_their_uri() -> None:
    grounding = {
        "groundingChunks": [
            {
                "image": {
                    "sourceUri": "https://example.com/page",
                    "imageUri": "https://example.com/i.png",
                }
            },
            {"maps": {"uri": "https://maps.example/place", "title": "Café"}},
        ],
        "groundingSupports": [{"segment": {"endIndex": 4}, "groundingChunkIndices": [0, 1]}],
    }
    turn = parse_response(
        render_body(parts=[{"text": "Here"}], candidate_extra={"groundingMetadata": grounding})
    )
    assert [(c.kind, c.source) for c in turn.citations] == [
        ("image", "https://example.com/page"),
        ("maps", "https://maps.example/place"),
    ]


@st.composite
def grounded_turns(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], list[int]]:
    """A text with multi-byte characters, supports over random character ranges, random
    deltas and a random chunk plan."""
    text = draw(st.text(alphabet="aé€𝄞 .", min_size=1, max_size=40))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    deltas = [d for d in deltas if d] or [text]
    chunks = [{"web": {"uri": f"https://example.com/{n}"}} for n in range(3)]
    supports = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        segment = {"startIndex": len(text[:start].encode()), "endIndex": len(text[:end].encode())}
        indices = draw(st.lists(st.integers(0, 2), max_size=3))
        supports.append(
            {"segment": {**segment, "text": text[start:end]}, "groundingChunkIndices": indices}
        )
    parts = [{"raw": CODE}, {"raw": RESULT}, {"text": text, "deltas": deltas}]
    n_wire = 2 + len(deltas)
    plan_cuts = sorted(draw(st.lists(st.integers(0, n_wire), max_size=4)))
    plan = [b - a for a, b in zip([0, *plan_cuts], [*plan_cuts, n_wire], strict=True)]
    for support in supports:
        support["segment"]["partIndex"] = 2
    grounding = {"groundingChunks": chunks, "groundingSupports": supports}
    return parts, grounding, plan


@settings(max_examples=150, deadline=None)
@given(case=grounded_turns(), early=st.booleans())
def test_property_stream_equals_body_and_offsets_slice_the_cited_text(
    case: tuple[list[dict[str, Any]], dict[str, Any], list[int]], early: bool
) -> None:
    parts, grounding, plan = case
    extra = {"groundingMetadata": grounding}
    body = parse_response(render_body(parts=parts, candidate_extra=extra))
    first = (
        {"groundingMetadata": {"groundingChunks": grounding["groundingChunks"][:1]}}
        if early
        else None
    )
    events = render_events(parts=parts, candidate_extra=extra, chunk_plan=plan, first_extra=first)
    streamed = parse_stream(encode_sse(events))
    assert streamed.citations == body.citations
    assert streamed.hosted_calls == body.hosted_calls
    data = body.parts[2]["text"].encode()
    for citation in body.citations:
        assert data[citation.start : citation.end].decode() == citation.raw["segment"]["text"]
    assert len(body.citations) == sum(
        len(s["groundingChunkIndices"]) for s in grounding["groundingSupports"]
    )
