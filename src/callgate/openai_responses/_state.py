"""States and the transition table of one Responses stream.

Theory of operation
-------------------

OpenAI's Responses streaming guide and API reference
(https://platform.openai.com/docs/api-reference/responses-streaming) describe one stream
as: ``response.created``, lifecycle updates (``response.queued`` / ``response.in_progress``),
then, per output item, ``response.output_item.added`` at an ``output_index``, events scoped
to that item (``item_id`` + ``output_index``), ``response.output_item.done``; and finally
one terminal: ``response.completed``, ``response.incomplete`` or ``response.failed``. An
``error`` event may stand in for the terminal or precede ``response.failed``. Every event
carries a ``sequence_number``.

The stream-level machine is one table, ``TRANSITIONS[(state, wire type)] -> (handler
name, next state)``, written by kind in :data:`BY_KIND` and expanded over the registries
of ``_events`` (which name each type's kind and handler). A (state, type) pair that is
absent is a :class:`~callgate.SequenceError`; ``FAILED`` and ``DONE`` (the end state) have
no row, so "nothing is legal after a failure or a terminal" is a fact of the table. A row
whose handler always raises (a type callgate does not support) leads to ``FAILED``. The
``error`` event is not such a row: ``response.failed`` may follow it (and is then
checked), so it leads to ``ERRORED`` and :meth:`finish` raises the provider's error.
Item-level rules
live in ``_assembly`` (:class:`~._assembly.OpenItem`, :class:`~._assembly.Part`) and the
handlers:

- an ``output_index`` is added once and done once; events name an index that is open and
  the ``item_id`` of the item there (association is by index, cross-checked by id, never
  by "the current call");
- an item-scoped event must suit the item's type (argument deltas only for a
  ``function_call``, text deltas only inside an open part of the right kind);
- deltas are kept as fragments and joined once, at the matching ``.done``; the joined
  text must equal the ``.done`` text, the ``output_item.done`` item and, at
  ``response.completed``, the terminal Response's ``output``.

``sequence_number`` must strictly increase (not necessarily from 0 or contiguously:
``starting_after`` resumption skips numbers). The response id is fixed by
``response.created`` and every later lifecycle event must repeat it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ._events import BASELINE_EVENTS, EventSpec, Kind

__all__ = ["BY_KIND", "TRANSITIONS", "State"]


class State(enum.Enum):
    """Where the stream is. ``FAILED`` is the parser's own sticky error state."""

    START = "start"  # nothing yet
    OPEN = "open"  # response.created seen, no terminal yet
    ERRORED = "errored"  # an `error` event was seen; only response.failed may follow
    DONE = "done"  # one terminal seen; nothing may follow
    FAILED = "failed"  # the parser raised; it stays failed


_S = State
# The table as written: (state, kind of event) -> next state.
BY_KIND: Final[Mapping[tuple[State, str], State]] = MappingProxyType(
    {
        (_S.START, Kind.CREATED): _S.OPEN,
        (_S.START, Kind.ERROR): _S.ERRORED,
        (_S.OPEN, Kind.UPDATE): _S.OPEN,
        (_S.OPEN, Kind.ITEM_ADDED): _S.OPEN,
        (_S.OPEN, Kind.ITEM): _S.OPEN,
        (_S.OPEN, Kind.ITEM_DONE): _S.OPEN,
        (_S.OPEN, Kind.GLOBAL): _S.OPEN,
        (_S.OPEN, Kind.TERMINAL): _S.DONE,
        (_S.OPEN, Kind.FAILURE): _S.DONE,
        (_S.OPEN, Kind.ERROR): _S.ERRORED,
        # After an in-stream error only the failed terminal may follow.
        (_S.ERRORED, Kind.FAILURE): _S.DONE,
    }
)


def _specs() -> dict[str, EventSpec]:
    """Every wire type of every baseline; one type means one kind and one handler."""
    union: dict[str, EventSpec] = {}
    for registry in BASELINE_EVENTS.values():
        for name, spec in registry.items():
            seen = union.setdefault(name, spec)
            if (seen.kind, seen.handler) != (spec.kind, spec.handler):  # pragma: no cover
                raise RuntimeError(f"{name} has another kind or handler on another baseline")
    return union


#: The handler that always raises: its rows lead to ``FAILED``.
_RAISES: Final = "unsupported"

TRANSITIONS: Final[Mapping[tuple[State, str], tuple[str, State]]] = MappingProxyType(
    {
        (state, name): ("_on_" + spec.handler, _S.FAILED if spec.handler == _RAISES else nxt)
        for name, spec in _specs().items()
        for (state, kind), nxt in BY_KIND.items()
        if kind == spec.kind
    }
)
