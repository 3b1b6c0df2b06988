"""The writer seam through the reader: whatever _render writes, the Parser gives back as
scripted, at any chunk plan and any byte split."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import ProviderError, TruncatedStreamError, UsageError
from callgate.gemini_generate_content import parse_response, parse_stream
from callgate.gemini_generate_content._render import (
    encode_sse,
    render_blocked,
    render_body,
    render_error_event,
    render_events,
    render_stream,
    wire_parts,
)

SIGS = st.sampled_from(["c2ln", "c2lnLWEtAAEC/+8=", "c2lnLWItAwQF-_8", "AAEC"])
WORDS = st.text(alphabet='ab é\n"\\{}', min_size=0, max_size=6)


@st.composite
def text_spec(draw: st.DrawFn) -> dict[str, Any]:
    deltas = draw(st.lists(WORDS, min_size=1, max_size=4))
    spec: dict[str, Any] = {"text": "".join(deltas), "deltas": deltas}
    if draw(st.booleans()):
        spec["thought"] = True
    if draw(st.booleans()):
        spec["signature"] = draw(SIGS)
    return spec


@st.composite
def call_spec(draw: st.DrawFn) -> dict[str, Any]:
    args = draw(st.dictionaries(st.sampled_from("xyz"), st.integers() | WORDS, max_size=3))
    spec: dict[str, Any] = {
        "function_call": {"name": draw(st.sampled_from(["f", "g.h"])), "args": args}
    }
    if draw(st.booleans()):
        spec["signature"] = draw(SIGS)
    return spec


_CODE = {"raw": {"executableCode": {"language": "PYTHON", "code": "print(1)"}}}
_RESULT = {"raw": {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}}
_TOOL_CALL = {"toolCall": {"toolType": "GOOGLE_SEARCH_WEB", "args": {}}}
_TOOL_RESPONSE = {"toolResponse": {"toolType": "GOOGLE_SEARCH_WEB", "response": {}}}


@st.composite
def hosted_specs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Well-formed hosted parts: code then its result; a toolCall then
    (optionally) its toolResponse, under an id of their own."""
    if draw(st.booleans()):
        return [_CODE, _RESULT]
    tool_id = f"t{draw(st.integers(0, 10**9))}"
    call = {"raw": {"toolCall": {"id": tool_id, **_TOOL_CALL["toolCall"]}}}
    answer = {"raw": {"toolResponse": {"id": tool_id, **_TOOL_RESPONSE["toolResponse"]}}}
    return [call, answer] if draw(st.booleans()) else [call]


@st.composite
def script(draw: st.DrawFn) -> dict[str, Any]:
    drawn = draw(
        st.lists(
            st.one_of(
                text_spec().map(lambda s: [s]), call_spec().map(lambda s: [s]), hosted_specs()
            ),
            min_size=1,
            max_size=6,
            unique_by=lambda specs: (
                specs[0].get("raw", {}).get("toolCall", {}).get("id") or id(specs)
            ),
        )
    )
    parts = [spec for specs in drawn for spec in specs]
    with_ids = draw(st.booleans())
    n = 0
    for spec in parts:
        if "function_call" in spec and with_ids:
            spec["function_call"]["id"] = f"id-{n}"
            n += 1
    n_wire = len(wire_parts(parts))
    cuts = sorted(draw(st.lists(st.integers(0, n_wire), max_size=4)))
    plan = [b - a for a, b in zip([0, *cuts], [*cuts, n_wire], strict=True)]
    usage = draw(st.none() | st.just({"promptTokenCount": 3, "totalTokenCount": 9}))
    return {"parts": parts, "chunk_plan": plan, "usage": usage}


def _expect(parts: list[dict[str, Any]]) -> tuple[list[Any], str, list[str]]:
    calls = [
        (s["function_call"].get("id"), s["function_call"]["name"], s["function_call"]["args"])
        for s in parts
        if "function_call" in s
    ]
    texts = "".join(s["text"] for s in parts if "text" in s and not s.get("thought"))
    sigs = [s["signature"] for s in parts if "signature" in s]
    return calls, texts, sigs


