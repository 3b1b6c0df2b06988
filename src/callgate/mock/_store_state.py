"""One session's stored objects and what the mock emitted, for later requests to refer to.

Every served turn becomes a :class:`Record` (OpenAI Response, Anthropic Message, Gemini
Interaction), kept whether or not the request said ``store: false``: an unstored record
cannot be referenced by id, but the validation layer still compares replayed items
against what the mock emitted. The per-item indexes (OpenAI output items, Anthropic
thinking blocks) are built lazily, the first time a request needs them, so a session that
never replays history pays nothing for them.

The stored objects are what the *script* says the provider produced: a stream cut short
by ``disconnect_after`` (or a stream fault) still leaves the complete object behind, as a
real provider keeps generating after a client goes away. That is what makes a resume by
``last_event_id`` useful.

Guarded by the owning :class:`~callgate.mock.MockState`'s lock; nothing here locks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ._respond import Rendered, render

if TYPE_CHECKING:
    from ._state import MockState, Served

__all__ = ["Record", "SessionStore"]

_OPENAI_TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_THINKING = frozenset({"thinking", "redacted_thinking"})


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
    # The events a stream fault let through (e.g. a truncation's cut arguments), when they
    # differ from the rendered turn: what replayed items are compared against.
    sent: tuple[dict[str, Any], ...] | None = None

    @property
    def calls(self) -> tuple[tuple[str, str], ...]:
        return self.served.rendered.calls

    @property
    def referable(self) -> bool:
        """Can be named by id (GET, DELETE, previous id)."""
        return self.stored and not self.deleted


class SessionStore:
    """Records by id, the call ids they emitted, and lazy indexes of emitted content."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}
        self.call_owner: dict[str, str] = {}  # call id -> record id
        # OpenAI: output item id -> the item as emitted; reasoning id -> the item after it.
        self.items: dict[str, dict[str, Any]] = {}
        self.item_owner: dict[str, str] = {}  # output item id -> the record that emitted it
        self.followers: dict[str, dict[str, Any] | None] = {}
        # Anthropic: (signature, thinking) pairs emitted; tool_use id -> whether the message
        # that emitted it started with a thinking block.
        self.thinking: set[tuple[str, str]] = set()
        self.thinking_first: dict[str, bool] = {}
        self._pending: list[Record] = []

    def add(self, record: Record) -> None:
        self.records[record.id] = record
        for call_id, _ in record.calls:
            self.call_owner[call_id] = record.id
        self._pending.append(record)

    def note_sent(self, record_id: str, events: tuple[dict[str, Any], ...]) -> None:
        """Record that a stream fault changed what ``record_id``'s client received."""
        record = self.records.get(record_id)
        if record is not None:
            record.sent = events
            if all(r is not record for r in self._pending):  # indexed: index what was sent
                self._pending.append(record)

    def get(self, protocol: str, record_id: Any) -> Record | None:
        """The record of ``protocol`` with this id (deleted or unstored ones included)."""
        found = self.records.get(record_id) if isinstance(record_id, str) else None
        return found if found is not None and found.protocol == protocol else None

    def referable(self, protocol: str, record_id: Any) -> Record | None:
        found = self.get(protocol, record_id)
        return found if found is not None and found.referable else None

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
            if record.protocol == "openai_responses":
                self._index_openai(record)
            elif record.protocol == "anthropic_messages":
                self._index_anthropic(record)

    def _index_openai(self, record: Record) -> None:
        items = openai_emitted_items(_received(record))
        for position, item in enumerate(items):
            item_id = item.get("id")
            if not isinstance(item_id, str):
                continue
            self.items[item_id] = item
            self.item_owner[item_id] = record.id
            if item.get("type") == "reasoning":
                following = items[position + 1] if position + 1 < len(items) else None
                self.followers[item_id] = following

    def _index_anthropic(self, record: Record) -> None:
        blocks = anthropic_emitted_blocks(_received(record))
        starts_with_thinking = bool(blocks) and blocks[0].get("type") in _THINKING
        for block in blocks:
            if block.get("type") == "thinking":
                self.thinking.add((str(block.get("signature", "")), str(block.get("thinking", ""))))
            elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.thinking_first[block["id"]] = starts_with_thinking


