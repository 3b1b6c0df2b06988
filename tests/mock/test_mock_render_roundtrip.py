"""Writer output through the reader: each room's ``_render`` seam, parsed by its own parser.

Any scripted turn (text, reasoning, function calls with JSON arguments, any delta chunk
plan) that ``render_stream`` writes, the room's ``Parser`` reads back whole, byte by byte
and at random splits, as exactly the scripted calls, text and reasoning; ``render_body``
gives the same through ``parse_response``. The mock serves these writers, so a writer that
drifted from its reader would show up here before it showed up in a user's test.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import anthropic_messages, gemini_interactions, openai_responses
from callgate.anthropic_messages import _render as anthropic_render
from callgate.gemini_interactions import _render as gemini_render
from callgate.mock._script import make_splitter
from callgate.openai_responses import _render as openai_render


@dataclasses.dataclass(frozen=True)
class Scripted:
    """A turn as a script gives it, and what any reader must get back."""

    text: str | None
    reasoning: tuple[str, str] | None  # (summary / thinking text, signature)
    calls: tuple[tuple[str, str, dict[str, Any]], ...]  # (call id, name, arguments)
    chunking: Any

    def arguments(self, n: int) -> str:
        return json.dumps(self.calls[n][2], separators=(",", ":"), ensure_ascii=False)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_SIGNATURE = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=4)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,16}", fullmatch=True)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_CHUNKING = st.sampled_from(["whole", "char"]) | st.builds(
    lambda n: {"fixed": n}, st.integers(1, 5)
)


@st.composite
def scripted(draw: st.DrawFn) -> Scripted:
    count = draw(st.integers(0, 3))
    calls = tuple(
        (f"call_{n}", draw(_NAME), draw(st.dictionaries(_TEXT, _JSON, max_size=3)))
        for n in range(count)
    )
    reasoning = draw(st.none() | st.tuples(_TEXT, _SIGNATURE))
    return Scripted(draw(st.none() | _TEXT), reasoning, calls, draw(_CHUNKING))


# -- each room: how a scripted turn is written, and how its parsed turn is read back ---------


@dataclasses.dataclass(frozen=True)
class Room:
    stream: Callable[[Scripted], bytes]
    body: Callable[[Scripted], dict[str, Any]]
    parser: Callable[[], Any]
    parse_response: Callable[[dict[str, Any]], Any]
    text: Callable[[Any], str]
    reasoning: Callable[[Any], tuple[tuple[str, str], ...]]


def _openai_items(turn: Scripted) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        summary, signature = turn.reasoning
        items.append({"type": "reasoning", "id": "rs_1", "summary": [summary],
                      "encrypted_content": signature})  # fmt: skip
    if turn.text is not None:
        items.append({"type": "message", "id": "msg_1", "text": turn.text})
    for n, (call_id, name, _) in enumerate(turn.calls):
        items.append({"type": "function_call", "id": f"fc_{n}", "call_id": call_id,
                      "name": name, "arguments": turn.arguments(n)})  # fmt: skip
    return items


def _openai_reasoning(parsed: Any) -> tuple[tuple[str, str], ...]:
    return tuple(
        ("".join(part["text"] for part in item["summary"]), item.get("encrypted_content", ""))
        for item in parsed.items
        if item["type"] == "reasoning"
    )


OPENAI = Room(
    stream=lambda t: openai_render.render_stream(
        response_id="resp_1", model="m", items=_openai_items(t), split=make_splitter(t.chunking)
    ),
    body=lambda t: openai_render.render_body(
        response_id="resp_1", model="m", items=_openai_items(t)
    ),
    parser=openai_responses.Parser,
    parse_response=openai_responses.parse_response,
    text=lambda parsed: parsed.text,
    reasoning=_openai_reasoning,
)


def _anthropic_blocks(turn: Scripted) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        thinking, signature = turn.reasoning
        blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
    if turn.text is not None:
        blocks.append({"type": "text", "text": turn.text})
    for n, (call_id, name, _) in enumerate(turn.calls):
        blocks.append({"type": "tool_use", "id": call_id, "name": name,
                       "input_json": turn.arguments(n)})  # fmt: skip
    return blocks


def _anthropic_stop(turn: Scripted) -> str:
    return "tool_use" if turn.calls else "end_turn"


ANTHROPIC = Room(
    stream=lambda t: anthropic_render.render_stream(
        message_id="msg_1",
        model="m",
        blocks=_anthropic_blocks(t),
        stop_reason=_anthropic_stop(t),
        split=make_splitter(t.chunking),
    ),
    body=lambda t: anthropic_render.render_body(
        message_id="msg_1", model="m", blocks=_anthropic_blocks(t), stop_reason=_anthropic_stop(t)
    ),
    parser=anthropic_messages.Parser,
    parse_response=anthropic_messages.parse_response,
    text=lambda parsed: "".join(b["text"] for b in parsed.content if b["type"] == "text"),
    reasoning=lambda parsed: tuple(
        (b["thinking"], b["signature"]) for b in parsed.content if b["type"] == "thinking"
    ),
)


def _gemini_steps(turn: Scripted) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        summary, signature = turn.reasoning
        steps.append({"type": "thought", "signature": signature, "summary": summary})
    if turn.text is not None:
        steps.append({"type": "model_output", "text": turn.text})
    for n, (call_id, name, _) in enumerate(turn.calls):
        steps.append({"type": "function_call", "id": call_id, "name": name,
                      "arguments": turn.arguments(n)})  # fmt: skip
    return steps


def _gemini_status(turn: Scripted) -> str:
    return "requires_action" if turn.calls else "completed"


def _gemini_text(parsed: Any) -> str:
    return "".join(
        part["text"]
        for step in parsed.steps
        if step["type"] == "model_output"
        for part in step.get("content", ())
    )


def _gemini_reasoning(parsed: Any) -> tuple[tuple[str, str], ...]:
    return tuple(
        ("".join(p["text"] for p in step.get("summary", ())), step["signature"])
        for step in parsed.steps
        if step["type"] == "thought"
    )


GEMINI = Room(
    stream=lambda t: gemini_render.render_stream(
        interaction_id="int_1",
        model="m",
        steps=_gemini_steps(t),
        status=_gemini_status(t),
        split=make_splitter(t.chunking),
    ),
    body=lambda t: gemini_render.render_body(
        interaction_id="int_1", model="m", steps=_gemini_steps(t), status=_gemini_status(t)
    ),
    parser=gemini_interactions.Parser,
    parse_response=gemini_interactions.parse_response,
    text=_gemini_text,
    reasoning=_gemini_reasoning,
)

ROOMS = {"openai_responses": OPENAI, "anthropic_messages": ANTHROPIC, "gemini_interactions": GEMINI}


# -- the round trip -------------------------------------------------------------------------


def _check(room: Room, turn: Scripted, parsed: Any) -> None:
    assert [(c.call_id, c.name, c.arguments) for c in parsed.calls] == list(turn.calls)
    assert room.text(parsed) == (turn.text or "")
    assert room.reasoning(parsed) == ((turn.reasoning,) if turn.reasoning is not None else ())


def _feed(room: Room, chunks: Sequence[bytes]) -> Any:
    parser = room.parser()
    for chunk in chunks:
        parser.feed_bytes(chunk)
    return parser.finish()


def _splits(data: st.DataObject, wire: bytes) -> list[bytes]:
    cuts = sorted(data.draw(st.sets(st.integers(0, len(wire)), max_size=12), label="cuts"))
    edges = [0, *cuts, len(wire)]
    return [wire[a:b] for a, b in itertools.pairwise(edges)]


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("protocol", sorted(ROOMS))
@_SETTINGS
@given(turn=scripted(), data=st.data())
def test_render_stream_parses_back_to_the_scripted_turn_at_any_split(
    protocol: str, turn: Scripted, data: st.DataObject
) -> None:
    room = ROOMS[protocol]
    wire = room.stream(turn)
    _check(room, turn, _feed(room, [wire]))
    _check(room, turn, _feed(room, _splits(data, wire)))


@pytest.mark.parametrize("protocol", sorted(ROOMS))
@settings(max_examples=15, deadline=None)
@given(turn=scripted())
def test_render_stream_parses_back_fed_one_byte_at_a_time(protocol: str, turn: Scripted) -> None:
    room = ROOMS[protocol]
    wire = room.stream(turn)
    _check(room, turn, _feed(room, [wire[i : i + 1] for i in range(len(wire))]))


@pytest.mark.parametrize("protocol", sorted(ROOMS))
@_SETTINGS
@given(turn=scripted())
def test_render_body_parses_back_to_the_scripted_turn(protocol: str, turn: Scripted) -> None:
    room = ROOMS[protocol]
    _check(room, turn, room.parse_response(room.body(turn)))
