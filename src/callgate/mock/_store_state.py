"""One session's stored objects and what the mock emitted, for later requests to refer to.

Every served turn becomes a :class:`Record` (OpenAI Response, Anthropic Message, Gemini
Interaction), kept whether or not the request said ``store: false``: an unstored record
cannot be referenced by id, but the native checks still compare replayed items against
what the mock emitted. The per-item indexes (OpenAI output items, Anthropic thinking
blocks) are built lazily by each record's provider, the first time a request needs them,
so a session that never replays history pays nothing for them.

The stored objects are what the *script* says the provider produced: a stream cut short
by ``disconnect_after`` (or a stream fault) still leaves the complete object behind, as a
real provider keeps generating after a client goes away. That is what makes a resume by
``last_event_id`` useful.

On an OpenAI Responses WebSocket connection an unstored response stays referable by id
from that same connection (its connection-local cache): the connection sets
:data:`LIVE` to those ids while its request runs the pipeline.

Guarded by the owning :class:`~callgate.mock.MockState`'s lock; nothing here locks.
"""

from __future__ import annotations

import contextvars
import dataclasses
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ._http import Rendered
from ._providers import provider

if TYPE_CHECKING:
    from ._state import Served

__all__ = ["LIVE", "Record", "SessionStore"]

LIVE: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "callgate_mock_live", default=frozenset()
)
"""Ids of unstored records referable by the request being served (a WebSocket
connection's own responses: its connection-local cache)."""


@dataclasses.dataclass(slots=True)
class Record:
    """One served turn: its id, whether it may be referenced, and its lifecycle."""

    id: str
    protocol: str
    served: Served
    stored: bool  # the request did not say store: false
    previous: str | None  # previous_response_id / previous_interaction_id it continued
    deleted: bool = False
    cancelled: bool = False  # Gemini: POST .../cancel while requires_action
    final: dict[str, Any] | None = None  # cached complete object (non-streaming shape)
    full: Rendered | None = None  # cached complete stream (Gemini resume)
    # What a stream fault let through (e.g. a truncation's cut arguments), when it differs
    # from the rendered turn: the events and the bytes replayed items are compared against.
    sent: tuple[tuple[dict[str, Any], ...], bytes] | None = None
    served_at: float = dataclasses.field(default_factory=time.monotonic)
    # A paced stream of this record is still being sent (Anthropic threads refuse a
    # second continuation from the same message meanwhile).
    in_flight: bool = False

    @property
    def calls(self) -> tuple[tuple[str, str], ...]:
        return self.served.rendered.calls

    @property
    def referable(self) -> bool:
        """Can be named by id (GET, DELETE, previous id)."""
        return self.stored and not self.deleted

    @property
    def received(self) -> Rendered:
        """The rendered turn as its client received it (after any stream fault)."""
        rendered = self.served.rendered
        if self.sent is None:
            return rendered
        events, body = self.sent
        return dataclasses.replace(rendered, events=events, sse=body, frames=())


class SessionStore:
    """Records by id and lazy indexes of emitted content (filled by the providers)."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}
        # protocol -> its provider's index of what was emitted (built by its ``index``)
        self.indexes: dict[str, Any] = {}
        self._pending: list[Record] = []

    def add(self, record: Record) -> None:
        self.records[record.id] = record
        self._pending.append(record)

    def note_sent(self, record_id: str, events: tuple[dict[str, Any], ...], body: bytes) -> None:
        """Record that a stream fault changed what ``record_id``'s client received."""
        record = self.records.get(record_id)
        if record is not None:
            record.sent = (events, body)
            if all(r is not record for r in self._pending):  # indexed: index what was sent
                self._pending.append(record)

    def get(self, protocol: str, record_id: Any) -> Record | None:
        """The record of ``protocol`` with this id (deleted or unstored ones included)."""
        found = self.records.get(record_id) if isinstance(record_id, str) else None
        return found if found is not None and found.protocol == protocol else None

    def referable(self, protocol: str, record_id: Any) -> Record | None:
        found = self.get(protocol, record_id)
        if found is None or found.deleted:
            return None
        return found if found.stored or found.id in LIVE.get() else None

    def chain(self, record: Record) -> Iterator[Record]:
        """``record`` and the records it continued, newest first (cycle-safe)."""
        seen: set[str] = set()
        current: Record | None = record
        while current is not None and current.id not in seen:
            yield current
            seen.add(current.id)
            current = self.get(current.protocol, current.previous)

    def index(self) -> None:
        """Index the emitted content of every record added since the last call."""
        pending, self._pending = self._pending, []
        for record in pending:
            provider(record.protocol).index(self, record)
