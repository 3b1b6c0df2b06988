"""OpenAI Responses in the mock: media in ``function_call_output.output`` parts.

Runs before the request spec walk (under ``openai_request_valid``). An inline
``input_image`` must be a base64 data URL of PNG, JPEG, WEBP or GIF (the types the vision
guide lists [doc-3p]) of at most :data:`MAX_IMAGE_BYTES`; an ``input_file``'s
``file_data`` must be base64. The ``code`` values are OpenAI's own (the ``Response.error``
enum of both SDK generations: ``unsupported_image_media_type``, ``invalid_base64_image``,
``image_file_too_large``); the message texts and the size bound are the mock's: OpenAI's
wording and numeric limits for these were not found (docs/contracts/tool-result-media.md).
"""

from __future__ import annotations

from typing import Any, Final

from ....openai_responses import IMAGE_TYPES
from .._kit import Reply, list_of
from .._media_kit import media_in
from .._openai_common import openai_error

__all__ = ["MAX_IMAGE_BYTES", "media_problem"]

MAX_IMAGE_BYTES: Final = 20 * 1024 * 1024  # the mock's bound (OpenAI's is not documented)


def _part_problem(found: Any, param: str) -> Reply | None:
    raw = found.raw()
    if found.kind == "image":
        where = f"{param}.image_url"
        if found.media_type not in IMAGE_TYPES:
            supported = ", ".join(f"'{t}'" for t in sorted(IMAGE_TYPES))
            message = (
                f"Invalid '{where}': unsupported image media type '{found.media_type}'. "
                f"Supported types are: {supported}."
            )
            return openai_error(400, message, param=where, code="unsupported_image_media_type")
        if raw is None:
            message = f"Invalid '{where}': the image data URL is not valid base64."
            return openai_error(400, message, param=where, code="invalid_base64_image")
        if len(raw) > MAX_IMAGE_BYTES:
            message = (
                f"Invalid '{where}': the image is {len(raw)} bytes, more than the "
                f"{MAX_IMAGE_BYTES} bytes allowed."
            )
            return openai_error(400, message, param=where, code="image_file_too_large")
    elif raw is None:
        where = f"{param}.file_data"
        message = f"Invalid '{where}': expected base64-encoded file data."
        return openai_error(400, message, param=where, code="invalid_value")
    return None


def media_problem(body: dict[str, Any]) -> Reply | None:
    """OpenAI's 400 for the first inline media part it would refuse, else None."""
    for i, item in enumerate(list_of(body.get("input"))):
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        for j, part in enumerate(list_of(item.get("output"))):
            for found in media_in(part):
                problem = _part_problem(found, f"input[{i}].output[{j}]")
                if problem is not None:
                    return problem
    return None
