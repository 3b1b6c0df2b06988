"""What a running mock remembers: sessions, cursors, mismatches, journal — all bounded.

A *session* is everything one test sees: its own cursor over each scripted
conversation, its own stored responses/interactions and its own runtime faults. The
session is chosen by the ``x-callgate-test-id`` header (default ``"default"``), so
concurrent tests can share one server without cross-talk; the conversation inside it
by ``x-callgate-conversation`` (default ``"default"``).

Memory stays bounded over long runs: at most ``max_sessions`` sessions are kept (the
least recently used one is forgotten first; a forgotten test id starts afresh), the
newest 1,000 mismatches, and the journal's own caps. :meth:`MockState.reset` forgets
everything or one test id.

A session may also be *registered* with a script of its own (``callgate.mock._sessions``):
it is kept in ``registered`` until dropped, never evicted, and a request without a test id
header goes to ``default_test_id`` (``"default"`` unless a registered session took it).

The state is data: which turn answers a request (matching, fixture picking, rendering) is
:mod:`callgate.mock._select`; a session counts each fixture's uses.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from ._faults_spec import Armed
from ._http import CONVERSATION_HEADER, TEST_ID_HEADER, Rendered
from ._journal import Journal
from ._script import Script, ScriptTurn
from ._store_state import SessionStore
from ._verdicts import Verdicts

__all__ = [
    "CONVERSATION_HEADER",
    "TEST_ID_HEADER",
    "Conversation",
    "Mismatch",
    "MockState",
    "Served",
    "Session",
]

MAX_SESSIONS = 1024
_MAX_MISMATCHES = 1000


@dataclasses.dataclass(frozen=True, slots=True)
class Mismatch:
    """A request that matched no turn: where, and every problem found."""

    conversation: str
    protocol: str
    location: str | None
    problems: tuple[str, ...]
    test_id: str = "default"


@dataclasses.dataclass(frozen=True, slots=True)
class Served:
    """A turn the mock answered, with the request that consumed it."""

    test_id: str
    conversation: str
    turn_number: int
    turn: ScriptTurn
    rendered: Rendered
    request: dict[str, Any]
    # A fixture's use number in its session (its ids derive from it); None: an ordered turn.
    serial: int | None = None


@dataclasses.dataclass(slots=True)
class Conversation:
    """One conversation's cursor over its ordered turns, and the last response served."""

    cursor: int = 0
    previous: Rendered | None = None


class Session:
    """One test's view of the script. Guarded by the owning state's lock."""

    def __init__(
        self, test_id: str, script: Script, memo: dict[Any, Rendered] | None = None
    ) -> None:
        self.test_id = test_id
        self.script = script
        # Rendered turns of this session's script (shared by the sessions of one script).
        self.memo: dict[Any, Rendered] = {} if memo is None else memo
        self.conversations = {name: Conversation() for name in script.conversations}
        # Filled by the stored-state (callgate.mock._store) and fault layers.
        self.store = SessionStore()
        self.faults: list[Armed] = []
        self.fixture_uses: dict[str, int] = {}  # fixture location -> uses so far


class MockState:
    """Everything the app remembers. Thread-safe: one lock guards all sessions."""

    def __init__(
        self, script: Script, *, journal: Journal | None = None, max_sessions: int = MAX_SESSIONS
    ) -> None:
        self.script = script
        self.journal = journal if journal is not None else Journal()
        # What each test's client did with what it was served (docs/verdicts.md).
        self.verdicts = Verdicts(max_lanes=max_sessions)
        self.verdicts.previous_request = self._previous_request
        self.journal.judge(self.verdicts)
        self.mismatches: collections.deque[Mismatch] = collections.deque(maxlen=_MAX_MISMATCHES)
        self.max_sessions = max_sessions
        self._sessions: collections.OrderedDict[str, Session] = collections.OrderedDict()
        self.lock = threading.RLock()
        self._rendered: dict[Any, Rendered] = {}
        # Sessions with a script of their own, kept until dropped (see ``_sessions``).
        self.registered: dict[str, Session] = {}
        self.default_test_id = "default"
        # Told (event, status object) when a session is registered or dropped: the hook
        # ``callgate serve`` logs with (see ``_sessions``). Must not raise.
        self.session_observer: Callable[[str, dict[str, Any]], None] | None = None
        # Set when the server shuts down, so streams held open on purpose can end.
        self.closing = threading.Event()

    def session(self, test_id: str = "default") -> Session:
        with self.lock:
            pinned = self.registered.get(test_id)
            if pinned is not None:
                return pinned
            found = self._sessions.get(test_id)
            if found is None:
                found = self._sessions[test_id] = Session(test_id, self.script, self._rendered)
                if len(self._sessions) > self.max_sessions:
                    self._sessions.popitem(last=False)
            else:
                self._sessions.move_to_end(test_id)
            return found

    def _previous_request(
        self, test_id: str, protocol: str, record_id: str
    ) -> dict[str, Any] | None:
        """The request that made the stored turn ``record_id`` of ``test_id``, if kept."""
        with self.lock:
            session = self.registered.get(test_id) or self._sessions.get(test_id)
            record = None if session is None else session.store.get(protocol, record_id)
            return None if record is None else record.served.request

    def reset(self, test_id: str | None = None) -> None:
        """Forget every session, mismatch and journal entry, or those of one test id: its
        cursors restart at turn 0 and its stored objects and runtime faults are gone. A
        registered session stays registered, with its own script, and restarts too."""
        with self.lock:
            for name, old in self.registered.items():
                if test_id is None or name == test_id:
                    self.registered[name] = Session(name, old.script)
            if test_id is None:
                self._sessions.clear()
                self.mismatches.clear()
            else:
                self._sessions.pop(test_id, None)
                kept = [m for m in self.mismatches if m.test_id != test_id]
                self.mismatches.clear()
                self.mismatches.extend(kept)
            self.journal.clear(test_id)
            self.verdicts.clear(test_id)

    def served_turns(self, test_id: str | None = None) -> list[Served]:
        """The turns served so far, in order, in one session or in every kept session."""
        with self.lock:
            sessions = (
                [*self.registered.values(), *self._sessions.values()]
                if test_id is None
                else [
                    s
                    for s in (self.registered.get(test_id) or self._sessions.get(test_id),)
                    if s is not None
                ]
            )
            return [r.served for s in sessions for r in s.store.records.values()]

    def remaining(self, test_id: str = "default") -> dict[str, int]:
        """Turns not yet consumed, per conversation, for one session."""
        with self.lock:
            session = self.session(test_id)
            return {
                name: len(session.script.conversations[name]) - conv.cursor
                for name, conv in session.conversations.items()
                if name in session.script.conversations  # not one only fixtures answered
            }

    def record_mismatch(
        self,
        session: Session,
        conversation: str,
        protocol: str,
        location: str | None,
        *problems: str,
    ) -> Mismatch:
        mismatch = Mismatch(conversation, protocol, location, problems, session.test_id)
        with self.lock:
            self.mismatches.append(mismatch)
        return mismatch
