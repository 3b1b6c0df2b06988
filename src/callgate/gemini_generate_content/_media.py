"""Tool results with media, in the shape generateContent takes them.

``functionResponse`` has a ``response`` object and, in both google-genai 2.12.1 and
3.6.1, ``parts``: "Ordered `Parts` that constitute a function response. Parts may have
different IANA MIME types" (``types.FunctionResponse``). Each part holds ``inline_data
{mime_type, data, display_name?}`` or ``file_data {file_uri, mime_type, display_name?}``
(``FunctionResponseBlob`` / ``FunctionResponseFileData``: both MIME types "Required").
Both SDK generations send these nested keys in snake_case and the bytes as URL-safe base64,
and this builder sends exactly that. The text parts of the result go in
``response`` as ``{"output": [text, ...]}`` (``{"error": [...]}`` for an error result).

Media parts in a function response are a Gemini 3 feature: a Gemini 2.5 model answers 400
"`function_response.parts` is not supported for this model" (google-gemini/gemini-cli#19436).
The builder sends them only to a model it reads as Gemini 3 or later (``gemini-3``,
``gemini-3.5-flash``, ...) unless the caller states ``function_response_parts=True``; a
``url`` or ``file_id`` (a Files API URI) needs its ``media_type``. The MIME types a model
takes in a function response are not documented, so none is refused here by type. Inline
media past 20 MB of base64 in one request is refused (the documented inline-data limit).
"""

from __future__ import annotations

import base64
import re
from typing import Any, NoReturn

from .._errors import ContinuationError
from .._media import MediaPart, TextPart
from .._results import ToolResult
from .._visible import refuse
from ._events import PROVIDER

__all__ = ["API", "INLINE_MAX", "INLINE_RULE", "model_takes_parts", "render_response"]

API = "Gemini generateContent"
_GEMINI = re.compile(r"^(?:models/)?gemini-(\d+)(?:[.-]|$)")
# "the total request size limit is 20 MB"; "The file is encoded to base64 in transit"
# (firebase.google.com/docs/ai-logic/input-file-requirements, inline data)
INLINE_MAX = 20 * 1024 * 1024
INLINE_RULE = "inline data is limited to 20 MB per request (base64 in transit); use file_data"
PARTS_REFUSED = (
    "media parts in functionResponse.parts are a Gemini 3 feature; older models answer 400 "
    "'function_response.parts is not supported for this model'"
)


def model_takes_parts(model: str) -> bool:
    """Whether ``model`` reads as Gemini 3 or later (``gemini-3-flash-preview``,
    ``models/gemini-3.5-pro``); anything else, tuned models included, is ``False``."""
    match = _GEMINI.match(model)
    return match is not None and int(match.group(1)) >= 3


def _part(result: ToolResult, index: int, part: MediaPart) -> dict[str, Any]:
    def no(rule: str) -> NoReturn:
        refuse(API, PROVIDER, result.call_id, index, part, rule)

    if part.data is not None:
        blob: dict[str, Any] = {
            "mime_type": part.media_type,
            "data": base64.urlsafe_b64encode(part.data).decode("ascii"),
        }
        key = "inline_data"
    else:
        if part.media_type is None:
            no("fileData.mime_type is required: give the part a media_type")
        blob = {"file_uri": part.url if part.url is not None else part.file_id}
        blob["mime_type"] = part.media_type
        key = "file_data"
    if part.filename is not None:
        blob["display_name"] = part.filename
    return {key: blob}


def render_response(
    result: ToolResult, model: str, parts_allowed: bool | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(response, parts)`` of the ``functionResponse`` for a result whose output is parts."""
    texts = [p.text for p in result.parts if type(p) is TextPart]
    response = {"error" if result.is_error else "output": texts}
    media = [(i, p) for i, p in enumerate(result.parts) if type(p) is MediaPart]
    if media and not (model_takes_parts(model) if parts_allowed is None else parts_allowed):
        index, part = media[0]
        if parts_allowed is False:
            raise ContinuationError(
                f"result for call {result.call_id!r} carries media and "
                "function_response_parts=False",
                provider=PROVIDER,
            )
        refuse(API, PROVIDER, result.call_id, index, part, f"{PARTS_REFUSED} ({model!r})")
    return response, [_part(result, index, part) for index, part in media]
