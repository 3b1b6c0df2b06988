"""The journal: every request the mock received and what it answered.

Entries are appended in arrival order and bounded: at most 10,000 in all and 1,000 per
test id by default, the oldest dropped first and every drop counted. Credentials are
redacted before an entry is stored. Readable from Python (``server.journal``) and over
HTTP at ``GET /_callgate/journal`` (``?test_id=`` narrows it, ``?after=<seq>&limit=<n>``
pages it; the ``x-callgate-journal-dropped`` header counts the dropped entries).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ["Journal", "JournalEntry", "redact_headers"]

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "api-key", "x-api-key", "x-goog-api-key"}
)
REDACTED = "<redacted>"
MAX_ENTRIES = 10_000
MAX_PER_TEST = 1_000
BODY_PREFIX = 4096  # characters of an oversized body kept in its entry


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with every credential replaced by ``<redacted>``."""
    return {k: (REDACTED if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


_SECRET_RAW = frozenset(name.encode("latin-1") for name in _SECRET_HEADERS)


def redacted_raw(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """ASGI header pairs decoded and redacted in one pass (what
    ``redact_headers({k.decode("latin-1"): v.decode("latin-1") ...})`` returns)."""
    return {
        k.decode("latin-1"): (REDACTED if k.lower() in _SECRET_RAW else v.decode("latin-1"))
        for k, v in raw
    }


@dataclasses.dataclass(slots=True)
class JournalEntry:
    """One request and its answer. ``outcome`` says how the mock handled it:
    ``matched`` (turn ``location`` served), ``mismatch``, ``rejected`` (auth, bad body,
    provider-native validation), ``fault`` (a scripted or runtime fault), ``state``
    (a stored-state route), ``aux`` (a model or token-count route), ``control`` or
    ``steer`` (a WebSocket ``response.steer``; ``response``: the events answering it).
    ``connection`` names the WebSocket connection of a message (method ``WS``)."""

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
    connection: str | None = None  # the WebSocket connection a message arrived on
    duration_ms: float | None = None
    body_size: int | None = None  # bytes of the request body, when one was read
    # What the mock knows of its answer that the body does not say, for the verdicts
    # (callgate.mock._verdicts): the gate's decision on a served turn, a Retry-After sent.
    facts: dict[str, Any] | None = None

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

    def wire(self) -> dict[str, Any]:
        """:meth:`to_dict` without the deep copy (for serializing right away)."""
        data = {name: getattr(self, name) for name in _FIELDS}
        data["problems"] = list(self.problems)
        return data


_FIELDS = tuple(f.name for f in dataclasses.fields(JournalEntry))

EntryObserver = Callable[[JournalEntry], None]


class _ObservedEntry(JournalEntry):
    """An entry that tells the journal's observer when it closes (a slot, not a field:
    what an entry serializes to is unchanged)."""

    __slots__ = ("_observer",)
    _observer: EntryObserver

    def close(
        self,
        status: int,
        response: Any,
        outcome: str,
        location: str | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        JournalEntry.close(self, status, response, outcome, location, problems)
        self._observer(self)


class _Lane:
    """One test id's entries, oldest first, and how many of them the caps dropped."""

    __slots__ = ("dropped", "entries")

    def __init__(self) -> None:
        self.entries: collections.deque[JournalEntry] = collections.deque()
        self.dropped = 0


class Journal:
    """Thread-safe list of :class:`JournalEntry` in arrival order, bounded twice: at most
    ``max_entries`` in all and ``max_per_test`` per test id. The oldest entry goes first
    and every drop is counted (:meth:`dropped`). ``seq`` numbers never repeat, also across
    :meth:`clear`, so they serve as the cursor of a paged read (:meth:`page`).
    """

    def __init__(self, *, max_entries: int = MAX_ENTRIES, max_per_test: int = MAX_PER_TEST) -> None:
        if max_entries < 1 or max_per_test < 1:
            raise ValueError("journal caps must be at least 1")
        self.max_entries = max_entries
        self.max_per_test = max_per_test
        self._entries: collections.OrderedDict[int, JournalEntry] = collections.OrderedDict()
        self._lanes: dict[str, _Lane] = {}
        self._next_seq = 0
        self._dropped = 0
        self._lock = threading.Lock()
        self._observer: EntryObserver | None = None
        self._judge: EntryObserver | None = None
        self._notify: EntryObserver | None = None  # the observer and the judge, in one

    def judge(self, judge: EntryObserver | None) -> None:
        """Call ``judge(entry)`` once each later entry is closed, before the observer (the
        verdicts, :mod:`callgate.mock._verdicts`). It must not raise."""
        self._judge = judge
        self._notify = _both(judge, self._observer)

    def observe(self, observer: EntryObserver | None) -> None:
        """Call ``observer(entry)`` once each later entry is closed (its answer complete),
        on the server's thread: ``callgate serve`` prints its request log this way. It
        must not raise. ``None`` stops it. Entries opened before keep the old setting."""
        self._observer = observer
        self._notify = _both(self._judge, observer)

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
        redacted: bool = False,
    ) -> JournalEntry:
        """Open an entry; ``redacted``: ``headers`` is a fresh dict already redacted (as
        :func:`redact_headers` returns), kept as it is."""
        # Positional: one entry per request, and keyword construction costs twice as much.
        observer = self._notify
        entry = (JournalEntry if observer is None else _ObservedEntry)(
            -1, test_id, conversation, protocol, method, path,
            _redact_query(query) if query else query,
            headers if redacted else redact_headers(headers),  # type: ignore[arg-type]
            body, time.time(),
        )  # fmt: skip
        if observer is not None:
            entry._observer = observer  # type: ignore[attr-defined]
        entries = self._entries
        with self._lock:
            entry.seq = seq = self._next_seq
            self._next_seq = seq + 1
            entries[seq] = entry
            lane = self._lanes.get(test_id)
            if lane is None:
                lane = self._lanes[test_id] = _Lane()
            lane_entries = lane.entries
            lane_entries.append(entry)
            if len(lane_entries) > self.max_per_test:
                del entries[lane_entries.popleft().seq]
                lane.dropped += 1
                self._dropped += 1
            if len(entries) > self.max_entries:
                self._drop_oldest()
        return entry

    def _drop_oldest(self) -> None:
        _, oldest = self._entries.popitem(last=False)
        lane = self._lanes[oldest.test_id]
        lane.entries.popleft()  # the oldest of all is the oldest of its test id
        lane.dropped += 1
        self._dropped += 1
        if not lane.entries:
            del self._lanes[oldest.test_id]

    def entries(self, *, test_id: str | None = None) -> list[JournalEntry]:
        """A snapshot, optionally for one test id."""
        with self._lock:
            if test_id is None:
                return list(self._entries.values())
            lane = self._lanes.get(test_id)
            return list(lane.entries) if lane is not None else []

    def page(
        self, *, test_id: str | None = None, after: int = -1, limit: int | None = None
    ) -> list[JournalEntry]:
        """At most ``limit`` entries with ``seq > after``, oldest first (optionally for one
        test id). Pass the last ``seq`` of a page as ``after`` to read the next one."""
        with self._lock:
            if test_id is None:
                source: Iterable[JournalEntry] = self._entries.values()
            else:
                lane = self._lanes.get(test_id)
                source = lane.entries if lane is not None else ()
            found = (e for e in source if e.seq > after)
            return list(found if limit is None else itertools.islice(found, limit))

    def dropped(self, test_id: str | None = None) -> int:
        """How many entries the caps dropped (in all, or of one test id still present)."""
        with self._lock:
            if test_id is None:
                return self._dropped
            lane = self._lanes.get(test_id)
            return lane.dropped if lane is not None else 0

    def clear(self, test_id: str | None = None) -> None:
        """Forget every entry (and drop count), or those of one test id."""
        with self._lock:
            if test_id is None:
                self._entries.clear()
                self._lanes.clear()
                self._dropped = 0
                return
            lane = self._lanes.pop(test_id, None)
            if lane is not None:
                for entry in lane.entries:
                    del self._entries[entry.seq]
                self._dropped -= lane.dropped

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


def _both(first: EntryObserver | None, second: EntryObserver | None) -> EntryObserver | None:
    """One observer calling ``first`` then ``second`` (either may be ``None``)."""
    if first is None or second is None:
        return first or second

    def both(entry: JournalEntry) -> None:
        first(entry)
        second(entry)

    return both


def _redact_query(query: str) -> str:
    """The query with the value of every ``key`` parameter redacted, however its name is
    spelled: ``key``, ``KEY``, ``%6Bey`` and ``k%65y`` all reach Google as the API key."""
    if "=" not in query or ("%" not in query and "key" not in query.lower()):
        return query
    parts = []
    for part in query.split("&"):
        name, sep, _ = part.partition("=")
        secret = sep and urllib.parse.unquote_plus(name).strip().lower() == "key"
        parts.append(f"{name}={REDACTED}" if secret else part)
    return "&".join(parts)
