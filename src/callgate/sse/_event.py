"""The value an event-stream decoder dispatches, and the fast way the decoder builds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ServerSentEvent", "new_event", "set_data", "set_event", "set_id", "set_retry"]


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event.

    - ``event``: the value of the last ``event:`` field of the block, or ``None`` when the
      block had none (WHATWG would report ``"message"``; callers need to tell them apart).
    - ``data``: the ``data:`` lines joined with ``"\\n"``.
    - ``id``: the stream's last-event-ID buffer at dispatch time (it persists across
      events), or ``None`` if no valid ``id:`` field has been seen yet.
    - ``retry``: a valid ``retry:`` value (ASCII digits only) from this block, else ``None``.
    """

    event: str | None = None
    data: str = ""
    id: str | None = None
    retry: int | None = None


# The frozen dataclass __init__ costs four object.__setattr__ lookups per event; the
# decoder's hot loop writes the slots through their member descriptors instead (about
# twice as fast). Instances are indistinguishable from ones built by the constructor.
_slot: dict[str, Any] = dict(ServerSentEvent.__dict__)
new_event = object.__new__
set_event = _slot["event"].__set__
set_data = _slot["data"].__set__
set_id = _slot["id"].__set__
set_retry = _slot["retry"].__set__
del _slot
