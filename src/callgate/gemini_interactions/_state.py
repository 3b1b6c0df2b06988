"""Stream states and the legal transitions of one Interactions SSE stream.

Theory of operation
-------------------

One streamed ``interactions.create(stream=True)`` response is one Interaction turn
(``contracts/gemini.md`` §2, the docs' streaming example at
https://ai.google.dev/gemini-api/docs/interactions/streaming):

``interaction.created`` -> (``interaction.status_update`` | ``step.start`` | ``step.delta``
| ``step.stop``)* -> ``interaction.completed`` -> optional ``data: [DONE]``.

- Events are routed by the ``event_type`` inside the JSON; an SSE ``event:`` line, when
  present, must agree with it (the SDK ignores the line, so a disagreement is drift).
- ``interaction.status_update`` is optional and only informative; the authoritative
  status is the one inside ``interaction.completed``.
- ``index`` on step events associates ``step.start``/``step.delta``/``step.stop`` within
  this stream only (the SDK's continuation hops restart it at 0, and streams omit the
  echoed ``user_input``), so it is never a position in ``Interaction.steps``. The open
  indexes are the per-step sub-state: a dict ``index -> accumulator`` in the parser.
- ``event_id`` is a resume token (``GET ...?last_event_id=``); a client that resumes may
  see an event twice. Same id and identical payload is ignored before routing; same id
  with a different payload is a :class:`~callgate.SequenceError`.
- ``error`` ends the turn with :class:`~callgate.ProviderError` from any state; ``[DONE]``
  is legal only after the terminal; anything after ``[DONE]`` is illegal.

Every ``(state, event_type)`` pair not in :data:`TRANSITIONS` is a
:class:`~callgate.SequenceError` (an unknown ``event_type`` is
:class:`~callgate.UnsupportedProviderState` before the table is consulted). The end
state is ``DONE`` (the terminal seen); ``CLOSED`` is ``DONE`` after the optional
``[DONE]``, and has no row. The rows whose handler raises (``error``, an early ``[DONE]``)
lead to ``FAILED``, which has no row: once a protocol error failed the parser, nothing is
legal (the parser re-raises that error before it would consult the table).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from ._events import COMPLETED, CREATED, ERROR, STATUS_UPDATE, STEP_DELTA, STEP_START
from ._events import DONE as DONE_MARKER
from ._events import STEP_STOP as STOP

__all__ = ["ROUTED", "TRANSITIONS", "State"]


class State(enum.Enum):
    """Where the stream is. The parser's finished flag sits beside this."""

    START = "start"  # nothing seen yet; only interaction.created opens the turn
    OPEN = "open"  # the turn is streaming steps
    DONE = "done"  # interaction.completed seen; only [DONE] (or an error) may follow
    CLOSED = "closed"  # [DONE] seen after the terminal; nothing may follow
    FAILED = "failed"  # a protocol error ended the stream; the table has no row for it


#: Every event the parser routes: the seven JSON event types plus the ``[DONE]`` sentinel.
ROUTED: tuple[str, ...] = (CREATED, STATUS_UPDATE, STEP_START, STEP_DELTA, STOP, COMPLETED)
ROUTED += (ERROR, DONE_MARKER)

_S, _O, _D, _X = State.START, State.OPEN, State.DONE, State.FAILED

#: ``(state, event_type) -> (handler name in _handlers.Handlers, next state)``.
TRANSITIONS: Mapping[tuple[State, str], tuple[str, State]] = MappingProxyType(
    {
        (_S, CREATED): ("_on_created", _O),
        (_S, ERROR): ("_on_error", _X),
        (_S, DONE_MARKER): ("_on_early_done", _X),
        (_O, STATUS_UPDATE): ("_on_status_update", _O),
        (_O, STEP_START): ("_on_step_start", _O),
        (_O, STEP_DELTA): ("_on_step_delta", _O),
        (_O, STOP): ("_on_step_stop", _O),
        (_O, COMPLETED): ("_on_completed", _D),
        (_O, ERROR): ("_on_error", _X),
        (_O, DONE_MARKER): ("_on_early_done", _X),
        (_D, DONE_MARKER): ("_on_done", State.CLOSED),
        (_D, ERROR): ("_on_error", _X),
    }
)
