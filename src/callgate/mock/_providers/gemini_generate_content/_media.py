"""Gemini generateContent in the mock: media parts of a ``functionResponse``.

:func:`media_problem` runs before the request spec walk (under
``gemini_gc_request_valid``): each ``parts[].inline_data`` needs a ``mime_type`` and
base64 data (either alphabet: the SDKs send URL-safe), and all inline data of the request
stays within 20 MB (firebase.google.com/docs/ai-logic/input-file-requirements). Those texts
are the mock's, worded like Google's JSON parser. :func:`model_problem` runs with the
continuation checks, where the path's model is known: a model named as one before Gemini 3
(``gemini-2.5-flash``; other names are let through) with
``functionResponse.parts`` gets the API's real answer ("Unable to submit request because
`function_response.parts` is not supported for this model. ...", google-gemini/gemini-cli#19436).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from .._gemini_common import error_body
from .._kit import Reply, list_of
from .._media_kit import media_in

__all__ = ["MAX_INLINE_BYTES", "media_problem", "model_problem"]

MAX_INLINE_BYTES: Final = 20 * 1024 * 1024
_GEMINI: Final = re.compile(r"^(?:models/)?gemini-(\d+)(?:[.-]|$)")
NOT_SUPPORTED: Final = (
    "Unable to submit request because `function_response.parts` is not supported for this "
    "model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/"
    "function-calling"
)


def _responses(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for c, content in enumerate(list_of(body.get("contents"))):
        parts = content.get("parts") if isinstance(content, dict) else None
        for p, part in enumerate(list_of(parts)):
            if not isinstance(part, dict):
                continue
            answer = part.get("functionResponse", part.get("function_response"))
            if isinstance(answer, dict):
                yield f"contents[{c}].parts[{p}].function_response", answer


def _bad(message: str) -> Reply:
    return Reply(400, error_body(400, message))


def media_problem(body: dict[str, Any]) -> Reply | None:
    """Google's 400 for the first inline media part it would refuse, else None."""
    total = 0
    for path, answer in _responses(body):
        for q, part in enumerate(list_of(answer.get("parts"))):
            for found in media_in(part):
                where = f"{path}.parts[{q}].inline_data"
                if not isinstance(found.media_type, str) or not found.media_type:
                    return _bad(f"Invalid value at '{where}.mime_type': a MIME type is required.")
                raw = found.raw(urlsafe=True)
                if raw is None:
                    return _bad(
                        f"Invalid value at '{where}.data' (TYPE_BYTES), Base64 decoding failed."
                    )
                total += len(raw)
    if total > MAX_INLINE_BYTES:
        return _bad(f"Request payload size exceeds the limit: {MAX_INLINE_BYTES} bytes.")
    return None


def model_problem(body: dict[str, Any]) -> Reply | None:
    """The API's 400 for ``functionResponse.parts`` sent to a model before Gemini 3."""
    model = body.get("model")
    found = _GEMINI.match(model) if isinstance(model, str) else None
    if found is None or int(found.group(1)) >= 3:  # other names: not the mock's to judge
        return None
    if any(list_of(answer.get("parts")) for _, answer in _responses(body)):
        return _bad(NOT_SUPPORTED)
    return None