def _seen(turn: Any) -> tuple[list[Any], str, list[str]]:
    calls = [(c.provider_id, c.name, c.arguments) for c in turn.calls]
    sigs = [p["thoughtSignature"] for p in turn.parts if "thoughtSignature" in p]
    return calls, turn.text, sigs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=script(), data=st.data())
def test_render_then_parse_gives_back_the_script(spec: dict[str, Any], data: st.DataObject) -> None:
    raw = render_stream(**spec)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=6)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    turn = parse_stream(pieces)
    assert _seen(turn) == _expect(spec["parts"])
    assert turn.usage == spec["usage"]
    assert turn.chunks == len(spec["chunk_plan"])
    # every signed wire part is in the turn exactly as written
    wire = [
        p
        for c in render_events(**spec)
        for p in c["candidates"][0].get("content", {}).get("parts", [])
    ]
    signed = [p for p in wire if "thoughtSignature" in p]
    assert [p for p in turn.parts if "thoughtSignature" in p] == signed
    body_turn = parse_response(render_body(parts=spec["parts"], usage=spec["usage"]))
    assert _seen(body_turn) == _expect(spec["parts"])


def test_parallel_calls_in_one_chunk_or_several() -> None:
    parts = [{"function_call": {"name": "f", "args": {"i": i}}} for i in range(3)]
    one = render_events(parts=parts, chunk_plan=[3])
    several = render_events(parts=parts)
    assert len(one) == 1
    assert len(several) == 3
    for chunks in (one, several):
        assert all(len(c["candidates"]) == 1 for c in chunks)
    assert parse_stream(render_stream(parts=parts, chunk_plan=[3])).calls[2].arguments == {"i": 2}


def test_the_finish_and_usage_ride_on_the_last_chunk_only() -> None:
    chunks = render_events(
        parts=[{"text": "ab", "deltas": ["a", "b"]}], usage={"totalTokenCount": 2}
    )
    assert "finishReason" not in chunks[0]["candidates"][0]
    assert "usageMetadata" not in chunks[0]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    every = render_events(
        parts=[{"text": "ab", "deltas": ["a", "b"]}],
        usage={"totalTokenCount": 2},
        usage_on_every_chunk=True,
    )
    assert all("usageMetadata" in c for c in every)


def test_render_stream_is_data_lines_only() -> None:
    raw = render_stream(parts=[{"text": "x"}])
    assert all(line.startswith(b"data: {") or not line for line in raw.split(b"\n"))


def test_scripted_refusal_truncation_and_continuation() -> None:
    with pytest.raises(ProviderError):
        parse_stream(render_stream(parts=[{"text": "x"}], finish_reason="MAX_TOKENS"))
    with pytest.raises(TruncatedStreamError):
        parse_stream(render_stream(parts=[{"text": "x"}], finish_reason=None))
    turn = parse_stream(
        render_stream(
            parts=[{"text": "x"}], finish_reason="CONTINUATION", continuation_token="dG9r"
        )
    )
    assert turn.continuation_token == "dG9r"


def test_error_event_has_error_first_and_parses_as_provider_error() -> None:
    event = encode_sse([render_error_event(code=503, message="overloaded", status="UNAVAILABLE")])
    assert event.startswith(b'data: {"error":{"code":503')
    with pytest.raises(ProviderError) as err:
        parse_stream(render_stream(parts=[{"text": "x"}], finish_reason=None) + event)
    assert (err.value.error_code, err.value.error_type) == ("503", "UNAVAILABLE")


def test_blocked_prompt_renders_without_candidates() -> None:
    body = render_blocked("SAFETY", usage={"promptTokenCount": 4})
    assert "candidates" not in body
    with pytest.raises(ProviderError):
        parse_response(body)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"parts": "x"},
        {"parts": [{"text": "ab", "deltas": ["a"]}]},
        {"parts": [{"function_call": {"args": {}}}]},
        {"parts": [{"what": 1}]},
        {"parts": [{"text": "a"}], "chunk_plan": [2]},
        {"parts": [{"raw": {"x": float("nan")}}]},
    ],
)
def test_unrenderable_scripts_are_usage_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        render_stream(**kwargs)
