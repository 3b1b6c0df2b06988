"""The per-delta accumulators of the open content block: the parser's hot path.

Each ``_d_*`` method does a type check, a bound check and an append (or a replace, for a
signature); the fragments are joined once at ``content_block_stop``. A mixin of
:class:`~._accumulator.Accumulator`, which owns the attributes declared here.
"""

from __future__ import annotations

from typing import Any

from .._errors import LimitExceededError, SchemaError
from .._limits import Limits

__all__ = ["DeltaAccumulators"]


class DeltaAccumulators:
    """``content_block_delta`` handlers by delta type (see the module docstring)."""

    # The open block and its fragments live here; Accumulator resets them per block.
    __slots__ = ("_open_block", "_part_size", "_parts")

    _limits: Limits
    _open_block: dict[str, Any]
    _part_size: int
    _parts: list[str]

    def _copy(self, value: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - Accumulator defines it

    def _d_json(self, delta: dict[str, Any]) -> None:
        fragment = delta.get("partial_json")
        if type(fragment) is not str:
            raise SchemaError("input_json_delta.partial_json is not a string")
        size = self._part_size + (
            len(fragment) if fragment.isascii() else len(fragment.encode("utf-8", "surrogatepass"))
        )
        limits = self._limits
        if size > limits.max_argument_bytes:
            raise LimitExceededError(
                "tool input is larger than max_argument_bytes",
                limit="max_argument_bytes",
                bound=limits.max_argument_bytes,
                observed=size,
            )
        parts = self._parts
        if len(parts) >= limits.max_fragments_per_call:
            raise LimitExceededError(
                "tool input has too many fragments",
                limit="max_fragments_per_call",
                bound=limits.max_fragments_per_call,
                observed=len(parts) + 1,
            )
        self._part_size = size
        parts.append(fragment)

    def _append_text(self, delta: dict[str, Any], field: str) -> None:
        text = delta.get(field)
        if type(text) is not str:
            raise SchemaError(f"{delta.get('type')}.{field} is not a string")
        size = self._part_size + len(text)
        if size > self._limits.max_text_chars:
            raise LimitExceededError(
                f"{field} is longer than max_text_chars",
                limit="max_text_chars",
                bound=self._limits.max_text_chars,
                observed=size,
            )
        self._part_size = size
        self._parts.append(text)

    def _d_text(self, delta: dict[str, Any]) -> None:
        self._append_text(delta, "text")

    def _d_thinking(self, delta: dict[str, Any]) -> None:
        self._append_text(delta, "thinking")

    def _d_signature(self, delta: dict[str, Any]) -> None:
        signature = delta.get("signature")
        if type(signature) is not str:
            raise SchemaError("signature_delta.signature is not a string")
        self._open_block["signature"] = signature  # replaces, per the SDK and docs

    def _d_citation(self, delta: dict[str, Any]) -> None:
        citation = delta.get("citation")
        if type(citation) is not dict:
            raise SchemaError("citations_delta.citation is not an object")
        citation = self._copy(citation)  # rare; keeps feed_event callers' dicts out of the turn
        citations = self._open_block.get("citations")
        if citations is None:
            self._open_block["citations"] = [citation]
        else:
            citations.append(citation)
