"""Tool results and their exact binding to a turn's calls.

A :class:`ToolResult` is only what the model will see: the call it answers, the output
and whether it is an error. Host-side data (timings, exceptions, ledger ids) stays out.

:func:`bind_results` enforces invariant 5 of the design: every call gets exactly one
result. Missing, extra, duplicate and unknown results all raise :class:`BindingError`,
and the results iterable is consumed no further than one item past the expected count,
so an endless generator fails fast instead of hanging.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from ._digest import canonical_bytes
from ._errors import BindingError, UsageError

__all__ = ["ToolResult", "bind_results"]


@dataclasses.dataclass(frozen=True, slots=True)
class ToolResult:
    """The model-visible result of one tool call.

    ``call_id`` is the provider's call key (OpenAI ``call_id``, Anthropic ``tool_use_id``,
    Gemini ``call_id``). ``output`` is a ``str`` or a JSON value (``dict``/``list``); each
    continuation builder renders it in its protocol's own shape. ``is_error`` marks a
    failed execution; builders send it in the protocol's error field, never disguised as
    success text. Raises :class:`UsageError` on construction if a field has a bad type.
    """

    call_id: str
    output: Any
    is_error: bool = False

    def __post_init__(self) -> None:
        if type(self.call_id) is not str or not self.call_id:
            raise UsageError("ToolResult.call_id must be a non-empty str")
        if type(self.is_error) is not bool:
            raise UsageError("ToolResult.is_error must be a bool")
        if type(self.output) is not str:
            if not isinstance(self.output, dict | list):
                raise UsageError("ToolResult.output must be a str, dict or list")
            canonical_bytes(self.output)  # refuses non-JSON values (UsageError)


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
