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
    SequenceError,
    ToolResult,
    TruncatedStreamError,
    UnsupportedProviderState,
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


def test_incremental_grounding_chunks_fail_closed() -> None:
    """Drift closed: a list re-sent that does not extend the earlier one would be incremental
    delivery, whose indices nobody pins; silently replacing it would misattribute sources."""
    full = _grounding()
    first = {"groundingChunks": full["groundingChunks"][:1]}
    second = {**full, "groundingChunks": full["groundingChunks"][1:]}
    n = _count()
    with pytest.raises(UnsupportedProviderState, match="does not extend"):
        _feed(_chunks_with([first] + [None] * (n - 2) + [second]))


def test_a_changed_search_entry_point_fails_closed() -> None:
    full = _grounding()
    changed = {"searchEntryPoint": {"renderedContent": "<div>other</div>"}}
    n = _count()
    with pytest.raises(UnsupportedProviderState, match="different value"):
        _feed(_chunks_with([full] + [None] * (n - 2) + [changed]))


def test_url_context_merges_under_the_same_rule() -> None:
    events = render_events(parts=_parts())
    events[0]["candidates"][0]["urlContextMetadata"] = {"urlMetadata": URLS["urlMetadata"][:1]}
    events[-1]["candidates"][0]["urlContextMetadata"] = URLS
    turn = _feed(events)
    assert [c.raw for c in turn.hosted_calls if c.tool == "urlContext"] == URLS["urlMetadata"]
    events[-1]["candidates"][0]["urlContextMetadata"] = {"urlMetadata": URLS["urlMetadata"][1:]}
    with pytest.raises(UnsupportedProviderState):
        _feed(events)


def _with_support(mutate: Any) -> dict[str, Any]:
    grounding = _grounding()
    mutate(grounding["groundingSupports"][1])
    return render_body(parts=_parts(), candidate_extra={"groundingMetadata": grounding})


def _segment(**values: Any) -> Any:
    return lambda support: support["segment"].update(values)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (_segment(partIndex=9), "no text part"),
        (_segment(partIndex=0), "no text part"),  # the executableCode part
        (_segment(endIndex=len(ANSWER.encode()) + 1), "outside part"),
        (_segment(startIndex=START2 + 3, endIndex=START2 + 1), "outside part"),
        (_segment(startIndex=1, endIndex=4, text=None), "UTF-8"),  # inside "Ç"
        (_segment(text="Spain lost."), "differs"),
        (_segment(startIndex=-1), ">= 0"),
        (_segment(partIndex="2"), ">= 0"),
        (lambda s: s["segment"].pop("endIndex"), "endIndex"),
        (lambda s: s.pop("segment"), "segment"),
        (lambda s: s.update(groundingChunkIndices=[2]), "outside the 2 chunk"),
        (lambda s: s.update(groundingChunkIndices=[-1]), "outside"),
        (lambda s: s.update(groundingChunkIndices=[True]), "outside"),
        (lambda s: s.update(confidenceScores=[0.1]), "differ in length"),
    ],
)
def test_a_support_outside_the_turn_is_a_schema_error(mutate: Any, match: str) -> None:
    def drop_none(support: dict[str, Any]) -> None:
        mutate(support)
        if "segment" in support:
            support["segment"] = {k: v for k, v in support["segment"].items() if v is not None}

    body = _with_support(drop_none)
    with pytest.raises(SchemaError, match=match):
        parse_response(body)
    events = render_events(parts=_parts(), candidate_extra=body["candidates"][0])
    with pytest.raises(SchemaError, match=match):
        parse_stream(encode_sse(events))


def test_omitted_offsets_are_proto3_zero() -> None:
    grounding = {
        "groundingChunks": [{"web": {"uri": "https://example.com/x"}}],
        "groundingSupports": [{"segment": {"endIndex": 2}, "groundingChunkIndices": [0]}],
    }
    turn = parse_response(
        render_body(parts=[{"text": "ok then"}], candidate_extra={"groundingMetadata": grounding})
    )
    assert [(c.start, c.end, c.source) for c in turn.citations] == [(0, 2, "https://example.com/x")]


