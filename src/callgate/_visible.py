"""The model-visible projection of tool results, checked the same way by every builder.

Before a continuation builder renders results it calls :func:`checked_outputs`, which
refuses (:class:`~callgate.ContinuationError`) a result whose output holds an
:class:`~callgate.Internal` marker or any result's ``audit`` value, and enforces the three
media bounds of :class:`~callgate.Limits` (:class:`~callgate.LimitExceededError`). The
room then renders each part in its native shape and calls :func:`refuse` with the
provider rule for a part it cannot send: never a downgrade to text, never a silent drop.

An audit value counts as found when the output holds an equal value (a non-empty ``dict``
or ``list``, or a ``str`` of 8 characters or more, anywhere in a JSON output or equal to a
text part, URL, file id or filename), or when a string in the output contains the audit
string or a container's canonical JSON text. Numbers, booleans, ``null``, empty containers
and strings under 8 characters carry too little to be told apart from ordinary output and
are not searched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal, NoReturn

from ._digest import canonical_bytes
from ._errors import ContinuationError, LimitExceededError, UsageError
from ._limits import Limits
from ._media import MediaPart, TextPart
from ._results import ToolResult

__all__ = ["Measure", "checked_outputs", "refuse", "refuse_request_total"]

Measure = Literal["raw", "base64"]
_MIN_AUDIT_TEXT = 8


def _leaves(output: Any) -> Iterator[Any]:
    """Every value inside a model-visible output: containers, strings, part fields."""
    stack = [output]
    while stack:
        item = stack.pop()
        yield item
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list or type(item) is tuple:
            stack.extend(item)
        elif type(item) is TextPart:
            yield item.text
        elif type(item) is MediaPart:
            yield from (v for v in (item.url, item.file_id, item.filename) if v is not None)


def _audit_found(audit: Any, output: Any) -> bool:
    needle: str
    if type(audit) is str:
        if len(audit) < _MIN_AUDIT_TEXT:
            return False
        needle = audit
    elif type(audit) in (dict, list) and audit:
        needle = canonical_bytes(audit).decode("utf-8")
    else:
        return False
    for leaf in _leaves(output):
        if type(leaf) is type(audit) and leaf == audit:
            return True
        if type(leaf) is str and needle in leaf:
            return True
    return False


def refuse(
    api: str, provider: str, call_id: str, index: int, part: MediaPart, rule: str
) -> NoReturn:
    """Raise the :class:`~callgate.ContinuationError` for a part ``api`` cannot take,
    naming the result, the part and the rule it breaks (``provider`` is the error tag)."""
    what = part.media_type or part.source
    raise ContinuationError(
        f"result for call {call_id!r}, part #{index} ({part.kind}, {what}) cannot be sent "
        f"to {api}: {rule}",
        provider=provider,
    )


def _media_bytes(part: MediaPart, measure: Measure) -> int:
    size = part.base64_size if measure == "base64" else part.size
    return 0 if size is None else size


def checked_outputs(
    results: Sequence[ToolResult], *, api: str, provider: str, limits: Limits, measure: Measure
) -> None:
    """Refuse what must never reach an ``api`` request and enforce the media bounds.

    ``provider`` is the tag the errors carry; ``measure`` says how ``api`` counts media
    bytes (``"base64"``: the encoded length, Anthropic; ``"raw"``: ``MediaPart.size``). Raises
    :class:`~callgate.ContinuationError` for an :class:`~callgate.Internal` value or an
    audit value in an output, :class:`~callgate.LimitExceededError` past
    ``max_parts_per_result``, ``max_media_part_bytes`` or ``max_media_bytes_per_request``.
    """
    if not isinstance(limits, Limits):
        raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
    audits = [(r.call_id, r.audit) for r in results if r.audit is not None]
    total = 0
    for result in results:
        if result.has_internal:
            raise ContinuationError(
                f"result for call {result.call_id!r} holds an Internal value: host-only data "
                "is never sent to the model (keep it in ToolResult.audit)",
                provider=provider,
            )
        for owner, audit in audits:
            if _audit_found(audit, result.output):
                raise ContinuationError(
                    f"result for call {result.call_id!r} shows the audit value of the result "
                    f"for call {owner!r} to the model: audit data is host-only",
                    provider=provider,
                )
        if type(result.output) is not tuple:
            continue
        count = len(result.output)
        if count > limits.max_parts_per_result:
            raise LimitExceededError(
                f"result for call {result.call_id!r} has too many parts",
                limit="max_parts_per_result",
                bound=limits.max_parts_per_result,
                observed=count,
                provider=provider,
            )
        for index, part in enumerate(result.output):
            if type(part) is not MediaPart:
                continue
            size = _media_bytes(part, measure)
            if size > limits.max_media_part_bytes:
                raise LimitExceededError(
                    f"result for call {result.call_id!r}, part #{index} is too large "
                    f"({measure} bytes, as {api} counts them)",
                    limit="max_media_part_bytes",
                    bound=limits.max_media_part_bytes,
                    observed=size,
                    provider=provider,
                )
            total += size
            if total > limits.max_media_bytes_per_request:
                raise LimitExceededError(
                    f"the results carry too many media bytes for one request ({measure} bytes "
                    f"as {api} counts them)",
                    limit="max_media_bytes_per_request",
                    bound=limits.max_media_bytes_per_request,
                    observed=total,
                    provider=provider,
                )


def refuse_request_total(
    results: Sequence[ToolResult],
    *,
    api: str,
    provider: str,
    bound: int,
    measure: Measure,
    rule: str,
) -> None:
    """Raise :class:`~callgate.ContinuationError` when the inline media of ``results`` alone
    (counted by ``measure``) pass ``bound``, a provider's documented request size: the
    request is then certain to break ``rule``, whatever else it holds."""
    total = 0
    for result in results:
        if type(result.output) is not tuple:
            continue
        for part in result.output:
            if type(part) is MediaPart:
                total += _media_bytes(part, measure)
    if total > bound:
        raise ContinuationError(
            f"the tool results carry {total} {measure} bytes of inline media, more than "
            f"{api} takes in one request: {rule}",
            provider=provider,
        )
