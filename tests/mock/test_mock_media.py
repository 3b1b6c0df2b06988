"""Media in tool results: the mock answers what each provider answers (issue 30), over a
real socket, and its bounds hold at and beyond each limit. Which error texts are the
providers' own and which are the mock's is said in each ``_providers/<protocol>/_media.py``
and in docs/request-validation.md."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder
from callgate.mock._providers._media_kit import elide_media, media_in
from callgate.mock._providers.anthropic_messages._media import media_problem as anthropic_media
from callgate.mock._providers.gemini_generate_content._media import media_problem as ggc_media
from callgate.mock._providers.gemini_interactions._media import media_problem as gi_media
from callgate.mock._providers.openai_responses._media import media_problem as openai_media

from .conftest import AUTH, PATHS

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2
B64 = base64.b64encode(PNG).decode()
MiB = 1024 * 1024


def _openai(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "input": [
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": [part]},
        ],
    }


def _chat(part: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return {
        "model": "gpt-5",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": [part]},
        ],
    }


_USE = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
_RESULT = {"type": "tool_result", "tool_use_id": "t1"}


def _anthropic(media_type: str, data: str, kind: str = "image") -> dict[str, Any]:
    block = {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {
        "model": "claude",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [_USE]},
            {"role": "user", "content": [{**_RESULT, "content": [block]}]},
        ],
    }


def _gi(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gemini",
        "input": [{"type": "function_result", "call_id": "c1", "name": "f", "result": [item]}],
    }


def _ggc(inline: dict[str, Any]) -> dict[str, Any]:
    answer = {"name": "f", "response": {"output": "x"}, "parts": [{"inline_data": inline}]}
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": answer}]},
        ]
    }


_CHAT_IMAGE = (
    "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but "
    "this message with role 'tool' contains an image URL."
)
_ANTHROPIC_TYPES = (
    "messages.2.content.0.content.0.image.source.base64.media_type: Input should be "
    "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
)
_PRE_3 = (
    "Unable to submit request because `function_response.parts` is not supported for this model."
)
_IMG = "input_image"
_BMP_URL = f"data:image/bmp;base64,{B64}"
_PDF_BAD = {"type": "input_file", "file_data": "data:application/pdf;base64,%%", "filename": "a"}
_CHAT_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}
_GI_NOPE = {"type": "image", "mime_type": "image/x-nope", "data": B64}
_GI_BAD = {"type": "image", "mime_type": "image/png", "data": "***"}
_GGC_25 = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"

# case -> (protocol, body, path or None, what the answer's message says)
REFUSED: dict[str, tuple[str, dict[str, Any], str | None, str]] = {
    "openai bmp": (
        "openai_responses",
        _openai({"type": _IMG, "image_url": _BMP_URL}),
        None,
        "unsupported image media type 'image/bmp'",
    ),
    "openai bad base64": (
        "openai_responses",
        _openai({"type": _IMG, "image_url": "data:image/png;base64,@@@"}),
        None,
        "not valid base64",
    ),
    "openai file base64": (
        "openai_responses",
        _openai(_PDF_BAD),
        None,
        "expected base64-encoded file data",
    ),
    "chat image": ("openai_chat_completions", _chat(_CHAT_URL), None, _CHAT_IMAGE),
    "chat file": (
        "openai_chat_completions",
        _chat({"type": "file", "file": {"file_data": B64}}),
        None,
        "File inputs are only allowed",
    ),
    "anthropic bmp": ("anthropic_messages", _anthropic("image/bmp", B64), None, _ANTHROPIC_TYPES),
    "anthropic bad base64": (
        "anthropic_messages",
        _anthropic("image/png", "not base64!"),
        None,
        "not valid base64",
    ),
    "anthropic pdf base64": (
        "anthropic_messages",
        _anthropic("application/pdf", "%PDF", "document"),
        None,
        "document.source.base64.data",
    ),
    "gemini mime": (
        "gemini_interactions",
        _gi(_GI_NOPE),
        None,
        "'image/x-nope' is not a supported image MIME type",
    ),
    "gemini bad base64": (
        "gemini_interactions",
        _gi(_GI_BAD),
        None,
        "(TYPE_BYTES), Base64 decoding failed",
    ),
    "ggc no mime": ("gemini_generate_content", _ggc({"data": B64}), None, "MIME type is required"),
    "ggc bad base64": (
        "gemini_generate_content",
        _ggc({"mime_type": "image/png", "data": "***"}),
        None,
        "Base64 decoding failed",
    ),
    "ggc gemini 2.5": (
        "gemini_generate_content",
        _ggc({"mime_type": "image/png", "data": B64}),
        _GGC_25,
        _PRE_3,
    ),
}
PROTOCOLS = sorted({case[0] for case in REFUSED.values()})


def _message(protocol: str, error: dict[str, Any]) -> str:
    if protocol in ("openai_responses", "openai_chat_completions"):
        assert error["error"]["type"] == "invalid_request_error"
        return str(error["error"]["message"])
    if protocol == "anthropic_messages":
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
        return str(error["error"]["message"])
    if protocol == "gemini_interactions":
        assert error["error"]["code"] == "invalid_request"
        return str(error["error"]["message"])
    assert error["error"]["status"] == "INVALID_ARGUMENT"
    return str(error["error"]["message"])


def _script(**validation: bool) -> Any:
    builder = ScriptBuilder(seed=1, validation=validation)
    for protocol in PROTOCOLS:
        builder.turn(protocol, conversation=protocol, text="served")
    return builder.build()


@pytest.fixture(scope="module")
def server() -> Any:
    with MockServer(_script()) as running:
        yield running


def _post(server: MockServer, protocol: str, body: Any, path: str | None = None) -> Any:
    headers = {**AUTH[protocol], "x-callgate-conversation": protocol}
    return httpx.post(
        server.url + (path or PATHS[protocol]), json=body, headers=headers, timeout=30
    )


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_media_the_provider_refuses_gets_its_400(server: MockServer, case: str) -> None:
    protocol, body, path, says = REFUSED[case]
    reply = _post(server, protocol, body, path)
    assert reply.status_code == 400, reply.text
    assert says in _message(protocol, reply.json())
    last = server.journal.last(conversation=protocol)
    assert (last.status, last.outcome) == (400, "rejected")
    assert server.state.remaining()[protocol] == 1  # the refusal consumed no turn


def test_openai_names_the_part_and_uses_its_error_codes(server: MockServer) -> None:
    reply = _post(server, "openai_responses", REFUSED["openai bmp"][1])
    error = reply.json()["error"]
    assert (error["param"], error["code"]) == (
        "input[1].output[0].image_url",
        "unsupported_image_media_type",
    )
    bad = _post(server, "openai_responses", REFUSED["openai bad base64"][1]).json()["error"]
    assert bad["code"] == "invalid_base64_image"


def test_anthropic_counts_its_5_mb_on_the_base64_string(server: MockServer) -> None:
    at = base64.b64encode(bytes(3 * MiB * 5 // 4)).decode()  # 5,242,880 base64 characters
    assert len(at) == 5 * MiB
    assert anthropic_media(_anthropic("image/png", at)) is None
    over = base64.b64encode(bytes(3 * MiB * 5 // 4 + 1)).decode()
    reply = _post(server, "anthropic_messages", _anthropic("image/png", over))
    assert reply.status_code == 400
    assert _message("anthropic_messages", reply.json()) == (
        "messages.2.content.0.content.0.image.source.base64: image exceeds 5 MB maximum: "
        f"{len(over)} bytes > 5242880 bytes"
    )


def test_openai_and_gemini_bounds_count_decoded_bytes_at_and_beyond() -> None:
    def png(size: int) -> str:
        return base64.b64encode(bytes(size)).decode()

    at, over = png(20 * MiB), png(20 * MiB + 1)
    url = "data:image/png;base64,"
    assert openai_media(_openai({"type": "input_image", "image_url": url + at})) is None
    refused = openai_media(_openai({"type": "input_image", "image_url": url + over}))
    assert refused is not None
    assert refused.body["error"]["code"] == "image_file_too_large"
    assert gi_media(_gi({"type": "image", "mime_type": "image/png", "data": at})) is None
    refused = gi_media(_gi({"type": "image", "mime_type": "image/png", "data": over}))
    assert refused is not None
    assert "exceeds the limit: 20971520 bytes" in refused.body["error"]["message"]
    assert ggc_media(_ggc({"mime_type": "image/png", "data": at})) is None
    assert ggc_media(_ggc({"mime_type": "image/png", "data": over})) is not None


def test_generate_content_takes_url_safe_base64_as_the_sdks_send_it() -> None:
    data = bytes([0xFB, 0xFF]) * 200  # encodes to '+' and '/' in the standard alphabet
    urlsafe = base64.urlsafe_b64encode(data).decode()
    assert "-" in urlsafe or "_" in urlsafe
    assert ggc_media(_ggc({"mime_type": "image/png", "data": urlsafe})) is None
    (found,) = media_in(_ggc({"mime_type": "image/png", "data": urlsafe}))
    assert found.summary(urlsafe=True)["digest"] == hashlib.sha256(data).hexdigest()


def test_the_request_switch_lets_media_through_to_the_script() -> None:
    with MockServer(_script(anthropic_request_valid=False)) as running:
        reply = _post(running, "anthropic_messages", REFUSED["anthropic bmp"][1])
        assert reply.status_code == 200, reply.text
        assert running.state.remaining()["anthropic_messages"] == 0


def test_the_journal_keeps_a_digest_and_size_instead_of_the_bytes(server: MockServer) -> None:
    _post(server, "openai_responses", REFUSED["openai bmp"][1])
    entry = server.journal.last(conversation="openai_responses")
    part = entry.body["input"][1]["output"][0]
    digest = hashlib.sha256(PNG).hexdigest()
    assert part["image_url"] == f"data:image/bmp;base64,<media sha256={digest} size={len(PNG)}>"


def test_eliding_copies_and_leaves_short_payloads_alone() -> None:
    body = _anthropic("image/png", B64)
    short = _anthropic("image/png", "iVBORw0KGgo=")
    elided = elide_media(body)
    assert body["messages"][2]["content"][0]["content"][0]["source"]["data"] == B64  # unchanged
    source = elided["messages"][2]["content"][0]["content"][0]["source"]
    assert source["data"] == f"<media sha256={hashlib.sha256(PNG).hexdigest()} size={len(PNG)}>"
    assert elide_media(short) is short
    bad = elide_media(_gi({"type": "image", "mime_type": "image/png", "data": "*" * 300}))
    assert bad["input"][0]["result"][0]["data"] == "<media not base64, 300 chars>"


def test_the_providers_media_facts_are_the_rooms_own_objects() -> None:
    """One source: the mock reads the rooms' public media facts, it keeps no copy."""
    from callgate import anthropic_messages, gemini_interactions, openai_responses
    from callgate.anthropic_messages import _media as anthropic_room
    from callgate.gemini_interactions import _media as gi_room
    from callgate.mock._providers.anthropic_messages import _media as anthropic_mock
    from callgate.mock._providers.gemini_interactions import _media as gi_mock
    from callgate.mock._providers.openai_responses import _media as openai_mock
    from callgate.openai_responses import _media as openai_room

    assert openai_mock.IMAGE_TYPES is openai_responses.IMAGE_TYPES is openai_room.IMAGE_TYPES
    assert anthropic_mock.IMAGE_TYPES is anthropic_messages.IMAGE_TYPES
    assert anthropic_messages.IMAGE_TYPES is anthropic_room.IMAGE_TYPES
    assert anthropic_mock.IMAGE_BASE64_MAX == anthropic_room.IMAGE_BASE64_MAX == 5 * 1024 * 1024
    assert gi_mock.MEDIA_TYPES is gemini_interactions.MEDIA_TYPES is gi_room.MEDIA_TYPES
    with pytest.raises(TypeError):  # a public fact cannot be edited in place
        gemini_interactions.MEDIA_TYPES["image"] = frozenset()  # type: ignore[index]
