"""The parsed turn, its executable calls and its snapshot digest."""

from __future__ import annotations

import dataclasses
from typing import Any

from .._digest import canonical_digest

__all__ = ["FunctionCall", "ProviderErrorInfo", "Turn", "make_turn", "snapshot_digest"]


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionCall:
    """One released client function call.

    ``call_id`` is the key a result must answer (never the item ``id``, which is
    ``item_id`` here and may be ``None``: it is optional on the wire). ``arguments`` is the
    strict-JSON object; ``item`` the raw ``function_call`` item (the same object as in
    ``Turn.items``); ``caller`` its raw ``caller`` metadata, if any.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    item_id: str | None
    output_index: int
    item: dict[str, Any]
    caller: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderErrorInfo:
    """What the provider said went wrong: an ``error`` event (flat or nested shape), a
    failed Response's ``error``, or an incomplete Response's ``incomplete_details``.

    ``source`` is ``"error_event"``, ``"response.failed"`` or ``"response.incomplete"``;
    ``raw`` the provider's object as received.
    """

    source: str
    type: str | None
    code: str | None
    message: str | None
    param: str | None
    raw: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One model turn as parsed.

    - ``response_id``/``status``: from the last lifecycle event (``None`` if none came).
    - ``items``: raw output items in order. For a completed response they are the terminal
      Response's ``output`` (checked equal to the streamed items); otherwise the items that
      were done when parsing stopped.
    - ``calls``: executable function calls. Non-empty only for a ``response.completed``
      turn with status ``completed`` whose every call passed the gate; ``()`` otherwise.
    - ``response``: the raw terminal Response (or the last lifecycle snapshot, if none).
    - ``usage``: the Response's ``usage``; ``text``: the concatenated ``output_text`` of
      message items; ``reasoning``: the reasoning items; ``error``: what the provider
      reported, if anything; ``baseline``: the contract revision enforced.
    - ``digest``: :func:`callgate.canonical_digest` of the snapshot (response id, status,
      items, calls). Continuation builders recompute it to detect later mutation.
    """

    response_id: str | None
    status: str | None
    items: tuple[dict[str, Any], ...]
    calls: tuple[FunctionCall, ...]
    response: dict[str, Any] | None
    usage: dict[str, Any] | None
    text: str
    reasoning: tuple[dict[str, Any], ...]
    error: ProviderErrorInfo | None
    baseline: str
    digest: str


def snapshot_digest(
    response_id: str | None,
    status: str | None,
    items: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
) -> str:
    """The digest of a turn's canonical snapshot (raises UsageError on non-JSON values)."""
    return canonical_digest(
        {
            "response_id": response_id,
            "status": status,
            "items": items,
            "calls": [
                {
                    "call_id": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments,
                    "item_id": c.item_id,
                    "output_index": c.output_index,
                    "caller": c.caller,
                }
                for c in calls
            ],
        }
    )


def _output_text(items: tuple[dict[str, Any], ...]) -> str:
    pieces = []
    for item in items:
        if item.get("type") != "message":
            continue
        for part in item.get("content") or ():
            if type(part) is dict and part.get("type") == "output_text":
                text = part.get("text")
                if type(text) is str:
                    pieces.append(text)
    return "".join(pieces)


def make_turn(
    *,
    response_id: str | None,
    status: str | None,
    items: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
    response: dict[str, Any] | None,
    error: ProviderErrorInfo | None,
    baseline: str,
) -> Turn:
    usage = response.get("usage") if response is not None else None
    return Turn(
        response_id=response_id,
        status=status,
        items=items,
        calls=calls,
        response=response,
        usage=usage if type(usage) is dict else None,
        text=_output_text(items),
        reasoning=tuple(item for item in items if item.get("type") == "reasoning"),
        error=error,
        baseline=baseline,
        digest=snapshot_digest(response_id, status, items, calls),
    )
