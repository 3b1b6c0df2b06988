"""Media tool results in every room's continuation builder: the native shapes, the refusals
(each naming the rule it breaks, nothing downgraded to text), Internal and audit values
kept out of every request, and the three media bounds of Limits at and past each bound."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import (
    ContinuationError,
    Internal,
    LimitExceededError,
    Limits,
    MediaPart,
    TextPart,
    ToolResult,
    UsageError,
)

from .media_rooms import ROOMS, rendered

PROTOCOLS = sorted(ROOMS)
MEDIA_ROOMS = [p for p in PROTOCOLS if p != "openai_chat_completions"]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
PDF = b"%PDF-1.4\n%%EOF\n"


def build(protocol: str, output: Any, baseline: str = "2026-11", **kw: Any) -> dict[str, Any]:
    room = ROOMS[protocol]
    audit = kw.pop("audit", None)
    is_error = kw.pop("is_error", False)
    result = ToolResult(room.call_id, output, is_error, audit=audit)
    return room.build(room.turn(baseline), [result], **kw)


def one(protocol: str, output: Any, baseline: str = "2026-11", **kw: Any) -> Any:
    return rendered(protocol, build(protocol, output, baseline, **kw))


# -- native shapes beyond the SDK comparisons -------------------------------------------


def test_text_only_outputs_render_as_before_in_every_room() -> None:
    assert one("openai_responses", {"b": 1})["output"] == '{"b":1}'
    assert one("anthropic_messages", "plain")["content"] == "plain"
    assert one("gemini_interactions", {"b": 1})["result"] == {"b": 1}
    assert one("gemini_generate_content", "t")["response"] == {"output": "t"}
    assert "parts" not in one("gemini_generate_content", "t")
    assert one("openai_chat_completions", "t")["content"] == "t"


def test_anthropic_text_documents_urls_and_error_flag() -> None:
    block = one(
        "anthropic_messages",
        (
            MediaPart.document("notes ü".encode(), "text/plain", filename="notes.txt"),
            MediaPart.from_url("document", "https://example.com/r.pdf"),
            MediaPart.image(PNG, "image/png", filename="not-sent.png"),
        ),
        is_error=True,
    )
    assert block["is_error"] is True
    assert block["content"][0] == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "notes ü"},
        "title": "notes.txt",
    }
    assert block["content"][1] == {
        "type": "document",
        "source": {"type": "url", "url": "https://example.com/r.pdf"},
    }
    assert "not-sent" not in json.dumps(block["content"][2])


def test_interactions_2026_11_takes_audio_and_video_and_names_a_video() -> None:
    blocks = one(
        "gemini_interactions",
        (
            MediaPart.audio(b"RIFF", "audio/wav"),
            MediaPart.from_url("video", "https://example.com/v.mp4", media_type="video/mp4"),
            MediaPart.video(b"\x00\x00", "video/mp4", filename="clip"),
        ),
        is_error=True,
    )
    assert blocks["is_error"] is True
    assert blocks["result"] == [
        {"type": "audio", "data": "UklGRg==", "mime_type": "audio/wav"},
        {"type": "video", "uri": "https://example.com/v.mp4", "mime_type": "video/mp4"},
        {"type": "video", "data": "AAA=", "mime_type": "video/mp4", "name": "clip"},
    ]


def test_generate_content_error_results_and_files_api_uris() -> None:
    answer = one(
        "gemini_generate_content",
        (
            TextPart("failed"),
            MediaPart.from_file_id("image", "https://files.example/f1", media_type="image/png"),
        ),
        is_error=True,
    )
    assert answer["response"] == {"error": ["failed"]}
    assert answer["parts"] == [
        {"file_data": {"file_uri": "https://files.example/f1", "mime_type": "image/png"}}
    ]
    # media-less tuple outputs send no parts at all
    assert "parts" not in one("gemini_generate_content", (TextPart("a"), TextPart("b")))


def test_chat_completions_text_parts_and_error_results() -> None:
    parts = (TextPart("a"), TextPart("b"))
    assert one("openai_chat_completions", parts)["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]
    assert one("openai_chat_completions", parts, is_error=True)["content"] == '{"error":["a","b"]}'


# -- refusals, each naming its rule ------------------------------------------------------

REFUSED = [
    ("openai_responses", MediaPart.audio(b"a", "audio/wav"), "2026-11", "no audio part"),
    ("openai_responses", MediaPart.image(PNG, "image/tiff"), "2026-11", "input_image must be"),
    ("anthropic_messages", MediaPart.video(b"v", "video/mp4"), "2026-11", "there is no video"),
    ("anthropic_messages", MediaPart.image(PNG, "image/bmp"), "2026-11", "image source must"),
    ("anthropic_messages", MediaPart.document(PDF, "application/msword"), "2026-11", "pdf"),
    ("anthropic_messages", MediaPart.document(b"\xff", "text/plain"), "2026-11", "UTF-8"),
    ("anthropic_messages", MediaPart.from_file_id("image", "f"), "2026-07-21", "beta-only"),
    ("gemini_interactions", MediaPart.document(PDF), "2026-07-21", "needs the 2026-11"),
    ("gemini_interactions", MediaPart.audio(b"a", "audio/wav"), "2026-07-21", "2026-11"),
    ("gemini_interactions", MediaPart.from_file_id("image", "f"), "2026-11", "by uri"),
    ("gemini_interactions", MediaPart.image(PNG, "image/svg+xml"), "2026-11", "must be one of"),
    ("gemini_generate_content", MediaPart.from_url("image", "https://x/a"), "2026-11", "mime"),
    ("openai_chat_completions", MediaPart.image(PNG, "image/png"), "2026-11", "role 'tool'"),
    ("openai_chat_completions", MediaPart.document(PDF), "2026-07-21", "text content parts"),
]


@pytest.mark.parametrize(("protocol", "part", "baseline", "rule"), REFUSED)
def test_a_part_the_provider_cannot_take_is_refused_with_its_rule(
    protocol: str, part: MediaPart, baseline: str, rule: str
) -> None:
    with pytest.raises(ContinuationError, match=rule) as refused:
        build(protocol, (TextPart("before"), part), baseline)
    assert "part #1" in str(refused.value)
    assert refused.value.provider in ("openai", "anthropic", "google")


def test_anthropic_refuses_an_image_past_5_mb_of_base64_not_of_raw_bytes() -> None:
    at = b"\x00" * (5 * 1024 * 1024 // 4 * 3)  # exactly 5,242,880 base64 characters
    assert MediaPart.image(at, "image/png").base64_size == 5 * 1024 * 1024
    one("anthropic_messages", (MediaPart.image(at, "image/png"),))
    past = at + b"\x00"
    with pytest.raises(ContinuationError, match=r"5242884 bytes > 5242880 bytes"):
        one("anthropic_messages", (MediaPart.image(past, "image/png"),))
    # the same raw bytes go to a provider that counts raw bytes
    one("openai_responses", (MediaPart.image(past, "image/png"),))


def test_generate_content_sends_media_only_to_gemini_3_or_when_told() -> None:
    image = (MediaPart.image(PNG, "image/png"),)
    for model in ("gemini-3-flash-preview", "models/gemini-3.5-pro", "gemini-10-x"):
        assert one("gemini_generate_content", image, model=model)["parts"]
    for model in ("gemini-2.5-flash", "models/gemini-2.0-pro", "tunedModels/t1", "gemini-3x"):
        with pytest.raises(ContinuationError, match=r"Gemini 3 feature"):
            one("gemini_generate_content", image, model=model)
    told = one(
        "gemini_generate_content", image, model="tunedModels/t1", function_response_parts=True
    )
    assert told["parts"]
    with pytest.raises(ContinuationError, match="function_response_parts=False"):
        one("gemini_generate_content", image, function_response_parts=False)
    one("gemini_generate_content", "text", model="gemini-2.5-flash")  # no media: no rule
    with pytest.raises(UsageError, match="function_response_parts"):
        one("gemini_generate_content", image, function_response_parts="yes")


# -- Internal and audit ------------------------------------------------------------------

INTERNAL_OUTPUTS = [
    Internal("raw"),
    {"shown": 1, "hidden": Internal({"token": "t"})},
    [1, [2, Internal(3)]],
    (TextPart("shown"), Internal(b"host bytes")),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("output", INTERNAL_OUTPUTS, ids=["whole", "nested", "deep", "part"])
def test_every_builder_refuses_an_internal_value(protocol: str, output: Any) -> None:
    with pytest.raises(ContinuationError, match="holds an Internal value"):
        build(protocol, output)


LEAKS = [
    ({"user": "u-77", "ssn": "000-00-0000"}, {"report": {"user": "u-77", "ssn": "000-00-0000"}}),
    (["a", "b"], ("x", ["a", "b"])),
    ("internal-row-9f8e", "the row is internal-row-9f8e, done"),
    ("internal-row-9f8e", (TextPart("ok"), MediaPart.from_url("image", "internal-row-9f8e"))),
    ({"k": 1}, '{"note": {"k":1}}'),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(("audit", "output"), LEAKS)
def test_every_builder_refuses_an_output_that_shows_the_audit_value(
    protocol: str, audit: Any, output: Any
) -> None:
    if type(output) is tuple and type(output[0]) is str:
        output = {"list": list(output)}
    if protocol == "openai_chat_completions" and type(output) is tuple:
        output = (TextPart("internal-row-9f8e"),)
    with pytest.raises(ContinuationError, match="audit value"):
        build(protocol, output, audit=audit)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_short_scalar_audits_are_not_searched(protocol: str) -> None:
    # a bare number or a short word cannot be told apart from ordinary output
    build(protocol, {"count": 3, "status": "ok"}, audit=3)
    build(protocol, "ok", audit="ok")


_SENTINEL = "AUDIT-SENTINEL-"
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_part = st.one_of(
    st.builds(TextPart, st.text(max_size=20)),
    st.builds(MediaPart.image, st.binary(min_size=1, max_size=64), st.just("image/png")),
    st.builds(MediaPart.document, st.binary(min_size=1, max_size=64)),
    st.builds(lambda u: MediaPart.from_url("image", f"https://example.com/{u}.png"), st.integers()),
)
_output = st.one_of(
    st.text(max_size=20),
    st.dictionaries(st.text(max_size=5), _json, max_size=4),
    st.lists(_json, max_size=4),
    st.lists(_part, min_size=1, max_size=4).map(tuple),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    protocol=st.sampled_from(PROTOCOLS),
    output=_output,
    audit=st.dictionaries(st.text(max_size=6), _json, max_size=3),
    tag=st.integers(min_value=0, max_value=10**9),
    is_error=st.booleans(),
)
def test_the_audit_value_never_appears_in_any_request(
    protocol: str, output: Any, audit: dict[str, Any], tag: int, is_error: bool
) -> None:
    audit = {**audit, "secret": f"{_SENTINEL}{tag}"}
    if protocol == "openai_chat_completions" and type(output) is tuple:
        output = tuple(p for p in output if type(p) is TextPart) or (TextPart("t"),)
    try:
        request: Any = build(protocol, output, audit=audit, is_error=is_error)
    except ContinuationError as refused:
        request = refused
    if isinstance(request, ContinuationError):  # only a provider rule may refuse generated output
        assert "cannot be sent" in str(request)
        return
    assert _SENTINEL not in json.dumps(request, ensure_ascii=False)


# -- the three media bounds, at and past each ----------------------------------------------


def _measure(protocol: str, part: MediaPart) -> int:
    size = part.base64_size if protocol == "anthropic_messages" else part.size
    assert size is not None
    return size


@pytest.mark.parametrize("protocol", MEDIA_ROOMS)
def test_bytes_per_part_at_and_past_the_bound(protocol: str) -> None:
    part = MediaPart.image(PNG, "image/png")
    bound = _measure(protocol, part)
    one(protocol, (part,), limits=Limits(max_media_part_bytes=bound))
    with pytest.raises(LimitExceededError) as exceeded:
        one(protocol, (part,), limits=Limits(max_media_part_bytes=bound - 1))
    err = exceeded.value
    assert (err.limit, err.bound, err.observed) == ("max_media_part_bytes", bound - 1, bound)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parts_per_result_at_and_past_the_bound(protocol: str) -> None:
    parts = tuple(TextPart(str(i)) for i in range(5))
    one(protocol, parts, limits=Limits(max_parts_per_result=5))
    with pytest.raises(LimitExceededError) as exceeded:
        one(protocol, parts, limits=Limits(max_parts_per_result=4))
    assert (exceeded.value.limit, exceeded.value.observed) == ("max_parts_per_result", 5)


@pytest.mark.parametrize("protocol", MEDIA_ROOMS)
def test_media_bytes_per_request_at_and_past_the_bound(protocol: str) -> None:
    parts = (MediaPart.image(PNG, "image/png"), MediaPart.document(PDF, filename="r.pdf"))
    total = sum(_measure(protocol, p) for p in parts)
    one(protocol, parts, limits=Limits(max_media_bytes_per_request=total))
    with pytest.raises(LimitExceededError) as exceeded:
        one(protocol, parts, limits=Limits(max_media_bytes_per_request=total - 1))
    assert (exceeded.value.limit, exceeded.value.observed) == ("max_media_bytes_per_request", total)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limits_must_be_a_limits_object(protocol: str) -> None:
    with pytest.raises(UsageError, match=r"limits must be a callgate\.Limits"):
        one(protocol, "x", limits={"max_parts_per_result": 1})


def test_url_and_file_id_parts_count_as_parts_not_bytes() -> None:
    parts = (MediaPart.from_url("image", "https://example.com/a.png"),) * 3
    tight = Limits(max_media_part_bytes=1, max_media_bytes_per_request=1)
    assert len(one("openai_responses", parts, limits=tight)["output"]) == 3


# -- a request with media is valid history for the next one --------------------------------


def test_each_room_accepts_its_own_media_request_as_the_next_history() -> None:
    from callgate import openai_responses
    from callgate.anthropic_messages._history import check_history
    from callgate.gemini_interactions import build_stateless_continuation
    from callgate.gemini_interactions._continuation import _check_prior

    parts = (TextPart("t"), MediaPart.image(PNG, "image/png"), MediaPart.document(PDF))
    messages = build("anthropic_messages", parts)["messages"]
    more = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]
    check_history([*messages, *more], "claude-test", None)

    room = ROOMS["gemini_interactions"]
    for baseline, sent in (("2026-11", parts), ("2026-07-21", parts[:2])):
        turn = room.turn(baseline)
        steps = build_stateless_continuation(
            turn,
            [ToolResult(room.call_id, sent)],
            snapshot_source=turn.origin,
            prior_input_steps=[{"type": "user_input", "content": [{"type": "text", "text": "x"}]}],
            model="gemini-3-flash-preview",
            tools=[{"type": "function", "name": "shot", "parameters": {"type": "object"}}],
        )["input"]
        assert steps[-1]["result"][1]["type"] == "image"
        _check_prior(steps, baseline)

    first = build("gemini_generate_content", parts)["body"]["contents"]
    again = [*first, {"role": "model", "parts": [{"text": "ok"}]}, first[0]]
    room = ROOMS["gemini_generate_content"]
    result = [ToolResult(room.call_id, parts)]
    contents = room.build(room.turn("2026-11"), result, history=again)["body"]["contents"]
    assert contents[: len(again)] == again

    room = ROOMS["openai_responses"]
    turn = room.turn("2026-11")
    tools = [{"type": "function", "name": "shot", "parameters": {}, "strict": False}]
    result = [ToolResult(room.call_id, parts)]
    items = openai_responses.build_stateless_continuation(
        turn, result, prior_input_items=[], store=False, model="m", instructions=None, tools=tools
    )["input"]
    again_items = openai_responses.build_stateless_continuation(
        turn,
        result,
        prior_input_items=items,
        store=False,
        model="m",
        instructions=None,
        tools=tools,
    )["input"]
    assert again_items[: len(items)] == items


def test_documented_request_sizes_are_refused_with_their_rule() -> None:
    # Anthropic: 32 MB per request on standard endpoints, inline media counted as base64
    half = b"%" * (16 * 1024 * 1024 // 4 * 3)  # 16 MiB of base64 each
    at = (MediaPart.document(half), MediaPart.document(half))
    assert sum(p.base64_size or 0 for p in at) == 32 * 1024 * 1024
    one("anthropic_messages", at)
    past = (MediaPart.document(half), MediaPart.document(half + b"%"))
    with pytest.raises(ContinuationError, match="request size limit is 32 MB"):
        one("anthropic_messages", past)
    # generateContent: 20 MB of inline data per request, base64 in transit
    inline = b"\x00" * (20 * 1024 * 1024 // 4 * 3)
    one("gemini_generate_content", (MediaPart.image(inline, "image/png"),))
    with pytest.raises(ContinuationError, match="20 MB per request"):
        one("gemini_generate_content", (MediaPart.image(inline + b"\x00", "image/png"),))
