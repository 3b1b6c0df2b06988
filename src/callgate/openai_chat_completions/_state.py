"""Stream states and the legal transitions of one streamed Chat Completion.

Theory of operation
-------------------

A stream is ``data:`` chunks of ``chat.completion.chunk`` ended by ``data: [DONE]``
(``docs/contracts/openai-chat-completions.md`` §1). The selected choice (the only one, or
the one the caller names for ``n > 1``) streams deltas; one chunk carries its
``finish_reason``; only chunks without that choice (the usage chunk, other choices) may
follow, then ``[DONE]``. The SDK itself requires neither the finish reason nor ``[DONE]``
(a stream that stops early ends silently there); the parser requires both.

Each chunk is classified (``_events.KINDS``) before the table is consulted:

- ``error``: a chunk with a top-level ``error`` (the SDK raises ``APIError``): a
  :class:`~callgate.ProviderError` from any live state, even after the finish.
- ``delta``: the selected choice, no ``finish_reason``; ``finish``: with one.
- ``empty``: no selected choice in the chunk (usage, another choice of ``n > 1``).
- ``[DONE]``: legal only after the finish (``DONE``); before it the turn has no finish
  reason, a :class:`~callgate.TruncatedStreamError`.

The end state is ``DONE`` (the finish reason was seen; ``finish()`` returns the turn
there when the chunks were fed as events: an official SDK's iterator consumes ``[DONE]``
itself, so its caller never sees it). ``CLOSED`` is the state after ``[DONE]``; nothing
may follow it, and in bytes mode ``finish()`` requires it (EOF before ``[DONE]`` is a
truncation). ``error`` rows and an early ``[DONE]`` lead to ``FAILED`` (their handlers
raise), which has no row. Every ``(state, kind)`` pair not in :data:`TRANSITIONS` is a
:class:`~callgate.SequenceError`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from ._events import K_DELTA, K_DONE, K_EMPTY, K_ERROR, K_FINISH

__all__ = ["TRANSITIONS", "State"]


class State(enum.Enum):
    """Where the stream is."""

    START = "start"  # no chunk yet
    OPEN = "open"  # chunks seen, no finish_reason for the selected choice yet
    DONE = "done"  # the finish_reason was seen; only empty chunks and [DONE] may follow
    CLOSED = "closed"  # [DONE] after the finish; nothing may follow
    FAILED = "failed"  # a protocol error was raised; nothing is legal any more


_S, _O, _F = State.START, State.OPEN, State.DONE

#: ``(state, kind) -> (handler name in _handlers.Handlers, next state)``.
TRANSITIONS: Mapping[tuple[State, str], tuple[str, State]] = MappingProxyType(
    {
        (_S, K_DELTA): ("_on_delta", _O),
        (_S, K_FINISH): ("_on_finish", _F),
        (_S, K_EMPTY): ("_on_empty", _O),
        (_S, K_ERROR): ("_on_error", State.FAILED),
        (_S, K_DONE): ("_on_early_done", State.FAILED),
        (_O, K_DELTA): ("_on_delta", _O),
        (_O, K_FINISH): ("_on_finish", _F),
        (_O, K_EMPTY): ("_on_empty", _O),
        (_O, K_ERROR): ("_on_error", State.FAILED),
        (_O, K_DONE): ("_on_early_done", State.FAILED),
        (_F, K_EMPTY): ("_on_empty", _F),
        (_F, K_ERROR): ("_on_error", State.FAILED),
        (_F, K_DONE): ("_on_done_marker", State.CLOSED),
    }
)
