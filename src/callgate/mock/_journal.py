"""The journal: every request the mock received and what it answered.

Entries are appended in arrival order and never dropped (bounded only by memory: a
test server lives for one test or one suite). Credentials are redacted before an entry
is stored. Readable from Python (``server.journal``) and over HTTP at
``GET /_callgate/journal`` (``?test_id=`` narrows it).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Journal", "JournalEntry", "redact_headers"]

_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "x-goog-api-key"})
REDACTED = "<redacted>"


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with every credential replaced by ``<redacted>``."""
    return {k: (REDACTED if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


@dataclasses.dataclass(slots=True)
class JournalEntry:
    """One request and its answer. ``outcome`` says how the mock handled it:
    ``matched`` (turn ``location`` served), ``mismatch``, ``rejected`` (auth, bad body,
    provider-native validation), ``fault`` (a scripted or runtime fault), ``state``
    (a stored-state route) or ``control``."""

    seq: int
    test_id: str
    conversation: str | None
    protocol: str | None
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    started: float
    status: int | None = None
    response: Any = None
    outcome: str | None = None
    location: str | None = None
    problems: tuple[str, ...] = ()
    duration_ms: float | None = None

    def close(
        self,
        status: int,
        response: Any,
        outcome: str,
        location: str | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        """Record the answer (called once, when the response is complete)."""
        self.status = status
        self.response = response
        self.outcome = outcome
        self.location = location
        self.problems = problems
        self.duration_ms = round((time.time() - self.started) * 1000, 3)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["problems"] = list(self.problems)
        return data


class Journal:
    """Thread-safe, append-only list of :class:`JournalEntry`."""

    def __init__(self) -> None:
        self._entries: list[JournalEntry] = []
        self._lock = threading.Lock()

    def begin(
        self,
        *,
        test_id: str,
        conversation: str | None,
        protocol: str | None,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: Any,
    ) -> JournalEntry:
        with self._lock:
            entry = JournalEntry(
                seq=len(self._entries),
                test_id=test_id,
                conversation=conversation,
                protocol=protocol,
                method=method,
                path=path,
                query=_redact_query(query),
                headers=redact_headers(headers),
                body=body,
                started=time.time(),
            )
            self._entries.append(entry)
            return entry

    def entries(self, *, test_id: str | None = None) -> list[JournalEntry]:
        """A snapshot, optionally for one test id."""
        with self._lock:
            return [e for e in self._entries if test_id is None or e.test_id == test_id]

    def __iter__(self) -> Iterator[JournalEntry]:
        return iter(self.entries())

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def requests(
        self,
        *,
        test_id: str | None = None,
        conversation: str | None = None,
        protocol: str | None = None,
        outcome: str | None = None,
    ) -> list[JournalEntry]:
        """Entries filtered by any of the given fields."""
        return [
            e
            for e in self.entries(test_id=test_id)
            if (conversation is None or e.conversation == conversation)
            and (protocol is None or e.protocol == protocol)
            and (outcome is None or e.outcome == outcome)
        ]

    def last(self, **filters: Any) -> JournalEntry:
        """The newest entry matching ``filters`` (as :meth:`requests`); ``LookupError``
        if there is none."""
        found = self.requests(**filters)
        if not found:
            raise LookupError(f"no journal entry matches {filters}")
        return found[-1]

    def assert_requests(self, count: int, **filters: Any) -> list[JournalEntry]:
        """Raise ``AssertionError`` unless exactly ``count`` entries match ``filters``."""
        found = self.requests(**filters)
        if len(found) != count:
            summary = [(e.seq, e.method, e.path, e.status, e.outcome) for e in found]
            raise AssertionError(f"expected {count} request(s) matching {filters}, got {summary}")
        return found


def _redact_query(query: str) -> str:
    if "key=" not in query:
        return query
    parts = []
    for part in query.split("&"):
        name, sep, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if sep and name == "key" else part)
    return "&".join(parts)
