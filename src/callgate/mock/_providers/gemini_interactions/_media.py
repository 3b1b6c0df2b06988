"""Gemini Interactions in the mock: media in a ``function_result``'s ``result`` list.

Runs before the request spec walk (under ``gemini_request_valid``). Each ``image`` /
``document`` / ``audio`` / ``video`` item with ``data`` must state a MIME type the 3.6.1
types list for its kind (``MEDIA_TYPES`` of the room), carry base64, and all inline data of
the request together stays within 20 MB ("the total request size limit is 20 MB",
firebase.google.com/docs/ai-logic/input-file-requirements). The answer is the Interactions
error body (``{"error": {"code": "invalid_request", "message"}}``); the texts are the
mock's, worded like Google's JSON parser ("Invalid value at '<path>' (TYPE_BYTES), Base64
decoding failed"), not quoted from the API.
"""

from __future__ import annotations

from typing import Any, Final

from ....gemini_interactions import MEDIA_TYPES
from .._kit import Reply, list_of
from .._media_kit import media_in
from ._errors import error_body

__all__ = ["MAX_INLINE_BYTES", "media_problem"]

MAX_INLINE_BYTES: Final = 20 * 1024 * 1024


def _bad(message: str) -> Reply:
    return Reply(400, error_body(400, message))


def media_problem(body: dict[str, Any]) -> Reply | None:
    """Google's 400 for the first inline media item of a function result it would refuse."""
    total = 0
    for i, step in enumerate(list_of(body.get("input"))):
        if not isinstance(step, dict) or step.get("type") != "function_result":
            continue
        for j, item in enumerate(list_of(step.get("result"))):
            for found in media_in(item):
                path = f"input[{i}].result[{j}]"
                allowed = MEDIA_TYPES.get(found.kind, frozenset())
                if found.media_type not in allowed:
                    return _bad(
                        f"Invalid value at '{path}.mime_type': {found.media_type!r} is not a "
                        f"supported {found.kind} MIME type."
                    )
                raw = found.raw()
                if raw is None:
                    return _bad(
                        f"Invalid value at '{path}.data' (TYPE_BYTES), Base64 decoding failed."
                    )
                total += len(raw)
    if total > MAX_INLINE_BYTES:
        return _bad(f"Request payload size exceeds the limit: {MAX_INLINE_BYTES} bytes.")
    return None
