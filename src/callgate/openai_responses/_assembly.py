"""Per-item assembly and shape checks: open items and parts, their consistency rules.

Used by the stream handlers (an item from ``output_item.added`` to its ``.done`` and the
terminal Response's ``output``) and by :func:`~._body.parse_response` (the item shapes), so
a streamed turn and a non-streamed body are held to the same item rules.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Final

from .._errors import LimitExceededError, SchemaError, SequenceError, UnsupportedProviderState
from .._fields import need, opt
from .._limits import Limits
from ._hosted import PING_ORDER, check_streamed_annotations

__all__ = [
    "HOSTED_ITEM_TYPES",
    "PART_KINDS",
    "SUPPORTED_ITEM_TYPES",
    "OpenItem",
    "Part",
    "check_done",
    "check_final_output",
    "check_item",
    "check_text_size",
    "same_item",
]

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

    __slots__ = ("annotations", "chars", "closed", "frags", "kind", "text")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.annotations: list[Any] = []  # streamed annotation.added values, by index
        self.frags: list[str] = []
        self.chars = 0
        self.text: str | None = None  # set by the `.done` event of its text
        self.closed = False

    def joined(self) -> str:
        return "".join(self.frags)

    def add_delta(self, delta: str, limits: Limits, what: str) -> None:
        """One text fragment; refused after the text was done or past ``max_text_chars``."""
        if self.text is not None:
            raise SequenceError(f"{what} after the text was done")
        self.chars += len(delta)
        check_text_size(self.chars, limits)
        self.frags.append(delta)

    def finish_text(self, text: Any, what: str) -> None:
        """The text's ``.done`` value, which must equal the joined fragments."""
        if self.text is not None:
            raise SequenceError(f"{what} twice")
        joined = self.joined()
        if text != joined:
            raise SequenceError(f"{what} differs from the deltas")
        self.text = joined
        self.frags = []

    def close(self, done: dict[str, Any], what: str, warnings: list[str]) -> None:
        """The part's ``.done`` value: same type, the text already done and equal to it;
        its annotations compared with the streamed ones (a mismatch is only a warning)."""
        if done.get("type") != self.kind:
            raise SequenceError(f"{what} changed the part type")
        if self.text is None:
            raise SequenceError(f"{what} before the part's text was done")
        field = "refusal" if self.kind == "refusal" else "text"
        if done.get(field) != self.text:
            raise SequenceError(f"{what} text differs from the streamed text")
        if self.annotations:
            check_streamed_annotations(self.annotations, done.get("annotations"), warnings)
        self.closed = True


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
        "phase",
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
        self.phase = -1  # the last hosted status ping, as its position in PING_ORDER

    def ping(self, phase: str) -> None:
        """A hosted status ping: each at most once, in the tool's order."""
        order = PING_ORDER[self.type]
        position = order.index(phase)
        if position <= self.phase:
            raise SequenceError(
                f"{self.type} status {phase!r} after {order[self.phase]!r} at output_index "
                f"{self.index}"
            )
        self.phase = position


def check_item(item: dict[str, Any], where: str, *, partial: bool = False) -> str:
    """Check one output item's type and the fields the gate needs; return its type.

    A field is required only when the gate's decision needs it (docs/required-fields.md):
    a ``function_call``'s ``call_id`` and ``name`` (binding), its ``arguments`` (release)
    and a hosted item's ``status`` (a hosted tool that did not complete stops the turn's
    calls). ``partial`` is an ``output_item.added`` item, which the API sends before it is
    filled in: there only ``call_id`` and ``name`` are required (``arguments`` and a hosted
    item's ``status``, ``action``... arrive by ``.done``). Every other field is kept raw;
    the ones the parser reads are type-checked when present and non-null (``id``,
    ``content``, ``summary``, ``role``). Hosted-tool details (``action``, ``queries``,
    ``results``, ``outputs``) and annotations are telemetry: never checked here.

    Raises :class:`UnsupportedProviderState` for item types or call metadata callgate does
    not implement (unknown types, MCP, programs, custom/shell/computer tools, a
    programmatic caller, a namespaced or async function) and :class:`SchemaError` for a
    missing or mistyped field of the above.
    """
    kind = item.get("type")
    if type(kind) is not str:
        raise SchemaError(f"{where} has no string 'type'")
    if kind not in SUPPORTED_ITEM_TYPES:
        raise UnsupportedProviderState(f"{where} has unsupported item type {kind[:80]!r}")
    opt(item, "id", (str,), where)
    if kind == "function_call":
        need(item, "call_id", (str,), where)
        need(item, "name", (str,), where)
        if partial:
            opt(item, "arguments", (str,), where)
        else:
            need(item, "arguments", (str,), where)
        caller = item.get("caller")
        # Only a direct call is executed by the host; a program's call belongs to a
        # server-side program whose semantics callgate does not implement.
        if caller is not None and (type(caller) is not dict or caller.get("type") != "direct"):
            raise UnsupportedProviderState(f"{where} has a non-direct caller {caller!r:.120}")
        if item.get("namespace") is not None:
            raise UnsupportedProviderState(f"{where} calls a namespaced tool")
        # Identity, not ==: 0 == False, so a membership test would pass "async": 0.
        flag = item.get("async")
        if flag is not None and flag is not False:
            raise UnsupportedProviderState(f"{where} is an asynchronous function call")
    elif kind == "message":
        opt(item, "content", (list,), where)
        opt(item, "role", (str,), where)
    elif kind == "reasoning":
        opt(item, "summary", (list,), where)
    elif partial:
        opt(item, "status", (str,), where)
    else:
        need(item, "status", (str,), where)
    return kind


