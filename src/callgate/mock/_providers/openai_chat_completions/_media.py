"""OpenAI Chat Completions in the mock: a ``role: "tool"`` message takes text parts only.

Runs before the request spec walk (under ``openai_chat_request_valid``), so an image in a
tool message gets the API's own answer rather than the spec's enum error. The image text is
OpenAI's as reported (OpenHands/OpenHands#7700 via LiteLLM: "Invalid 'messages[234]'.
Image URLs are only allowed for messages with role 'user', but this message with role
'tool' contains an image URL."); its ``param``/``code``, and the text for file and audio
parts (worded the same way), are the mock's.
"""

from __future__ import annotations

from typing import Any

from .._kit import Reply, list_of
from .._openai_common import openai_error

__all__ = ["media_problem"]

_WHAT = {
    "image_url": "Image URLs are",
    "file": "File inputs are",
    "input_audio": "Audio inputs are",
}
_SHORT = {"image_url": "an image URL", "file": "a file input", "input_audio": "an audio input"}


def media_problem(body: dict[str, Any]) -> Reply | None:
    """OpenAI's 400 for the first tool message with a media part, else None."""
    for n, message in enumerate(list_of(body.get("messages"))):
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        for part in list_of(message.get("content")):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in _WHAT:
                text = (
                    f"Invalid 'messages[{n}]'. {_WHAT[kind]} only allowed for messages with "
                    f"role 'user', but this message with role 'tool' contains {_SHORT[kind]}."
                )
                return openai_error(400, text, param=f"messages[{n}]", code="invalid_value")
    return None