def test_unknown_grounding_chunk_kind_fails_closed() -> None:
    grounding = {"groundingChunks": [{"podcast": {"uri": "x"}}]}
    with pytest.raises(UnsupportedProviderState, match="no known kind"):
        parse_response(
            render_body(parts=[{"text": "a"}], candidate_extra={"groundingMetadata": grounding})
        )


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


@pytest.mark.parametrize(
    ("parts", "error", "match"),
    [
        ((_result(),), SequenceError, "answers no earlier"),
        ((_code("a"), _result("b")), SequenceError, "answers no earlier"),
        ((_code("a"), _result()), SequenceError, "answers no earlier"),  # id must be echoed
        ((_code(), _result("a")), SequenceError, "answers no earlier"),
        ((_code("a"), _code("a")), SequenceError, "two unanswered"),
        ((_code(), _code(), _result()), SequenceError, "could answer 2"),
        ((_code(), _result(), _result()), SequenceError, "answers no earlier"),
        ((_code(language="BASH"),), UnsupportedProviderState, "language"),
        (({"executableCode": {"language": "PYTHON"}},), SchemaError, "code"),
        ((_code(), _result(outcome="OUTCOME_MAYBE")), UnsupportedProviderState, "outcome"),
        ((_code(), {"codeExecutionResult": {"output": "1"}}), SchemaError, "outcome"),
        ((_code(""),), SchemaError, "empty"),
    ],
)
def test_code_execution_shape_and_pairing_errors(
    parts: tuple[dict[str, Any], ...], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        _code_turn(*parts)


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
    ("parts", "baseline", "error"),
    [
        ((_tool("toolResponse", "t1"),), "2026-11", SequenceError),
        (
            (_tool("toolCall", "t1"), _tool("toolResponse", "t1", "FILE_SEARCH")),
            "2026-11",
            SequenceError,
        ),
        ((_tool("toolCall", "t1", "MEDIA_PROCESSING"),), "2026-07-21", UnsupportedProviderState),
        ((_tool("toolCall", "t1", "SOMETHING_NEW"),), "2026-11", UnsupportedProviderState),
        ((_tool("toolCall", "t1", args=[1]),), "2026-11", SchemaError),
    ],
)
def test_server_side_tool_invocation_errors(
    parts: tuple[dict[str, Any], ...], baseline: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        parse_response(
            render_body(parts=[{"raw": p} for p in parts] + [{"text": "x"}]), baseline=baseline
        )


def test_media_processing_tool_type_is_known_to_the_current_baseline() -> None:
    call = _tool("toolCall", "t1", "MEDIA_PROCESSING")
    turn = parse_response(render_body(parts=[{"raw": call}, {"text": "x"}]))
    assert turn.hosted_calls[0].tool == "MEDIA_PROCESSING"


def test_unknown_url_retrieval_status_fails_closed() -> None:
    extra = {
        "urlContextMetadata": {
            "urlMetadata": [
                {"retrievedUrl": "u", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_LATER"}
            ]
        }
    }
    with pytest.raises(UnsupportedProviderState):
        parse_response(render_body(parts=[{"text": "x"}], candidate_extra=extra))


def test_a_partial_turn_keeps_going_without_a_projection() -> None:
    """EOF before the cited text arrived: the error carries a partial turn, nothing projected."""
    events = render_events(parts=_parts(), candidate_extra=_extra(), finish_reason=None)
    events[0]["candidates"][0]["groundingMetadata"] = _grounding()
    with pytest.raises(TruncatedStreamError) as caught:
        parse_stream(encode_sse(events[:1]))
    partial = caught.value.turn
    assert partial is not None
    assert partial.citations == ()
    assert partial.hosted_calls == ()


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
    with pytest.raises(ContinuationError, match="modified"):
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
