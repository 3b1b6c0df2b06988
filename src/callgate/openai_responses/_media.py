"""Tool results with media, in the shape the Responses API takes them.

``function_call_output.output`` is a string or a list of input parts (openai 2.46.0 and
3.57.0 ``response_function_call_output_item_param.py``, the same union in both):
``input_text {text}``, ``input_image {image_url | file_id, detail?}`` and
``input_file {file_data | file_id | file_url, filename?}``. Inline images go as a data URL
in ``image_url`` ("A fully qualified URL or base64 encoded image in a data URL"); inline
files as a data URL in ``file_data`` with their ``filename``, as the file-inputs guide
sends them (https://developers.openai.com/api/docs/guides/file-inputs). ``detail`` is
optional and not sent. Audio and video have no part type and are refused; an inline
image must be PNG, JPEG, WEBP or GIF. Raw bytes are counted against ``Limits``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .._media import MediaPart, TextPart
from .._results import ToolResult
from .._visible import refuse
from ._events import PROVIDER

__all__ = ["API", "IMAGE_TYPES", "render_parts"]

API = "OpenAI Responses"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})


def _media(result: ToolResult, index: int, part: MediaPart) -> dict[str, Any]:
    def no(rule: str) -> NoReturn:
        refuse(API, PROVIDER, result.call_id, index, part, rule)

    if part.kind == "image":
        if part.data is not None:
            if part.media_type not in IMAGE_TYPES:
                no(f"an inline input_image must be one of {sorted(IMAGE_TYPES)}")
            return {
                "type": "input_image",
                "image_url": f"data:{part.media_type};base64,{part.base64()}",
            }
        if part.url is not None:
            return {"type": "input_image", "image_url": part.url}
        return {"type": "input_image", "file_id": part.file_id}
    if part.kind == "document":
        block: dict[str, Any] = {"type": "input_file"}
        if part.data is not None:
            block["file_data"] = f"data:{part.media_type};base64,{part.base64()}"
        elif part.url is not None:
            block["file_url"] = part.url
        else:
            block["file_id"] = part.file_id
        if part.filename is not None:
            block["filename"] = part.filename
        return block
    no(
        "function_call_output.output takes input_text, input_image and input_file parts "
        f"only; there is no {part.kind} part"
    )


def render_parts(result: ToolResult) -> list[dict[str, Any]]:
    """The ``function_call_output.output`` list for a result whose output is parts."""
    rendered: list[dict[str, Any]] = []
    for index, part in enumerate(result.parts):
        if type(part) is TextPart:
            rendered.append({"type": "input_text", "text": part.text})
        elif type(part) is MediaPart:
            rendered.append(_media(result, index, part))
    return rendered
