"""Tool results and their exact binding to a turn's calls.

A :class:`ToolResult` has two projections. What the model will see: the call it answers,
the output (a ``str``, a JSON value, or a tuple of :class:`~callgate.TextPart` /
:class:`~callgate.MediaPart`) and whether it is an error. And ``audit``: any JSON value the
ledger keeps for the host (internal ids, raw payloads, personal data for audit), which no
builder ever renders and which is not part of a request digest.

:func:`bind_results` enforces invariant 5 of the design: every call gets exactly one
result. Missing, extra, duplicate and unknown results all raise :class:`BindingError`,
and the results iterable is consumed no further than one item past the expected count,
so an endless generator fails fast instead of hanging.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

from ._digest import canonical_bytes
from ._errors import BindingError, UsageError
from ._media import Internal, MediaPart, TextPart

__all__ = ["ToolResult", "bind_argument", "bind_results", "contains_internal"]

_PART_TYPES = (TextPart, MediaPart, Internal)


def contains_internal(value: Any) -> bool:
    """Whether an :class:`Internal` marker sits anywhere in ``value`` (walked without
    recursion through dicts, lists, tuples and parts)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is Internal:
            return True
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list or type(item) is tuple:
            stack.extend(item)
    return False


def _without_internal(value: Any) -> Any:
    """``value`` with every :class:`Internal` replaced by ``None`` (to validate the rest)."""
    if type(value) is Internal:
        return None
    if type(value) is dict:
        return {key: _without_internal(member) for key, member in value.items()}
    if type(value) is list or type(value) is tuple:
        return [_without_internal(member) for member in value]
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of one tool call: what the model sees, and what only the host keeps.

    ``call_id`` is the provider's call key (OpenAI ``call_id``, Anthropic ``tool_use_id``,
    Gemini ``call_id``). ``output`` is a ``str``, a JSON value (``dict``/``list``), or a
    non-empty ``tuple`` of parts (:class:`~callgate.TextPart`, :class:`~callgate.MediaPart`);
    each continuation builder renders it in its protocol's own shape, or refuses media the
    provider cannot take. ``is_error`` marks a failed execution; builders send it in the
    protocol's error field, never disguised as success text.

    ``audit`` (keyword-only) is any JSON value for the host alone: the ledger stores it,
    no builder renders it, and a builder that finds it inside the model-visible output
    refuses (:class:`~callgate.ContinuationError`). An :class:`~callgate.Internal` marker
    anywhere in ``output`` is accepted here and refused by every builder the same way.
    Raises :class:`UsageError` on construction if a field has a bad type.
    """

    call_id: str
    output: Any
    is_error: bool = False
    audit: Any = dataclasses.field(default=None, kw_only=True, hash=False)

    def __post_init__(self) -> None:
        if type(self.call_id) is not str or not self.call_id:
            raise UsageError("ToolResult.call_id must be a non-empty str")
        if type(self.is_error) is not bool:
            raise UsageError("ToolResult.is_error must be a bool")
        output = self.output
        if type(output) is tuple:
            if not output:
                raise UsageError("ToolResult.output is an empty tuple of parts")
            for position, part in enumerate(output):
                if type(part) not in _PART_TYPES:
                    raise UsageError(
                        f"ToolResult.output part #{position} is a {type(part).__name__}, "
                        "not a TextPart or MediaPart"
                    )
        elif type(output) is not str and type(output) is not Internal:
            if not isinstance(output, dict | list):
                raise UsageError("ToolResult.output must be a str, dict, list or a tuple of parts")
            # refuses non-JSON values (UsageError); Internal markers are checked by builders
            canonical_bytes(_without_internal(output) if contains_internal(output) else output)
        if self.audit is not None:
            if contains_internal(self.audit):
                raise UsageError("ToolResult.audit is host-only already; it cannot hold Internal")
            canonical_bytes(self.audit)  # the ledger stores it as JSON

    @property
    def parts(self) -> tuple[TextPart | MediaPart | Internal, ...]:
        """``output`` as parts: a tuple output as given; a ``str`` as one
        :class:`~callgate.TextPart`; a JSON value as one ``TextPart`` of its canonical JSON
        text. An output holding an :class:`~callgate.Internal` marker (outside a parts
        tuple) comes back as one ``Internal`` part, never as text."""
        output = self.output
        if type(output) is tuple:
            return output
        if type(output) is str:
            return (TextPart(output),)
        if contains_internal(output):
            return (output if type(output) is Internal else Internal(output),)
        return (TextPart(canonical_bytes(output).decode("utf-8")),)

    @property
    def has_media(self) -> bool:
        """Whether any part is a :class:`~callgate.MediaPart`."""
        return type(self.output) is tuple and any(type(p) is MediaPart for p in self.output)

    @property
    def has_internal(self) -> bool:
        """Whether an :class:`~callgate.Internal` marker sits anywhere in ``output``."""
        return contains_internal(self.output)


def bind_results(call_ids: Sequence[str], results: Iterable[ToolResult]) -> tuple[ToolResult, ...]:
    """Match ``results`` to ``call_ids`` exactly; return them in ``call_ids`` order.

    Raises :class:`BindingError` if a result is not a :class:`ToolResult`, names a call
    that is not in ``call_ids``, answers a call twice, if a call has no result, or if
    there are more results than calls. Raises :class:`UsageError` if ``call_ids`` holds
    duplicates. Consumes at most ``len(call_ids) + 1`` items of ``results``.
    """
    expected = list(call_ids)
    wanted = set(expected)
    if len(wanted) != len(expected):
        raise UsageError("call_ids contains duplicates")
    by_id: dict[str, ToolResult] = {}
    for position, result in enumerate(islice(results, len(expected) + 1)):
        if position == len(expected):
            raise BindingError(f"more results than the {len(expected)} call(s) of the turn")
        if not isinstance(result, ToolResult):
            raise BindingError(f"result #{position} is a {type(result).__name__}, not a ToolResult")
        if result.call_id not in wanted:
            raise BindingError(f"result for unknown call_id {result.call_id!r}")
        if result.call_id in by_id:
            raise BindingError(f"duplicate result for call_id {result.call_id!r}")
        by_id[result.call_id] = result
    missing = [call_id for call_id in expected if call_id not in by_id]
    if missing:
        raise BindingError(f"no result for call_id(s) {', '.join(map(repr, missing))}")
    return tuple(by_id[call_id] for call_id in expected)


def bind_argument(call_ids: Sequence[str], results: Any) -> tuple[ToolResult, ...]:
    """:func:`bind_results` for a builder's ``results`` argument, whose shape is checked
    first: :class:`UsageError` if it is not an iterable of :class:`ToolResult` (a str,
    bytes or mapping is not one). Consumes at most ``len(call_ids) + 1`` items."""
    if isinstance(results, str | bytes | Mapping) or not isinstance(results, Iterable):
        raise UsageError(f"results must be an iterable of ToolResult, not {type(results).__name__}")
    # One more than the calls is enough for bind_results to report an extra result.
    given = list(islice(results, len(call_ids) + 1))
    for position, result in enumerate(given):
        if not isinstance(result, ToolResult):
            raise UsageError(f"result #{position} is a {type(result).__name__}, not a ToolResult")
    return bind_results(call_ids, given)