# -- what was emitted, read back from a rendered turn -------------------------------------


def _received(record: Record) -> Rendered:
    """The rendered turn as its client received it (after any stream fault)."""
    rendered = record.served.rendered
    if record.sent is None:
        return rendered
    return dataclasses.replace(rendered, events=record.sent, sse=b"", frames=())


def openai_emitted_items(rendered: Rendered) -> list[dict[str, Any]]:
    """The output items the client received (complete items only, in output order)."""
    if rendered.body is not None:
        return list(rendered.body.get("output", ()))
    if rendered.events and rendered.events[-1].get("type") in _OPENAI_TERMINALS:
        return list(rendered.events[-1]["response"].get("output", ()))
    done = [e for e in rendered.events if e.get("type") == "response.output_item.done"]
    return [e["item"] for e in sorted(done, key=lambda e: e.get("output_index", 0))]


def anthropic_emitted_blocks(rendered: Rendered) -> list[dict[str, Any]]:
    """The content blocks the client received (a cut stream gives its partial blocks)."""
    if rendered.body is not None:
        return list(rendered.body.get("content", ()))
    blocks: dict[int, dict[str, Any]] = {}
    thinking: dict[int, list[str]] = {}
    for event in rendered.events:
        kind = event.get("type")
        if kind == "content_block_start":
            index = event["index"]
            blocks[index] = dict(event["content_block"])
            thinking[index] = [blocks[index].get("thinking", "")]
        elif kind == "content_block_delta" and event["index"] in blocks:
            index, delta = event["index"], event["delta"]
            if delta.get("type") == "thinking_delta":
                thinking[index].append(delta.get("thinking", ""))
            elif delta.get("type") == "signature_delta":
                blocks[index]["signature"] = delta.get("signature", "")
    for index, block in blocks.items():
        if block.get("type") == "thinking":
            block["thinking"] = "".join(thinking[index])
    return [blocks[i] for i in sorted(blocks)]


# -- complete objects, re-rendered from the script when the wire did not carry them ---------


def _rerender(state: MockState, served: Served, *, stream: bool) -> Rendered:
    turn = served.turn
    if "disconnect_after" in turn.respond:
        respond = {k: v for k, v in turn.respond.items() if k != "disconnect_after"}
        turn = dataclasses.replace(turn, respond=respond)
    model = served.request.get("model")
    return render(
        turn,
        seed=state.script.seed,
        conversation=served.conversation,
        turn_number=served.turn_number,
        stream=stream,
        baseline=state.script.baseline,
        model=model if isinstance(model, str) else None,
        stored=served.request.get("store") is not False,
    )


def final_object(state: MockState, record: Record) -> dict[str, Any]:
    """The complete object as a non-streaming create returns it (cached).

    OpenAI: for a streamed turn, the terminal event's ``response``. Otherwise the turn is
    rendered again from the script (ids are deterministic, so they are the same ids).
    """
    if record.final is None:
        rendered = record.served.rendered
        if rendered.body is not None:
            record.final = rendered.body
        elif (
            record.protocol == "openai_responses"
            and rendered.events
            and rendered.events[-1].get("type") in _OPENAI_TERMINALS
        ):
            record.final = rendered.events[-1]["response"]
        else:
            body = _rerender(state, record.served, stream=False).body
            assert body is not None  # render(stream=False) always gives a body
            record.final = body
    return record.final


def full_stream(state: MockState, record: Record) -> Rendered:
    """The complete stream of the turn, as if it had been streamed without faults (cached)."""
    if record.full is None:
        rendered = record.served.rendered
        untouched = rendered.body is None and "disconnect_after" not in record.served.turn.respond
        record.full = rendered if untouched else _rerender(state, record.served, stream=True)
    return record.full
