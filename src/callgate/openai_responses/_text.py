"""Text, part and code handlers: fragments per part, joined once at their ``.done``.

A mixin of :class:`~._handlers.Handlers` (which provides ``_item_for`` and the limits).
"""

from __future__ import annotations

from typing import Any

from .._errors import LimitExceededError, SchemaError, SequenceError
from .._limits import Limits
from ._events import EventSpec
from ._state import PART_KINDS, OpenItem, Part

__all__ = ["TextHandlers", "check_parts"]


class TextHandlers:
    """Handlers for content/summary parts, their text deltas and code deltas."""

    __slots__ = ()
    _limits: Limits

    def _item_for(self, obj: dict[str, Any], spec: EventSpec) -> OpenItem:
        raise NotImplementedError  # provided by Handlers

    def _on_code_delta(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if st.done_text is not None:
            raise SequenceError("code delta after the code was done")
        delta: str = obj["delta"]
        st.frag_bytes += len(delta)
        _check_text_size(st.frag_bytes, self._limits)
        st.frags.append(delta)

    def _on_code_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if st.done_text is not None:
            raise SequenceError("code done twice")
        if obj["code"] != "".join(st.frags):
            raise SequenceError("code_interpreter_call_code.done differs from the deltas")
        st.done_text = obj["code"]

    def _part_for(self, obj: dict[str, Any], spec: EventSpec) -> Part:
        st = self._item_for(obj, spec)
        key = (spec.index_field, obj[spec.index_field])
        part = st.parts.get(key)
        if part is None or part.closed:
            state = "closed" if part is not None else "not added"
            raise SequenceError(f"{spec.type} for {key[0]} {key[1]}, which is {state}")
        if spec.part and part.kind != spec.part:
            raise SequenceError(f"{spec.type} addresses a {part.kind!r} part")
        return part

    def _on_part_added(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        key = (spec.index_field, obj[spec.index_field])
        kind = obj["part"].get("type")
        if type(kind) is not str:  # checked first: the kinds are a set of str
            raise SchemaError(f"{spec.type} adds a part without a string 'type'")
        if kind not in PART_KINDS.get((st.type, spec.index_field), ()):
            raise SequenceError(f"{spec.type} adds a {kind!r} part to a {st.type!r} item")
        if key in st.parts:
            raise SequenceError(f"{spec.type}: {key[0]} {key[1]} was added twice")
        st.parts[key] = Part(kind)

    def _on_part_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        part = self._part_for(obj, spec)
        if obj["part"].get("type") != part.kind:
            raise SequenceError(f"{spec.type} changed the part type")
        if part.text is None:
            raise SequenceError(f"{spec.type} before the part's text was done")
        field = "refusal" if part.kind == "refusal" else "text"
        if obj["part"].get(field) != part.text:
            raise SequenceError(f"{spec.type} text differs from the streamed text")
        part.closed = True

    def _on_text_delta(self, obj: dict[str, Any], spec: EventSpec) -> None:
        part = self._part_for(obj, spec)
        if part.text is not None:
            raise SequenceError(f"{spec.type} after the text was done")
        delta: str = obj["delta"]
        part.chars += len(delta)
        _check_text_size(part.chars, self._limits)
        part.frags.append(delta)

    def _on_text_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        part = self._part_for(obj, spec)
        if part.text is not None:
            raise SequenceError(f"{spec.type} twice")
        text = part.joined()
        if obj[spec.text_field] != text:
            raise SequenceError(f"{spec.type} differs from the deltas")
        part.text = text
        part.frags = []

    def _on_annotation(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._part_for(obj, spec)
        if type(obj.get("annotation")) not in (dict, type(None)):
            raise SchemaError("output_text.annotation.added 'annotation' is not an object")


def _check_text_size(chars: int, limits: Limits) -> None:
    if chars > limits.max_text_chars:
        raise LimitExceededError(
            "streamed text is too long",
            limit="max_text_chars",
            bound=limits.max_text_chars,
            observed=chars,
        )


def check_parts(st: OpenItem, item: dict[str, Any], where: str) -> None:
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
