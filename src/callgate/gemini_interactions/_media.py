"""Tool results with media, in the shape the Interactions API takes them.

``function_result.result`` is an object, a string or a list of subcontent (google-genai
2.12.1 and 3.6.1 ``FunctionResultStep``). Under the 2026-07-21 baseline (2.12.1) the
subcontent union is ``text`` and ``image`` only; 2.12.1 serializes a ``document`` as
``{"type": "UNKNOWN", ...}``, so documents, audio and video are refused there. Under
2026-11 (3.6.1) it adds ``document``, ``audio`` and ``video``. Each media block is
``{type, data (standard base64) | uri, mime_type}``; the inline MIME types are the ones
the 3.6.1 types list (``imagecontent.py``, ``documentcontent.py``, ``audiocontent.py``,
``videocontent.py``). A provider file is addressed by its ``uri``, so a ``file_id`` part is
refused (use ``MediaPart.from_url`` with the Files API URI). A video's ``filename`` is its
``name``; the other blocks have no name field. Raw bytes are counted against ``Limits``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from .._media import MediaPart, TextPart
from .._results import ToolResult
from .._visible import refuse
from ._events import PROVIDER

__all__ = ["API", "MEDIA_TYPES", "render_result"]

API = "Gemini Interactions"
#: The inline MIME types each subcontent kind takes (google-genai 3.6.1 types); read-only.
MEDIA_TYPES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "image": frozenset(
            f"image/{s}" for s in ("png", "jpeg", "webp", "heic", "heif", "gif", "bmp", "tiff")
        ),
        "document": frozenset(
            {
                "application/pdf",
                "text/csv",
                "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                "application/vnd.ms-powerpoint",
                "application/vnd.oasis.opendocument.presentation",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                "application/msword",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.template",
                "application/vnd.oasis.opendocument.text",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                "application/vnd.ms-excel",
                "application/vnd.oasis.opendocument.spreadsheet",
            }
        ),
        "audio": frozenset(
            f"audio/{s}"
            for s in (
                *("wav", "mp3", "aiff", "aac", "ogg", "flac", "mpeg"),
                *("m4a", "l16", "opus", "alaw", "mulaw", "webm"),
            )
        ),
        "video": frozenset(
            f"video/{s}"
            for s in ("mp4", "mpeg", "mpg", "mov", "avi", "x-flv", "webm", "wmv", "3gpp")
        ),
    }
)
#: The subcontent kinds each baseline's function_result takes, besides text.
KINDS = {"2026-07-21": frozenset({"image"}), "2026-11": frozenset(MEDIA_TYPES)}


def _media(result: ToolResult, index: int, part: MediaPart, baseline: str) -> dict[str, Any]:
    def no(rule: str) -> NoReturn:
        refuse(API, PROVIDER, result.call_id, index, part, rule)

    if part.kind not in KINDS[baseline]:
        no(
            f"under the {baseline} baseline function_result subcontent is "
            f"{['text', *sorted(KINDS[baseline])]}; {part.kind} needs the 2026-11 baseline"
        )
    if part.file_id is not None:
        no("Interactions address a provider file by uri; pass the Files API URI as url")
    block: dict[str, Any] = {"type": part.kind}
    if part.data is not None:
        if part.media_type not in MEDIA_TYPES[part.kind]:
            no(f"an inline {part.kind} must be one of {sorted(MEDIA_TYPES[part.kind])}")
        block["data"] = part.base64()
    else:
        block["uri"] = part.url
    if part.media_type is not None:
        block["mime_type"] = part.media_type
    if part.kind == "video" and part.filename is not None:
        block["name"] = part.filename
    return block


def render_result(result: ToolResult, baseline: str) -> list[dict[str, Any]]:
    """The ``function_result.result`` subcontent list for a result whose output is parts."""
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(result.parts):
        if type(part) is TextPart:
            blocks.append({"type": "text", "text": part.text})
        elif type(part) is MediaPart:
            blocks.append(_media(result, index, part, baseline))
    return blocks
