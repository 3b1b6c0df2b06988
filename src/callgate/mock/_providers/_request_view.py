"""What a request contains, as ``expect`` blocks see it: the :class:`RequestView` each
provider's ``view`` builds from its own body shape, and the small readers of JSON content
(:func:`list_of`, :func:`texts`, :func:`tool_names`, :func:`last_text`) the views and the
providers' checks share. Part of the provider kit (:mod:`._kit` re-exports every name).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["FunctionResult", "RequestView", "last_text", "list_of", "texts", "tool_names"]


# -- what a request contains, as ``expect`` blocks see it ---------------------------------------
# Each provider's ``view`` builds one from its own body shape. Only what scripts can assert
# is extracted; the rest of the body is journaled as sent. A field of the wrong shape is
# reported as a mismatch by the matcher, never as a crash.


@dataclasses.dataclass(slots=True)
class FunctionResult:
    call_id: str | None
    name: str | None
    output: Any
    is_error: bool
    parts: Any = None  # generateContent: the functionResponse's media parts


@dataclasses.dataclass(slots=True)
class RequestView:
    model: Any
    stream: bool
    tools: tuple[str, ...]
    # The results of the open round: in a replayed history, those after the model's last
    # answer in text (results it already answered belong to older rounds).
    results: tuple[FunctionResult, ...]
    previous_id: Any
    user_text: str
    instructions: Any
    # Gemini: function_result content nested in user_input steps (not results in v1).
    nested_results: int = 0
    # The text of the newest user message that has any (a message of tool results only
    # is skipped: a replayed history ends with one after the first tool round).
    last_user_text: str = ""


def list_of(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def texts(content: Any) -> list[str]:
    """Text of a content value: a string, or a list of text blocks."""
    if isinstance(content, str):
        return [content]
    return [
        block["text"]
        for block in list_of(content)
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]


def tool_names(tools: Any) -> tuple[str, ...]:
    if not isinstance(tools, list):
        return ()
    return tuple(
        [
            tool["name"]
            for tool in tools
            if isinstance(tool, dict) and isinstance(tool.get("name"), str)
        ]
    )


def last_text(groups: list[list[str]]) -> str:
    """The newest non-empty group of user texts, joined (``""`` if none)."""
    return next(("\n".join(g) for g in reversed(groups) if any(g)), "")
