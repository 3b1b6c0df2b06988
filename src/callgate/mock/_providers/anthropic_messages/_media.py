"""Anthropic Messages in the mock: media in ``tool_result.content`` blocks.

Runs before the request spec walk (under ``anthropic_request_valid``). A base64 ``image``
must be JPEG, PNG, GIF or WebP and at most 5 MB **of base64** (5,242,880 characters): the
API's text for that is real ("image exceeds 5 MB maximum: N bytes > 5242880 bytes",
anthropics/claude-code#14887); the ``<path>: `` prefix follows Anthropic's other 400s. The
media-type text is pydantic's enum wording (as the spec walk writes it); the text for data
that is not base64 is the mock's (Anthropic's own was not found).
"""

from __future__ import annotations

from typing import Any

from ....anthropic_messages import IMAGE_BASE64_MAX, IMAGE_TYPES
from .._kit import Reply, list_of
from .._media_kit import Found, media_in
from ._routes import error_body

__all__ = ["media_problem"]

# pydantic's enum order in the message (the order of the SDK's Literal)
_ORDER = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _problem(found: Found, path: str) -> str | None:
    where = f"{path}.{found.kind}.source.base64"
    if found.kind == "image":
        if found.media_type not in IMAGE_TYPES:
            listed = ", ".join(f"'{t}'" for t in _ORDER[:-1])
            return f"{where}.media_type: Input should be {listed} or '{_ORDER[-1]}'"
        if len(found.data) > IMAGE_BASE64_MAX:
            return (
                f"{where}: image exceeds 5 MB maximum: {len(found.data)} bytes > "
                f"{IMAGE_BASE64_MAX} bytes"
            )
    if found.raw() is None:
        return f"{where}.data: the data is not valid base64"
    return None


def media_problem(body: dict[str, Any]) -> Reply | None:
    """Anthropic's 400 for the first media block of a tool result it would refuse."""
    for i, message in enumerate(list_of(body.get("messages"))):
        if not isinstance(message, dict):
            continue
        for j, block in enumerate(list_of(message.get("content"))):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            for k, inner in enumerate(list_of(block.get("content"))):
                for found in media_in(inner):
                    text = _problem(found, f"messages.{i}.content.{j}.content.{k}")
                    if text is not None:
                        return Reply(400, error_body(400, text))
    return None
