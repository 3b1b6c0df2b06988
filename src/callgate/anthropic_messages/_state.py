"""Parser states and the legal-transition table.

Theory of operation
-------------------

The streaming docs (https://platform.claude.com/docs/en/build-with-claude/streaming) fix the
order of one Message stream::

    message_start
    ( content_block_start  content_block_delta*  content_block_stop )*   one block at a time
    message_delta+                                                       stop reason, usage
    message_stop

with ``ping`` allowed anywhere before the end and ``error`` ending the stream. The follow-up
responses of a programmatic tool-calling loop take a shorter form: a ``message_start`` whose
message already holds the complete ``content`` and a known ``stop_reason``, then directly
``message_stop``. That ``message_start`` has its own row: the parser keys it as
``COMPLETE_MESSAGE_START`` (``_events.table_key``) and the row leads to ``COMPLETE``, where
nothing but ``message_stop``, ``ping`` and ``error`` may follow; handlers never choose the
next state. Each block's
``index`` equals its position in the final ``content`` array, so the only association the
protocol offers is the index of the single open block; the parser keeps exactly that and
never a separate "current call".

``TRANSITIONS[(state, event_type)]`` names the handler and the next state. A pair that is
not in the table is a :class:`~callgate.SequenceError` (known event, wrong place) or, for an
event type the baseline does not know, :class:`~callgate.UnsupportedProviderState`
(:func:`illegal`). Nothing follows ``message_stop``: every pair with ``DONE`` (the end
state) is illegal, ``ping`` included. The ``error`` rows lead to ``FAILED`` (their handler
raises); ``FAILED`` has an empty row, like h11's ``ERROR``.

The checks inside a handler (index equals the next/open index, the delta type fits the open
block, output tokens never decrease) are per-event data checks, not state.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import NoReturn

from .._errors import SchemaError, SequenceError, UnsupportedProviderState
from . import _events as ev

__all__ = ["TRANSITIONS", "State", "illegal"]


class State(enum.Enum):
    """Where a parser is in one Message stream."""

    START = "START"  # nothing but pings seen yet
    BETWEEN_BLOCKS = "BETWEEN_BLOCKS"  # after message_start or a content_block_stop
    IN_BLOCK = "IN_BLOCK"  # one block is open
    STOPPING = "STOPPING"  # at least one message_delta seen: more of them or message_stop
    DONE = "DONE"  # message_stop seen: the stream must end
    COMPLETE = "COMPLETE"  # message_start carried the whole message: only message_stop
    FAILED = "FAILED"  # a protocol error was raised: nothing is legal (empty row)


_S = State
_TABLE: dict[tuple[State, str], tuple[str, State]] = {
    (_S.START, ev.MESSAGE_START): ("_on_message_start", _S.BETWEEN_BLOCKS),
    (_S.START, ev.COMPLETE_MESSAGE_START): ("_on_complete_message_start", _S.COMPLETE),
    (_S.BETWEEN_BLOCKS, ev.BLOCK_START): ("_on_block_start", _S.IN_BLOCK),
    (_S.IN_BLOCK, ev.BLOCK_DELTA): ("_on_block_delta", _S.IN_BLOCK),
    (_S.IN_BLOCK, ev.BLOCK_STOP): ("_on_block_stop", _S.BETWEEN_BLOCKS),
    (_S.BETWEEN_BLOCKS, ev.MESSAGE_DELTA): ("_on_message_delta", _S.STOPPING),
    (_S.STOPPING, ev.MESSAGE_DELTA): ("_on_message_delta", _S.STOPPING),
    (_S.STOPPING, ev.MESSAGE_STOP): ("_on_message_stop", _S.DONE),
    (_S.COMPLETE, ev.MESSAGE_STOP): ("_on_message_stop", _S.DONE),
}
for _state in (_S.START, _S.BETWEEN_BLOCKS, _S.IN_BLOCK, _S.STOPPING, _S.COMPLETE):
    _TABLE[_state, ev.PING] = ("_on_ping", _state)
    _TABLE[_state, ev.ERROR] = ("_on_error", _S.FAILED)  # the handler raises ProviderError
del _state

TRANSITIONS: Mapping[tuple[State, str], tuple[str, State]] = MappingProxyType(_TABLE)


def illegal(state: State, t: object) -> NoReturn:
    """Raise the error for an event type ``t`` that has no row in ``state``."""
    if type(t) is not str:
        raise SchemaError("event has no string `type`")
    if t not in ev.EVENT_TYPES and t != ev.COMPLETE_MESSAGE_START:
        raise UnsupportedProviderState(f"unknown event type {t[:80]!r}")
    if state is State.DONE:
        raise SequenceError(f"{t} after message_stop")
    if state is State.COMPLETE:
        raise SequenceError(
            f"{t} after a message_start that carried the complete message "
            "(only message_stop may follow it)"
        )
    raise SequenceError(f"{t} is not legal in state {state.name}")
