"""What each baseline knows of a ``chat.completion.chunk`` and a ``chat.completion``, as data.

Facts from ``docs/contracts/openai-chat-completions.md`` §1-§3 (read from openai 2.46.0
and 3.57.0 ``types/chat/`` and ``lib/streaming/chat/``). A chunk is classified into one
of the wire types below, the key of ``_state.TRANSITIONS``; ``[DONE]`` is its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CHUNK_OBJECT",
    "COMPLETION_OBJECT",
    "DELTA_KEYS",
    "DONE_MARKER",
    "FINISH_REASONS",
    "KINDS",
    "K_DELTA",
    "K_DONE",
    "K_EMPTY",
    "K_ERROR",
    "K_FINISH",
    "MESSAGE_KEYS",
    "PROVIDER",
    "STOP",
    "TOOL_CALLS",
]

_OLD, _CURRENT = "2026-07-21", "2026-11"

#: The provider tag on every error this room raises.
PROVIDER = "openai"

#: The sentinel that ends a stream (the SDK stops at data that starts with it).
DONE_MARKER = "[DONE]"
CHUNK_OBJECT = "chat.completion.chunk"
COMPLETION_OBJECT = "chat.completion"

# -- wire types (the table's keys) ---------------------------------------------------
K_ERROR = "error"  # a chunk with a truthy top-level "error" (the SDK raises APIError)
K_DELTA = "delta"  # the selected choice streams, no finish_reason yet
K_FINISH = "finish"  # the selected choice carries its finish_reason
K_EMPTY = "empty"  # no selected choice: the usage chunk, another choice of n > 1
K_DONE = "[DONE]"  # the end-of-stream sentinel
KINDS: tuple[str, ...] = (K_ERROR, K_DELTA, K_FINISH, K_EMPTY, K_DONE)

# -- finish reasons (Choice.finish_reason: the same Literal in both generations) -----
STOP = "stop"
TOOL_CALLS = "tool_calls"
_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
FINISH_REASONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: _REASONS, _CURRENT: _REASONS}
)

# -- ChoiceDelta / ChatCompletionMessage fields each generation models ----------------
_DELTA = ("content", "refusal", "role", "tool_calls", "function_call")
#: Delta keys the baseline's SDK models (3.57.0 adds ``audio``); any other key is kept
#: raw on the turn (``message_extra``) with a warning, never a refusal.
DELTA_KEYS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: frozenset(_DELTA), _CURRENT: frozenset((*_DELTA, "audio"))}
)
_MESSAGE = ("content", "refusal", "role", "tool_calls", "function_call", "annotations", "audio")
MESSAGE_KEYS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: frozenset(_MESSAGE), _CURRENT: frozenset(_MESSAGE)}
)
