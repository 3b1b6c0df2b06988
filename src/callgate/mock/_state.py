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

Which turn answers a request (:meth:`MockState.take`): the conversation's next ordered
turn if it matches, else the first order-free fixture that does, else the fallback (see
:mod:`callgate.mock._fixtures`); a session counts each fixture's uses.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from ._faults_spec import Armed
from ._fixtures import Fixture
from ._http import CONVERSATION_HEADER, TEST_ID_HEADER, Rendered
from ._journal import Journal
from ._match import mismatches
from ._providers import provider
from ._providers._kit import RequestView
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
# Conversations a session tracks for fixtures beyond the script's own (names come from
# request headers: keep them bounded; past this, a fixture answers without a previous).
MAX_FIXTURE_CONVERSATIONS = 256
_MAX_FIXTURE_NOTES = 8  # fixtures named in one mismatch (the rest are counted)


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
                if name in session.script.conversations  # not one only fixtures answered
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
        """Serve ``body`` with the conversation's next ordered turn if it matches (and
        advance), else with the first matching fixture, else the fallback."""
        with self.lock:
            conv = self._conversation(session, conversation)
            view = provider(protocol).view(body)
            calls = self._answered(session, conv, protocol, view)
            turn, location, problems = self._ordered(
                session, conversation, conv, protocol, view, calls, body
            )
            if turn is not None and conv is not None and not problems:
                served = self._serve(session, conversation, conv, turn, conv.cursor, body)
                conv.cursor += 1
                return served
            order_free = session.script.fixtures or session.script.fallback
            if not order_free:
                return self.record_mismatch(session, conversation, protocol, location, *problems)
            chosen = self._fixture(session, conv, protocol, view, body, calls)
            if isinstance(chosen, list):
                return self.record_mismatch(
                    session, conversation, protocol, location, *problems, *chosen
                )
            fixture, turn = chosen
            serial = session.fixture_uses.get(fixture.location, 0)
            session.fixture_uses[fixture.location] = serial + 1
            return self._serve(session, conversation, conv, turn, serial, body, serial)

    def _conversation(self, session: Session, name: str) -> Conversation | None:
        found = session.conversations.get(name)
        if found is None and (session.script.fixtures or session.script.fallback):
            extra = len(session.conversations) - len(session.script.conversations)
            if extra < MAX_FIXTURE_CONVERSATIONS:
                found = session.conversations[name] = Conversation()
        return found

    def _answered(
        self, session: Session, conv: Conversation | None, protocol: str, view: RequestView
    ) -> tuple[tuple[str, str], ...]:
        """The (call id, name) pairs the request answers: those of the stored response its
        previous id names, else those of the conversation's previous response."""
        if isinstance(view.previous_id, str):
            found = session.store.get(protocol, view.previous_id)
            if found is not None:
                return found.served.rendered.calls
        return conv.previous.calls if conv is not None and conv.previous else ()

    def _ordered(
        self,
        session: Session,
        conversation: str,
        conv: Conversation | None,
        protocol: str,
        view: RequestView,
        calls: tuple[tuple[str, str], ...],
        body: dict[str, Any],
    ) -> tuple[ScriptTurn | None, str | None, list[str]]:
        """The next ordered turn, its location and why the request does not match it."""
        turns = session.script.conversations.get(conversation)
        if turns is None or conv is None:
            return None, None, ["unknown conversation"] if session.script.conversations else []
        if conv.cursor >= len(turns):
            return None, None, ["the script has no turn left"]
        turn = turns[conv.cursor]
        if turn.protocol != protocol:
            problem = f"next turn is {turn.protocol}, request came on the {protocol} route"
            return turn, turn.location, [problem]
        problems = mismatches(
            turn.expect,
            view,
            previous_response_id=conv.previous.response_id if conv.previous else None,
            previous_calls=calls,
            body=body,
        )
        return turn, turn.location, problems

    def _fixture(
        self,
        session: Session,
        conv: Conversation | None,
        protocol: str,
        view: RequestView,
        body: dict[str, Any],
        calls: tuple[tuple[str, str], ...],
    ) -> tuple[Fixture, ScriptTurn] | list[str]:
        """The first fixture (then the fallback) that answers, or why none does."""
        notes: list[str] = []
        previous = conv.previous.response_id if conv is not None and conv.previous else None
        for fixture in session.script.fixtures:
            turn = fixture.turn_for(protocol)
            if turn is None:
                continue
            used = session.fixture_uses.get(fixture.location, 0)
            if fixture.times is not None and used >= fixture.times:
                notes.append(f"fixture {fixture.location} is used up ({fixture.times} use(s))")
                continue
            problems = mismatches(
                turn.expect, view, previous_response_id=previous, previous_calls=calls, body=body
            )
            if not problems:
                return fixture, turn
            notes.append(f"fixture {fixture.location}: {'; '.join(problems)}")
        fallback = session.script.fallback
        turn = fallback.turn_for(protocol) if fallback is not None else None
        if fallback is not None and turn is not None:
            return fallback, turn
        if not notes:
            return [f"no fixture serves {protocol}"]
        hidden = len(notes) - _MAX_FIXTURE_NOTES
        more = [f"and {hidden} more fixture(s) did not match"] if hidden > 0 else []
        return notes[:_MAX_FIXTURE_NOTES] + more

    def _serve(
        self,
        session: Session,
        conversation: str,
        conv: Conversation | None,
        turn: ScriptTurn,
        number: int,
        body: dict[str, Any],
        serial: int | None = None,
    ) -> Served:
        model = body.get("model")
        rendered = self._render(
            session,
            turn,
            conversation,
            number,
            body.get("stream") is True,
            model if isinstance(model, str) else None,
            body.get("store") is not False,
            provider(turn.protocol).render_options(body),
            serial,
        )
        fault = turn.respond.get("fault")
        answers_error = serial is not None and fault and fault["type"] == "http_error"
        # In a conversation of ordered turns, fixtures answer around the story (a title
        # request, a retry): "previous" stays its last turn's response. A fixture's HTTP
        # error is no response to continue.
        side = serial is not None and conversation in session.script.conversations
        if conv is not None and not answers_error and not side:
            conv.previous = rendered
        return Served(session.test_id, conversation, number, turn, rendered, body, serial)

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
        serial: int | None = None,
    ) -> Rendered:
        # A rendered turn depends only on these (seed and baseline are the script's), and
        # every session replays the same script: render each once. Rendered turns are
        # never changed in place (the store copies before it edits), so sharing is safe.
        key = (conversation, turn.protocol, turn.location, number, stream, model, stored, options)
        memo = session.memo
        found = memo.get(key)
        if found is None:
            if len(memo) >= _MAX_RENDERED:
                memo.clear()  # models come from requests: keep the memo bounded
            found = memo[key] = render(
                turn,
                seed=session.script.seed,
                conversation=conversation,
                turn_number=number,
                stream=stream,
                baseline=session.script.baseline,
                model=model,
                stored=stored,
                options=options,
                serial=serial,
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
