"""Which turn answers a request: the ordered turn, a fixture, or the fallback.

:func:`take` serves a request body with the conversation's next ordered turn if it
matches (and advances the cursor), else with the first order-free fixture that matches
(see :mod:`callgate.mock._fixtures`), else with the fallback; a request no turn answers
is recorded as a :class:`~._state.Mismatch`. The served turn is rendered once per script
(:func:`_render`, memoised on the session). Everything here runs under the state's lock
and changes only the session's data (:mod:`._state`).
"""

from __future__ import annotations

from typing import Any

from ._fixtures import Fixture
from ._match import mismatches
from ._providers import provider
from ._providers._kit import Rendered, RequestView, ScriptTurn, is_stored
from ._render_turn import render
from ._state import Conversation, Mismatch, MockState, Served, Session

__all__ = ["next_turn", "take"]

_MAX_RENDERED = 4096
# Conversations a session tracks for fixtures beyond the script's own (names come from
# request headers: keep them bounded; past this, a fixture answers without a previous).
MAX_FIXTURE_CONVERSATIONS = 256
_MAX_FIXTURE_NOTES = 8  # fixtures named in one mismatch (the rest are counted)


def next_turn(state: MockState, session: Session, conversation: str) -> ScriptTurn | None:
    """The turn the next request of ``conversation`` must match, if any."""
    with state.lock:
        conv = session.conversations.get(conversation)
        turns = session.script.conversations.get(conversation, ())
        if conv is None or conv.cursor >= len(turns):
            return None
        return turns[conv.cursor]


def take(
    state: MockState, session: Session, conversation: str, protocol: str, body: dict[str, Any]
) -> Served | Mismatch:
    """Serve ``body`` with the conversation's next ordered turn if it matches (and
    advance), else with the first matching fixture, else the fallback."""
    with state.lock:
        conv = _conversation(session, conversation)
        view = provider(protocol).view(body)
        calls = _answered(session, conv, protocol, view)
        turn, location, problems = _ordered(
            session, conversation, conv, protocol, view, calls, body
        )
        if turn is not None and conv is not None and not problems:
            served = _serve(session, conversation, conv, turn, conv.cursor, body)
            conv.cursor += 1
            return served
        order_free = session.script.fixtures or session.script.fallback
        if not order_free:
            return state.record_mismatch(session, conversation, protocol, location, *problems)
        chosen = _fixture(session, conv, protocol, view, body, calls)
        if isinstance(chosen, list):
            return state.record_mismatch(
                session, conversation, protocol, location, *problems, *chosen
            )
        fixture, turn = chosen
        serial = session.fixture_uses.get(fixture.location, 0)
        session.fixture_uses[fixture.location] = serial + 1
        return _serve(session, conversation, conv, turn, serial, body, serial)


def _conversation(session: Session, name: str) -> Conversation | None:
    found = session.conversations.get(name)
    if found is None and (session.script.fixtures or session.script.fallback):
        extra = len(session.conversations) - len(session.script.conversations)
        if extra < MAX_FIXTURE_CONVERSATIONS:
            found = session.conversations[name] = Conversation()
    return found


def _answered(
    session: Session, conv: Conversation | None, protocol: str, view: RequestView
) -> tuple[tuple[str, str], ...]:
    """The (call id, name) pairs the request answers: those of the stored response its
    previous id names, else those of the conversation's previous response."""
    if isinstance(view.previous_id, str):
        found = session.store.get(protocol, view.previous_id)
        if found is not None:
            return found.served.rendered.calls
    return conv.previous.calls if conv is not None and conv.previous else ()


def _ordered(
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
    problems += provider(protocol).turn_problems(turn, body)
    return turn, turn.location, problems


def _fixture(
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
        problems += provider(protocol).turn_problems(turn, body)
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
    session: Session,
    conversation: str,
    conv: Conversation | None,
    turn: ScriptTurn,
    number: int,
    body: dict[str, Any],
    serial: int | None = None,
) -> Served:
    model = body.get("model")
    rendered = _render(
        session,
        turn,
        conversation,
        number,
        body.get("stream") is True,
        model if isinstance(model, str) else None,
        is_stored(provider(turn.protocol), body),
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
