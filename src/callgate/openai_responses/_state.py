"""States, the transition table and per-item sub-states of one Responses stream.

Theory of operation
-------------------

OpenAI's Responses streaming guide and API reference
(https://platform.openai.com/docs/api-reference/responses-streaming) describe one stream
as: ``response.created``, lifecycle updates (``response.queued`` / ``response.in_progress``),
then, per output item, ``response.output_item.added`` at an ``output_index``, events scoped
to that item (``item_id`` + ``output_index``), ``response.output_item.done``; and finally
one terminal: ``response.completed``, ``response.incomplete`` or ``response.failed``. An
``error`` event may stand in for the terminal or precede ``response.failed``. Every event
carries a ``sequence_number``.

The stream-level machine is the table below: ``TRANSITIONS[state][kind] -> next state``.
A (state, kind) pair that is absent is a :class:`~callgate.SequenceError`. Item-level
rules live in :class:`OpenItem` / :class:`Part` and the parser's handlers:

- an ``output_index`` is added once and done once; events name an index that is open and
  the ``item_id`` of the item there (association is by index, cross-checked by id, never
  by "the current call");
- an item-scoped event must suit the item's type (argument deltas only for a
  ``function_call``, text deltas only inside an open part of the right kind);
- deltas are kept as fragments and joined once, at the matching ``.done``; the joined
  text must equal the ``.done`` text, the ``output_item.done`` item and, at
  ``response.completed``, the terminal Response's ``output``.

``sequence_number`` must strictly increase (not necessarily from 0 or contiguously:
``starting_after`` resumption skips numbers). The response id is fixed by
``response.created`` and every later lifecycle event must repeat it.
"""

from __future__ import annotations

import enum
from types import MappingProxyType
from typing import Any, Final

from ._events import Kind

__all__ = [
    "HOSTED_ITEM_TYPES",
    "PART_KINDS",
    "SUPPORTED_ITEM_TYPES",
    "TRANSITIONS",
    "OpenItem",
    "Part",
    "State",
]


class State(enum.Enum):
    """Where the stream is. ``FAILED`` is the parser's own sticky error state."""

    START = "start"  # nothing yet
    OPEN = "open"  # response.created seen, no terminal yet
    ERRORED = "errored"  # an `error` event was seen; only response.failed may follow
    TERMINATED = "terminated"  # one terminal seen; nothing may follow
    FAILED = "failed"  # the parser raised; it stays failed


_S = State
TRANSITIONS: Final[MappingProxyType[State, MappingProxyType[str, State]]] = MappingProxyType(
    {
        _S.START: MappingProxyType({Kind.CREATED: _S.OPEN, Kind.ERROR: _S.ERRORED}),
        _S.OPEN: MappingProxyType(
            {
                Kind.UPDATE: _S.OPEN,
                Kind.ITEM_ADDED: _S.OPEN,
                Kind.ITEM: _S.OPEN,
                Kind.ITEM_DONE: _S.OPEN,
                Kind.GLOBAL: _S.OPEN,
                Kind.TERMINAL: _S.TERMINATED,
                Kind.ERROR: _S.ERRORED,
            }
        ),
        # After an in-stream error only the failed terminal may follow (checked by the
        # terminal handler: a `response.completed` here is a SequenceError).
        _S.ERRORED: MappingProxyType({Kind.TERMINAL: _S.TERMINATED}),
        _S.TERMINATED: MappingProxyType({}),
        _S.FAILED: MappingProxyType({}),
    }
)

# Output items callgate understands. Client function calls are the only ones it releases;
# the hosted ones ran on OpenAI's side and are kept raw (for replay and citations).
HOSTED_ITEM_TYPES: Final = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call"}
)
SUPPORTED_ITEM_TYPES: Final = frozenset({"message", "reasoning", "function_call"}) | (
    HOSTED_ITEM_TYPES
)
# Part kinds allowed per (item type, channel): content parts and reasoning summary parts.
PART_KINDS: Final = MappingProxyType(
    {
        ("message", "content_index"): frozenset({"output_text", "refusal"}),
        ("reasoning", "content_index"): frozenset({"reasoning_text"}),
        ("reasoning", "summary_index"): frozenset({"summary_text"}),
    }
)


class Part:
    """One content or summary part of an open item: its kind and text fragments."""

    __slots__ = ("chars", "closed", "frags", "kind", "text")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.frags: list[str] = []
        self.chars = 0
        self.text: str | None = None  # set by the `.done` event of its text
        self.closed = False

    def joined(self) -> str:
        return "".join(self.frags)


class OpenItem:
    """The parser's record of one ``output_index``.

    ``frags`` holds argument (or code) fragments; ``done_text`` the ``.done`` value;
    ``parts`` the content/summary parts keyed by (index field, index). ``done`` is the raw
    ``output_item.done`` item once it arrived.
    """

    __slots__ = (
        "added",
        "done",
        "done_text",
        "frag_bytes",
        "frags",
        "id",
        "index",
        "parts",
        "type",
    )

    def __init__(self, index: int, item: dict[str, Any]) -> None:
        self.index = index
        self.added = item
        self.type: str = item["type"]
        item_id = item.get("id")
        self.id: str | None = item_id if type(item_id) is str else None
        self.frags: list[str] = []
        self.frag_bytes = 0
        self.done_text: str | None = None
        self.parts: dict[tuple[str, int], Part] = {}
        self.done: dict[str, Any] | None = None
