"""The registry of protocol rooms: wire-protocol name -> room module, imported lazily.

The CLI, the mock, the loop, recording and the tests look rooms up here instead of keeping
their own lists, so a new room is registered once.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from ._errors import UsageError

__all__ = ["PROTOCOLS", "room"]

_ROOMS: Final = {
    "openai_responses": "callgate.openai_responses",
    "anthropic_messages": "callgate.anthropic_messages",
    "gemini_interactions": "callgate.gemini_interactions",
    "gemini_generate_content": "callgate.gemini_generate_content",
    "openai_chat_completions": "callgate.openai_chat_completions",
}

PROTOCOLS: Final[tuple[str, ...]] = tuple(_ROOMS)


def room(protocol: str) -> ModuleType:
    """The room module for ``protocol`` (``UsageError`` for a name that is not a room)."""
    try:
        name = _ROOMS[protocol]
    except (KeyError, TypeError):
        raise UsageError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}") from None
    return importlib.import_module(name)
