"""Tool results with media: Chat Completions takes none in a tool message.

``ChatCompletionToolMessageParam.content`` is a string or text parts only, in openai 2.46.0
and 3.57.0 alike. The SDK sends an ``image_url`` part in a tool message without complaint,
and OpenAI answers 400 ("Image URLs are only allowed for messages with role 'user' ...",
OpenHands/OpenHands#7700). So a tuple of parts goes as ``text`` content parts, and a media
part is refused with that rule: never dropped, never moved to a user message.
"""

from __future__ import annotations

from typing import Any

from .._media import MediaPart, TextPart
from .._results import ToolResult
from .._visible import refuse
from ._events import PROVIDER

__all__ = ["API", "MEDIA_RULE", "render_parts", "text_content"]

API = "OpenAI Chat Completions"
MEDIA_RULE = (
    "a role 'tool' message takes text content parts only (ChatCompletionToolMessageParam."
    'content in both SDK generations); OpenAI answers 400 "Image URLs are only allowed '
    "for messages with role 'user', but this message with role 'tool' contains an image "
    'URL." Send media to a provider whose tool results take it'
)


def render_parts(result: ToolResult) -> list[str]:
    """The texts of a result whose output is parts; refuses any media part."""
    texts: list[str] = []
    for index, part in enumerate(result.parts):
        if type(part) is MediaPart:
            refuse(API, PROVIDER, result.call_id, index, part, MEDIA_RULE)
        if type(part) is TextPart:
            texts.append(part.text)
    return texts


def text_content(texts: list[str]) -> list[dict[str, Any]]:
    """``texts`` as the tool message's text content parts."""
    return [{"type": "text", "text": text} for text in texts]
