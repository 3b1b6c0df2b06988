"""A tool returns a text, a PNG and a PDF: each room's builder renders exactly the tool result
the official SDK sends for the same content built with its own typed params (captured on
the wire: httpx MockTransport for openai and anthropic, a loopback server for google-genai).

Runs under the current SDKs (openai 3.57.0, anthropic 2.14.0, google-genai 3.6.1, the
2026-11 baseline) and, in the baseline venv (``make test-baseline``), under openai 2.46.0,
anthropic 0.117.0 and google-genai 2.12.1 (the 2026-07-21 baseline); where a generation's
types cannot carry a part, the builder's refusal is asserted instead.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest

from callgate import ContinuationError, MediaPart, TextPart, ToolResult

from .gemini_generate_content.sdk_server import serve
from .media_rooms import ROOMS, rendered

httpx = pytest.importorskip("httpx")

TEXT = "Here are the chart and the report."
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3  # the bytes are opaque to every builder
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n" + bytes(range(200, 256))
B64_PNG = base64.b64encode(PNG).decode()
B64_PDF = base64.b64encode(PDF).decode()
PARTS = (
    TextPart(TEXT),
    MediaPart.image(PNG, "image/png"),
    MediaPart.document(PDF, filename="report.pdf"),
)


def _result(protocol: str, parts: tuple[Any, ...] = PARTS, **kw: Any) -> list[ToolResult]:
    return [ToolResult(ROOMS[protocol].call_id, parts, **kw)]


def _ours(protocol: str, baseline: str, parts: tuple[Any, ...] = PARTS, **kw: Any) -> Any:
    room = ROOMS[protocol]
    return rendered(protocol, room.build(room.turn(baseline), _result(protocol, parts), **kw))


def _capture(make_client: Any, send: Any) -> dict[str, Any]:
    """Drive an httpx-based SDK through a MockTransport; return the JSON body it sent."""
    seen: list[bytes] = []

    def handler(request: Any) -> Any:
        seen.append(request.read())
        return httpx.Response(400, json={"error": {"type": "captured", "message": "captured"}})

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        client = make_client(http)
        with pytest.raises(Exception, match="captured"):
            send(client)
    assert len(seen) == 1
    body: dict[str, Any] = json.loads(seen[0])
    return body


def _loopback(make_client: Any, send: Any) -> dict[str, Any]:
    """Drive an SDK against a loopback server (anthropic 2.x uses httpx2, not httpx)."""
    with serve(b"{}", content_type="application/json") as (url, seen):
        client = make_client(url)
        try:
            send(client)
        except Exception:  # only the request body is compared
            pass
        finally:
            client.close()
    assert len(seen) == 1
    body: dict[str, Any] = seen[0][1]
    return body


# -- OpenAI Responses ------------------------------------------------------------------


def test_openai_responses_function_call_output_equals_the_sdk() -> None:
    openai = pytest.importorskip("openai")
    from openai.types.responses.response_input_file_content_param import (
        ResponseInputFileContentParam,
    )
    from openai.types.responses.response_input_image_content_param import (
        ResponseInputImageContentParam,
    )
    from openai.types.responses.response_input_param import FunctionCallOutput
    from openai.types.responses.response_input_text_content_param import (
        ResponseInputTextContentParam,
    )

    baseline = "2026-11" if openai.__version__.startswith("3.") else "2026-07-21"
    item = FunctionCallOutput(
        type="function_call_output",
        call_id="call_shot",
        output=[
            ResponseInputTextContentParam(type="input_text", text=TEXT),
            ResponseInputImageContentParam(
                type="input_image", image_url=f"data:image/png;base64,{B64_PNG}"
            ),
            ResponseInputFileContentParam(
                type="input_file",
                file_data=f"data:application/pdf;base64,{B64_PDF}",
                filename="report.pdf",
            ),
        ],
    )
    body = _capture(
        lambda http: openai.OpenAI(
            api_key="k", base_url="http://sdk.test/v1", http_client=http, max_retries=0
        ),
        lambda client: client.responses.create(
            model="gpt-test", previous_response_id="resp_1", store=True, input=[item]
        ),
    )
    assert body["input"] == [_ours("openai_responses", baseline)]


def test_openai_responses_urls_and_file_ids_equal_the_sdk() -> None:
    openai = pytest.importorskip("openai")
    parts = (
        MediaPart.from_url("image", "https://example.com/chart.png"),
        MediaPart.from_file_id("image", "file-img"),
        MediaPart.from_url("document", "https://example.com/report.pdf"),
        MediaPart.from_file_id("document", "file-pdf", filename="report.pdf"),
    )
    output = [
        {"type": "input_image", "image_url": "https://example.com/chart.png"},
        {"type": "input_image", "file_id": "file-img"},
        {"type": "input_file", "file_url": "https://example.com/report.pdf"},
        {"type": "input_file", "file_id": "file-pdf", "filename": "report.pdf"},
    ]
    body = _capture(
        lambda http: openai.OpenAI(
            api_key="k", base_url="http://sdk.test/v1", http_client=http, max_retries=0
        ),
        lambda client: client.responses.create(
            model="gpt-test",
            input=[{"type": "function_call_output", "call_id": "call_shot", "output": output}],
        ),
    )
    assert body["input"][0]["output"] == _ours("openai_responses", "2026-11", parts)["output"]


# -- Anthropic Messages ----------------------------------------------------------------


def test_anthropic_tool_result_equals_the_sdk_which_encodes_the_bytes_itself() -> None:
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import (
        Base64ImageSourceParam,
        Base64PDFSourceParam,
        DocumentBlockParam,
        ImageBlockParam,
        TextBlockParam,
        ToolResultBlockParam,
    )

    baseline = "2026-07-21" if anthropic.__version__.startswith("0.") else "2026-11"
    block = ToolResultBlockParam(
        type="tool_result",
        tool_use_id="toolu_shot",
        is_error=True,
        content=[
            TextBlockParam(type="text", text=TEXT),
            # binary IO: the SDK base64-encodes it (both generations)
            ImageBlockParam(
                type="image",
                source=Base64ImageSourceParam(
                    type="base64", media_type="image/png", data=io.BytesIO(PNG)
                ),
            ),
            DocumentBlockParam(
                type="document",
                source=Base64PDFSourceParam(
                    type="base64", media_type="application/pdf", data=B64_PDF
                ),
                title="report.pdf",
            ),
        ],
    )
    body = _loopback(
        lambda url: anthropic.Anthropic(api_key="k", base_url=url, max_retries=0),
        lambda client: client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[{"role": "user", "content": [block]}],
        ),
    )
    ours = ROOMS["anthropic_messages"]
    request = ours.build(ours.turn(baseline), _result("anthropic_messages", is_error=True))
    assert body["messages"][0]["content"][0] == rendered("anthropic_messages", request)


def test_anthropic_file_sources_only_under_the_2026_11_baseline() -> None:
    anthropic = pytest.importorskip("anthropic")
    parts = (
        MediaPart.from_url("image", "https://example.com/chart.png"),
        MediaPart.from_file_id("image", "file_img"),
        MediaPart.from_file_id("document", "file_pdf"),
    )
    with pytest.raises(ContinuationError, match="beta-only") as refused:
        _ours("anthropic_messages", "2026-07-21", parts)
    assert "part #1" in str(refused.value)
    if anthropic.__version__.startswith("0."):
        assert not hasattr(anthropic.types, "FileImageSourceParam")  # beta types only
        return
    from anthropic.types import (
        DocumentBlockParam,
        FileDocumentSourceParam,
        FileImageSourceParam,
        ImageBlockParam,
        URLImageSourceParam,
    )

    content = [
        ImageBlockParam(
            type="image",
            source=URLImageSourceParam(type="url", url="https://example.com/chart.png"),
        ),
        ImageBlockParam(type="image", source=FileImageSourceParam(type="file", file_id="file_img")),
        DocumentBlockParam(
            type="document", source=FileDocumentSourceParam(type="file", file_id="file_pdf")
        ),
    ]
    body = _loopback(
        lambda url: anthropic.Anthropic(api_key="k", base_url=url, max_retries=0),
        lambda client: client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_shot", "content": content}
                    ],
                }
            ],
        ),
    )
    assert body["messages"][0]["content"][0] == _ours("anthropic_messages", "2026-11", parts)


# -- Gemini (both APIs through google-genai, on a loopback server) ---------------------


def _genai_body(send: Any, api_version: str | None = None) -> dict[str, Any]:
    genai = pytest.importorskip("google.genai")
    options: dict[str, Any] = {"retry_options": {"attempts": 1}}
    if api_version is not None:
        options["api_version"] = api_version
    return _loopback(
        lambda url: genai.Client(api_key="k", http_options={"base_url": url, **options}), send
    )


def test_interactions_function_result_equals_the_sdk_per_generation() -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai._gaos.types.interactions import (
        DocumentContentParam,
        FunctionResultStepParam,
        ImageContentParam,
        TextContentParam,
    )

    current = genai.__version__.startswith("3.")
    text = TextContentParam(type="text", text=TEXT)
    image = ImageContentParam(type="image", data=B64_PNG, mime_type="image/png")
    pdf = DocumentContentParam(type="document", data=B64_PDF, mime_type="application/pdf")
    result: list[Any] = [text, image, pdf] if current else [text, image]
    step = FunctionResultStepParam(
        type="function_result", call_id="fc_shot", name="shot", result=result
    )
    body = _genai_body(
        lambda client: client.interactions.create(
            model="gemini-3-flash-preview",
            previous_interaction_id="int_1",
            store=True,
            input=[step],
        ),
        api_version="v1",
    )
    sent = body["input"][0]
    if current:
        assert sent == _ours("gemini_interactions", "2026-11")
        return
    assert sent == _ours("gemini_interactions", "2026-07-21", PARTS[:2])
    with pytest.raises(ContinuationError, match="needs the 2026-11 baseline"):
        _ours("gemini_interactions", "2026-07-21")
    # why: 2.12.1 has no document subcontent and puts its unknown-variant wrapper on the wire
    step["result"] = [text, image, pdf]
    body = _genai_body(
        lambda client: client.interactions.create(
            model="gemini-3-flash-preview", previous_interaction_id="int_1", input=[step]
        ),
        api_version="v1",
    )
    assert body["input"][0]["result"][2]["type"] == "UNKNOWN"


def test_generate_content_function_response_parts_equal_the_sdk() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    parts = (
        *PARTS,
        MediaPart.from_url("document", "https://example.com/a.pdf", media_type="application/pdf"),
    )
    answer = types.FunctionResponse(
        id="fc_shot",
        name="shot",
        response={"output": [TEXT]},
        parts=[
            types.FunctionResponsePart(
                inline_data=types.FunctionResponseBlob(mime_type="image/png", data=PNG)
            ),
            types.FunctionResponsePart(
                inline_data=types.FunctionResponseBlob(
                    mime_type="application/pdf", data=PDF, display_name="report.pdf"
                )
            ),
            types.FunctionResponsePart(
                file_data=types.FunctionResponseFileData(
                    file_uri="https://example.com/a.pdf", mime_type="application/pdf"
                )
            ),
        ],
    )
    body = _genai_body(
        lambda client: client.models.generate_content(
            model="gemini-3-flash-preview",
            contents=[types.Content(role="user", parts=[types.Part(function_response=answer)])],
        )
    )
    sent = body["contents"][0]["parts"][0]["functionResponse"]
    for baseline in ("2026-07-21", "2026-11"):  # parts exist in both generations' types
        assert sent == _ours("gemini_generate_content", baseline, parts)


# -- OpenAI Chat Completions -----------------------------------------------------------


def test_chat_completions_sends_text_parts_like_the_sdk_and_refuses_media() -> None:
    openai = pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionContentPartTextParam, ChatCompletionToolMessageParam

    message = ChatCompletionToolMessageParam(
        role="tool",
        tool_call_id="call_shot",
        content=[ChatCompletionContentPartTextParam(type="text", text=TEXT)],
    )
    body = _capture(
        lambda http: openai.OpenAI(
            api_key="k", base_url="http://sdk.test/v1", http_client=http, max_retries=0
        ),
        lambda client: client.chat.completions.create(model="gpt-test", messages=[message]),
    )
    for baseline in ("2026-07-21", "2026-11"):
        assert body["messages"][0] == _ours("openai_chat_completions", baseline, PARTS[:1])
        with pytest.raises(ContinuationError, match=r"part #1 .*role 'tool' message takes text"):
            _ours("openai_chat_completions", baseline)