def check_done(st: OpenItem, item: dict[str, Any], where: str) -> None:
    """The ``output_item.done`` item ``item`` is the one streamed at ``st``'s index: same
    type and id, and its arguments, code and parts equal what was streamed."""
    if check_item(item, where) != st.type:
        raise SequenceError(f"{where} changed type from {st.type!r} to {item['type']!r}")
    item_id = item.get("id")
    # An item that came without its optional id may stay without it; any id it shows
    # must be the one the stream bound to its index.
    if item_id != st.id and (item_id is not None or st.added.get("id") is not None):
        raise SequenceError(f"{where} changed id from {st.id!r} to {item_id!r}")
    if st.type == "function_call":
        for key in ("call_id", "name"):
            if item[key] != st.added.get(key):
                raise SequenceError(f"{where} changed {key} on output_item.done")
        if st.done_text is None:
            raise SequenceError(f"{where} is done before function_call_arguments.done")
        if item["arguments"] != st.done_text:
            raise SequenceError(f"{where} arguments differ from the streamed arguments")
    elif st.type == "code_interpreter_call":
        if st.done_text is None and st.frags:
            raise SequenceError(f"{where} is done before its code was done")
        if st.done_text is not None and item.get("code") != st.done_text:
            raise SequenceError(f"{where} code differs from the streamed code")
    if st.type in PING_ORDER and st.phase == len(PING_ORDER[st.type]) - 1:
        if item.get("status") != "completed":
            raise SequenceError(
                f"{where} was pinged completed but is done with status {item.get('status')!r}"
            )
    elif st.type in ("message", "reasoning"):
        _check_parts(st, item, where)


def _check_parts(st: OpenItem, item: dict[str, Any], where: str) -> None:
    """Every streamed part is closed and equals the done item's part at its index."""
    counts = {"content_index": 0, "summary_index": 0}
    for (field, index), part in st.parts.items():
        if not part.closed:
            raise SequenceError(f"{where} is done with {field} {index} still open")
        counts[field] += 1
        entries = item.get("content" if field == "content_index" else "summary")
        entry = entries[index] if type(entries) is list and 0 <= index < len(entries) else None
        key = "refusal" if part.kind == "refusal" else "text"
        if type(entry) is not dict or entry.get("type") != part.kind or entry.get(key) != part.text:
            raise SequenceError(f"{where} {field} {index} differs from the streamed part")
    for field, name in (("content_index", "content"), ("summary_index", "summary")):
        entries = item.get(name)
        listed = len(entries) if type(entries) is list else 0
        if listed != counts[field]:
            raise SequenceError(
                f"{where} lists {listed} {name} parts, the stream had {counts[field]}"
            )


def check_final_output(items: dict[int, OpenItem], output: Any) -> tuple[dict[str, Any], ...]:
    """The terminal Response's ``output``, checked equal to the streamed done items."""
    if type(output) is not list:
        raise SchemaError("terminal response has no 'output' list")
    if len(output) != len(items):
        raise SequenceError(f"terminal output has {len(output)} items, the stream had {len(items)}")
    for index, final in enumerate(output):
        st = items.get(index)
        if st is None or st.done is None:
            raise SequenceError(f"terminal output[{index}] was never streamed")
        if (
            type(final) is not dict
            or not same_item(st.done, final)
            or final.get("id") not in (None, st.id)
        ):
            raise SequenceError(f"terminal output[{index}] differs from its output_item.done item")
    return tuple(output)


def same_item(done: dict[str, Any], final: dict[str, Any]) -> bool:
    """Whether the terminal Response's item equals the streamed ``output_item.done`` item.

    Two differences are allowed because the API produces them (the SDK's own tool runner
    allows the same): reasoning ``encrypted_content`` may be re-encrypted between the
    events (both non-empty strings), and a ``function_call`` may gain its optional ``id``.
    """
    if done == final:
        return True
    kind = done.get("type")
    if kind != final.get("type"):
        return False
    if kind == "reasoning":
        before, after = done.get("encrypted_content"), final.get("encrypted_content")
        if type(before) is str and before and type(after) is str and after:
            return {**done, "encrypted_content": after} == final
    elif kind == "function_call" and done.get("id") is None and type(final.get("id")) is str:
        return {**done, "id": final["id"]} == final
    return False


def check_text_size(chars: int, limits: Limits) -> None:
    """Streamed text (or code) of one part (or item) stays within ``max_text_chars``."""
    if chars > limits.max_text_chars:
        raise LimitExceededError(
            "streamed text is too long",
            limit="max_text_chars",
            bound=limits.max_text_chars,
            observed=chars,
        )
