"""google-genai's own generate_content_stream / generate_content read every golden fixture
from a local socket and see exactly the calls the parser releases from the same bytes; its
chunk dicts through feed_event give the same turn (signatures compared as bytes, since the
SDK re-encodes them URL-safe). Runs under 3.6.1 and, in the baseline venv, 2.12.1."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import ToolResult
from callgate.contracts import Fixture, load_fixtures
from callgate.gemini_generate_content import (
    Parser,
    Turn,
    build_continuation,
    parse_response,
    parse_stream,
    same_signature,
)

from .sdk_server import serve
from .wire import FIXTURES

genai = pytest.importorskip("google.genai")
from google.genai import types  # noqa: E402

CURRENT_SDK = genai.__version__.startswith("3.")
API = "v1" if CURRENT_SDK else "v1beta"
MODEL = "gemini-3-flash-preview"
ALL = load_fixtures(FIXTURES)
STREAMS = [f for f in ALL if f.layer == "wire-sse"]
BODIES = [f for f in ALL if f.layer == "json-body"]


def _client(url: str) -> Any:
    # no api_version: each SDK generation's own default (v1 for 3.6.1, v1beta for 2.12.1)
    return genai.Client(api_key="test", http_options={"base_url": url})


def _config() -> Any:
    # the fixture's CONTINUATION would make 3.6.1 re-POST forever against a fixed body
    return types.GenerateContentConfig(automatic_continuation=False) if CURRENT_SDK else None


def _sdk_calls(chunks: list[Any]) -> list[tuple[Any, ...]]:
    return [(fc.id, fc.name, fc.args) for c in chunks for fc in (c.function_calls or [])]


def _normalised(turn: Turn) -> list[dict[str, Any]]:
    out = []
    for part in turn.parts:
        part = dict(part)
        if "thoughtSignature" in part:
            part["thoughtSignature"] = ("sig", len(part["thoughtSignature"]) > 0)
        out.append(part)
    return out


def _hosted(turn: Turn) -> tuple[list[Any], list[Any]]:
    return (
        [(c.tool, c.id, c.status) for c in turn.hosted_calls],
        [(c.kind, c.source, c.start, c.end) for c in turn.citations],
    )


def _metadata(candidate: Any) -> dict[str, Any]:
    """The grounding and URL context the SDK exposes on ``candidate``, as wire dicts."""
    out = {}
    for key, value in (
        ("groundingMetadata", getattr(candidate, "grounding_metadata", None)),
        ("urlContextMetadata", getattr(candidate, "url_context_metadata", None)),
    ):
        if value is not None:
            out[key] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


@pytest.mark.parametrize("fixture", STREAMS, ids=[f.name for f in STREAMS])
def test_sdk_stream_sees_the_calls_the_parser_releases(fixture: Fixture) -> None:
    if not CURRENT_SDK and fixture.name == "continuation_token":
        pytest.skip("finishReason CONTINUATION is new in google-genai 3.6.1")
    with serve(fixture.data) as (url, seen):
        client = _client(url)
        chunks = list(
            client.models.generate_content_stream(model=MODEL, contents="hi", config=_config())
        )
        client.close()
    assert [path for path, _ in seen] == [f"/{API}/models/{MODEL}:streamGenerateContent?alt=sse"]
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    released = [(c.provider_id, c.name, c.arguments) for c in turn.calls]
    if turn.finish_reason == "STOP":
        assert _sdk_calls(chunks) == released
    else:
        assert released == []

    parser = Parser(baseline=fixture.contract_revision)
    for chunk in chunks:
        parser.feed_event(chunk.model_dump(mode="json", by_alias=True, exclude_none=True))
    via_sdk = parser.finish()
    assert [(c.call_id, c.name, c.arguments) for c in via_sdk.calls] == [
        (c.call_id, c.name, c.arguments) for c in turn.calls
    ]
    assert _normalised(via_sdk) == _normalised(turn)
    for mine, theirs in zip(turn.parts, via_sdk.parts, strict=True):
        if "thoughtSignature" in mine:
            assert same_signature(mine["thoughtSignature"], theirs["thoughtSignature"])
    assert via_sdk.usage == turn.usage
    assert via_sdk.finish_reason == turn.finish_reason
    assert _hosted(via_sdk) == _hosted(turn)
    last = chunks[-1].candidates[0] if chunks[-1].candidates else None
    for key, sdk_value in _metadata(last).items():  # the last chunk re-sends it whole
        assert turn.candidate[key] == sdk_value


@pytest.mark.parametrize("fixture", BODIES, ids=[f.name for f in BODIES])
def test_sdk_unary_sees_the_calls_the_parser_releases(fixture: Fixture) -> None:
    with serve(fixture.data, content_type="application/json") as (url, seen):
        client = _client(url)
        response = client.models.generate_content(model=MODEL, contents="hi", config=_config())
        client.close()
    assert [path for path, _ in seen] == [f"/{API}/models/{MODEL}:generateContent"]
    turn = parse_response(fixture.data, baseline=fixture.contract_revision)
    sdk = [(fc.id, fc.name, fc.args) for fc in (response.function_calls or [])]
    assert sdk == [(c.provider_id, c.name, c.arguments) for c in turn.calls]
    via_sdk = parse_response(response.model_dump(mode="json", by_alias=True, exclude_none=True))
    assert _hosted(via_sdk) == _hosted(turn)
    for key, sdk_value in _metadata(response.candidates[0]).items():
        assert turn.candidate[key] == sdk_value


def test_the_sdk_accepts_our_continuation_body_shape_and_sends_the_same_signature_bytes() -> None:
    """Replaying the SDK's own history gives the server the same signature bytes that our
    builder sends (the SDK re-encodes them; the bytes match)."""
    fixture = next(f for f in STREAMS if f.name == "parallel_calls_one_chunk")
    turn = parse_stream(fixture.data)

    request = build_continuation(
        turn,
        [ToolResult(c.call_id, {"ok": True}) for c in turn.calls],
        history=[{"role": "user", "parts": [{"text": "hi"}]}],
        model=MODEL,
        tools=[{"functionDeclarations": [{"name": "get_weather"}, {"name": "get_time"}]}],
        tool_config=None,
        system_instruction=None,
        generation_config=None,
        safety_settings=None,
    )
    ours = request["body"]["contents"]
    contents = [types.Content.model_validate(c) for c in ours]
    with serve(FIX_TEXT) as (url, seen):
        client = _client(url)
        list(client.models.generate_content_stream(model=MODEL, contents=contents))
        client.close()
    sent = seen[0][1]["contents"]
    assert len(sent) == len(ours)
    for mine, theirs in zip(ours[1]["parts"], sent[1]["parts"], strict=True):
        if "thoughtSignature" in mine:
            assert same_signature(mine["thoughtSignature"], theirs["thoughtSignature"])
    assert [p["functionResponse"]["id"] for p in sent[2]["parts"]] == ["fc-1", "fc-2"]


FIX_TEXT = next(f for f in STREAMS if f.name == "text_answer").data
