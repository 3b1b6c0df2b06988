"""Stream states and the legal transitions of one ``streamGenerateContent?alt=sse`` stream.

Theory of operation
-------------------

One streamed response is one model turn (``contracts/gemini-generate-content.md`` §5):
every SSE event is a whole ``GenerateContentResponse`` chunk; the candidate's parts arrive
spread over chunks and the **last** chunk carries ``finishReason``. Nothing marks the end
of the stream but EOF, so a stream without ``finishReason`` is truncated (the SDK ends its
iteration silently there; the parser does not).

Each chunk is classified (``_events.KINDS``) before the table is consulted:

- ``error``: a ``{"error": {...}}`` chunk — :class:`~callgate.ProviderError` from any live state.
- ``blocked``: ``promptFeedback.blockReason`` — the prompt was refused (a ProviderError).
- ``content``: the candidate streams parts; ``finish``: it also carries ``finishReason``.
- ``empty``: no candidate (usage or model metadata only). Legal before the finish and
  after it (a usage-only trailer), never a terminal.

After ``finish`` no candidate may stream again. The end state is ``DONE``; ``error`` and
``blocked`` rows lead to ``FAILED`` (their handlers raise), which has an empty row: after
a protocol error nothing is legal, a fact of the table. Every ``(state, kind)`` pair not
in :data:`TRANSITIONS` is a :class:`~callgate.SequenceError`. The kind is this room's
wire type: the key every room's table is looked up by.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from ._events import K_BLOCKED, K_CONTENT, K_EMPTY, K_ERROR, K_FINISH

__all__ = ["TRANSITIONS", "State"]


class State(enum.Enum):
    """Where the stream is."""

    START = "start"  # no chunk yet
    OPEN = "open"  # chunks seen, no finishReason yet
    DONE = "done"  # the candidate's finishReason was seen; only trailers may follow
    FAILED = "failed"  # a protocol error was raised; nothing is legal any more


_S, _O, _F = State.START, State.OPEN, State.DONE

#: ``(state, kind) -> (handler name in _handlers.Handlers, next state)``.
TRANSITIONS: Mapping[tuple[State, str], tuple[str, State]] = MappingProxyType(
    {
        (_S, K_CONTENT): ("_on_content", _O),
        (_S, K_FINISH): ("_on_finish", _F),
        (_S, K_EMPTY): ("_on_empty", _O),
        (_S, K_BLOCKED): ("_on_blocked", State.FAILED),
        (_S, K_ERROR): ("_on_error", State.FAILED),
        (_O, K_CONTENT): ("_on_content", _O),
        (_O, K_FINISH): ("_on_finish", _F),
        (_O, K_EMPTY): ("_on_empty", _O),
        (_O, K_BLOCKED): ("_on_blocked", State.FAILED),
        (_O, K_ERROR): ("_on_error", State.FAILED),
        (_F, K_EMPTY): ("_on_empty", _F),
        (_F, K_ERROR): ("_on_error", State.FAILED),
    }
)
