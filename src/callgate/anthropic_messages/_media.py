"""Tool results with media, in the shape Anthropic Messages takes them.

``tool_result.content`` is a string or a list of blocks (anthropic 0.117.0 and 2.14.0
``tool_result_block_param.py``): ``text``, ``image`` with a ``base64`` (``image/jpeg``,
``png``, ``gif``, ``webp``) or ``url`` source, ``document`` with a ``base64`` PDF, a
``text`` (``text/plain``) or ``url`` source and an optional ``title``. A ``file`` source
(``{"type": "file", "file_id"}``) is GA only in 2.14.0, the 2026-11 baseline; in 0.117.0
it exists only in the beta types, so the 2026-07-21 baseline refuses it. Audio and video
have no block. An image is refused past 5 MB of base64 ("image exceeds 5 MB maximum: N
bytes > 5242880 bytes", anthropics/claude-code#14887): Anthropic measures the encoded
string, so ``Limits`` counts base64 characters here too. Inline media past 32 MB of base64
in one request is refused (the documented request size limit of standard endpoints). A
document's ``filename`` is sent as its ``title``; an image block has no name field, so an
image's filename is not sent.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .._media import MediaPart, TextPart
from .._results import ToolResult
from .._visible import refuse
from ._events import PROVIDER

__all__ = [
    "API",
    "IMAGE_BASE64_MAX",
    "IMAGE_TYPES",
    "REQUEST_MAX",
    "REQUEST_RULE",
    "render_content",
]

API = "Anthropic Messages"
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
IMAGE_BASE64_MAX = 5 * 1024 * 1024
# "request size limits (32 MB for standard endpoints ...)", vision and PDF-support docs
REQUEST_MAX = 32 * 1024 * 1024
REQUEST_RULE = "the request size limit is 32 MB on standard endpoints"
_FILE_SOURCES = frozenset({"2026-11"})


def _source(part: MediaPart, baseline: str, no: Any) -> dict[str, Any]:
    if part.url is not None:
        return {"type": "url", "url": part.url}
    if part.file_id is not None:
        if baseline not in _FILE_SOURCES:
            no(
                f"a file source needs the 2026-11 baseline (anthropic 2.14.0); under "
                f"{baseline} (anthropic 0.117.0) file sources are beta-only"
            )
        return {"type": "file", "file_id": part.file_id}
    return {"type": "base64", "media_type": part.media_type, "data": part.base64()}


def _media(result: ToolResult, index: int, part: MediaPart, baseline: str) -> dict[str, Any]:
    def no(rule: str) -> NoReturn:
        refuse(API, PROVIDER, result.call_id, index, part, rule)

    if part.kind == "image":
        if part.data is not None:
            if part.media_type not in IMAGE_TYPES:
                no(f"an image source must be one of {sorted(IMAGE_TYPES)}")
            size = part.base64_size or 0
            if size > IMAGE_BASE64_MAX:
                no(f"image exceeds 5 MB maximum: {size} bytes > {IMAGE_BASE64_MAX} bytes (base64)")
        return {"type": "image", "source": _source(part, baseline, no)}
    if part.kind == "document":
        source: dict[str, Any]
        if part.data is not None and part.media_type == "text/plain":
            try:
                text = part.data.decode("utf-8")
            except UnicodeDecodeError:
                no("a text/plain document source must be UTF-8 text")
            source = {"type": "text", "media_type": "text/plain", "data": text}
        elif part.data is not None and part.media_type != "application/pdf":
            no("an inline document must be application/pdf (base64) or text/plain (text)")
        else:
            source = _source(part, baseline, no)
        block: dict[str, Any] = {"type": "document", "source": source}
        if part.filename is not None:
            block["title"] = part.filename
        return block
    no(f"tool_result content takes text, image and document blocks; there is no {part.kind}")


def render_content(result: ToolResult, baseline: str) -> list[dict[str, Any]]:
    """The ``tool_result.content`` blocks for a result whose output is parts."""
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(result.parts):
        if type(part) is TextPart:
            blocks.append({"type": "text", "text": part.text})
        elif type(part) is MediaPart:
            blocks.append(_media(result, index, part, baseline))
    return blocks
