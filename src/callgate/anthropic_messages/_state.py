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
``message_stop``. The ``message_start`` handler chooses that path by returning ``COMPLETE``
(it overrides the table's next state); in ``COMPLETE`` nothing but ``message_stop``,
``ping`` and ``error`` may follow. Each block's
``index`` equals its position in the final ``content`` array, so the only association the
protocol offers is the index of the single open block; the parser keeps exactly that and
never a separate "current call".

``TRANSITIONS[(state, event_type)]`` names the handler and the next state. A pair that is not
in the table is a :class:`~callgate.SequenceError` (known event, wrong place) or, for an
event type the baseline does not know, :class:`~callgate.UnsupportedProviderState`. Nothing
follows ``message_stop``: every pair with ``DONE`` is illegal, ``ping`` included.

The checks inside a handler (index equals the next/open index, the delta type fits the open
block, output tokens never decrease) are per-event data checks, not state.
"""

from __future__ import annotations

from . import _events as ev

__all__ = [
    "BETWEEN_BLOCKS",
    "COMPLETE",
    "DONE",
    "IN_BLOCK",
    "START",
    "STATE_NAMES",
    "STOPPING",
    "TRANSITIONS",
]

START = 0  # nothing but pings seen yet
BETWEEN_BLOCKS = 1  # after message_start or a content_block_stop: a block may start
IN_BLOCK = 2  # one block is open
STOPPING = 3  # at least one message_delta seen: only more of them or message_stop
DONE = 4  # message_stop seen: the stream must end
COMPLETE = 5  # message_start carried the whole message: only message_stop may follow

STATE_NAMES = ("START", "BETWEEN_BLOCKS", "IN_BLOCK", "STOPPING", "DONE", "COMPLETE")

TRANSITIONS: dict[tuple[int, str], tuple[str, int]] = {
    (START, ev.MESSAGE_START): ("_on_message_start", BETWEEN_BLOCKS),
    (BETWEEN_BLOCKS, ev.BLOCK_START): ("_on_block_start", IN_BLOCK),
    (IN_BLOCK, ev.BLOCK_DELTA): ("_on_block_delta", IN_BLOCK),
    (IN_BLOCK, ev.BLOCK_STOP): ("_on_block_stop", BETWEEN_BLOCKS),
    (BETWEEN_BLOCKS, ev.MESSAGE_DELTA): ("_on_message_delta", STOPPING),
    (STOPPING, ev.MESSAGE_DELTA): ("_on_message_delta", STOPPING),
    (STOPPING, ev.MESSAGE_STOP): ("_on_message_stop", DONE),
    (COMPLETE, ev.MESSAGE_STOP): ("_on_message_stop", DONE),
}
for _state in (START, BETWEEN_BLOCKS, IN_BLOCK, STOPPING, COMPLETE):
    TRANSITIONS[_state, ev.PING] = ("_on_ping", _state)
    # The handler raises ProviderError; the state is never entered.
    TRANSITIONS[_state, ev.ERROR] = ("_on_error", DONE)
del _state
