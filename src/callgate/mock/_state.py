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
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Any

from ._faults_spec import Armed
from ._http import CONVERSATION_HEADER, TEST_ID_HEADER, Rendered
from ._journal import Journal
from ._match import mismatches
from ._providers import provider
from ._render_turn import render
from ._script import Script, ScriptTurn
from ._store_state import SessionStore

__all__ = [
    "CONVERSATION_HEADER",
    "TEST_ID_HEADER",
    "Mismatch",
    "MockState",
    "Served",
    "Session",
]

_MAX_RENDERED = 4096
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


@dataclasses.dataclass(slots=True)
class Conversation:
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


class MockState:
    """Everything the app remembers. Thread-safe: one lock guards all sessions."""

    def __init__(
        self, script: Script, *, journal: Journal | None = None, max_sessions: int = MAX_SESSIONS
    ) -> None:
        self.script = script
        self.journal = journal if journal is not None else Journal()
        self.mismatches: collections.deque[Mismatch] = collections.deque(maxlen=_MAX_MISMATCHES)
        self.max_sessions = max_sessions
        self._sessions: collections.OrderedDict[str, Session] = collections.OrderedDict()
        self.lock = threading.RLock()
        self._rendered: dict[Any, Rendered] = {}
        # Sessions with a script of their own, kept until dropped (see ``_sessions``).
        self.registered: dict[str, Session] = {}
        self.default_test_id = "default"
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
            }

    def next_turn(self, session: Session, conversation: str) -> ScriptTurn | None:
        """The turn the next request of ``conversation`` must match, if any."""
        with self.lock:
            conv = session.conversations.get(conversation)
            turns = session.script.conversations.get(conversation, ())
            if conv is None or conv.cursor >= len(turns):
                return None
            return turns[conv.cursor]

    def take(
        self, session: Session, conversation: str, protocol: str, body: dict[str, Any]
    ) -> Served | Mismatch:
        """Match ``body`` against the next turn; on success render it and advance."""
        with self.lock:
            conv = session.conversations.get(conversation)
            if conv is None:
                return self.record_mismatch(
                    session, conversation, protocol, None, "unknown conversation"
                )
            turns = session.script.conversations[conversation]
            if conv.cursor >= len(turns):
                return self.record_mismatch(
                    session, conversation, protocol, None, "the script has no turn left"
                )
            turn = turns[conv.cursor]
            if turn.protocol != protocol:
                return self.record_mismatch(
                    session, conversation, protocol, turn.location,
                    f"next turn is {turn.protocol}, request came on the {protocol} route",
                )  # fmt: skip
            problems = mismatches(
                turn.expect,
                provider(protocol).view(body),
                previous_response_id=conv.previous.response_id if conv.previous else None,
                previous_calls=conv.previous.calls if conv.previous else (),
            )
            if problems:
                return self.record_mismatch(
                    session, conversation, protocol, turn.location, *problems
                )
            model = body.get("model")
            rendered = self._render(
                session,
                turn,
                conversation,
                conv.cursor,
                body.get("stream") is True,
                model if isinstance(model, str) else None,
                body.get("store") is not False,
                provider(protocol).render_options(body),
            )
            served = Served(session.test_id, conversation, conv.cursor, turn, rendered, body)
            conv.cursor += 1
            conv.previous = rendered
            return served

    def _render(
        self,
        session: Session,
        turn: ScriptTurn,
        conversation: str,
        number: int,
        stream: bool,
        model: str | None,
        stored: bool = True,
        options: tuple[str, ...] = (),
    ) -> Rendered:
        # A rendered turn depends only on these (seed and baseline are the script's), and
        # every session replays the same script: render each once. Rendered turns are
        # never changed in place (the store copies before it edits), so sharing is safe.
        key = (conversation, number, stream, model, stored, options)
        memo, script = session.memo, session.script
        found = memo.get(key)
        if found is None:
            if len(memo) >= _MAX_RENDERED:
                memo.clear()  # models come from requests: keep the memo bounded
            found = memo[key] = render(
                turn,
                seed=script.seed,
                conversation=conversation,
                turn_number=number,
                stream=stream,
                baseline=script.baseline,
                model=model,
                stored=stored,
                options=options,
            )
        return found

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
