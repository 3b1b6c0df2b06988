"""The parsed turn, its executable calls, its digest and the gate that releases the calls.

:func:`release_calls` is the one gate: the stream parser and :func:`~._body.parse_response`
both release through it, so a streamed turn and a non-streamed body pass the same checks.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._digest import canonical_digest
from .._errors import ProviderError, SchemaError, SequenceError
from .._hosted import Citation, HostedCall
from .._json import loads_arguments
from .._limits import Limits
from ._hosted import check_not_stopped, project

__all__ = [
    "FunctionCall",
    "ProviderErrorInfo",
    "Turn",
    "completion_problem",
    "error_info",
    "incomplete_info",
    "make_turn",
    "provider_error",
    "release_calls",
    "turn_digest",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProviderErrorInfo:
    """What the provider said went wrong: an ``error`` event (flat or nested shape), a
    failed Response's ``error``, an incomplete Response's ``incomplete_details``, or either
    of those on a Response that claims to be completed.

    ``source`` is ``"error_event"``, ``"error_field"`` (a truthy top-level ``error`` object
    on another event), ``"error_body"`` (the API's error object instead of a Response),
    ``"response.failed"``, ``"response.incomplete"``,
    ``"response.cancelled"`` or ``"response.completed"``; ``raw`` the provider's object as
    received.
    """

    source: str
    type: str | None
    code: str | None
    message: str | None
    param: str | None
    raw: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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
      message items (``""`` when none); ``reasoning``: the reasoning items; ``error``: what
      the provider reported, if anything; ``baseline``: the contract revision enforced.
    - ``digest``: :func:`callgate.canonical_digest` of the snapshot (response id, status,
      items, calls). Continuation builders recompute it to detect later mutation.

    ``hosted_calls``/``citations``: the hosted-tool projection (:class:`callgate.HostedCall`,
    :class:`callgate.Citation`), derived from the raw output; never executable.
    ``warnings``: what the parser found inconsistent in telemetry it does not gate on
    (citations, streamed annotations), one short string each; derived, not digested.
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
    hosted_calls: tuple[HostedCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def id(self) -> str | None:
        """The turn's id in every room's name: here ``response_id``."""
        return self.response_id


def _snapshot_digest(
    response_id: str | None,
    status: str | None,
    items: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
) -> str:
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


def turn_digest(turn: Turn) -> str:
    """Recompute the digest of ``turn``'s current snapshot (response id, status, items,
    calls). Raises :class:`~callgate.UsageError` if it holds a non-JSON value."""
    return _snapshot_digest(turn.response_id, turn.status, turn.items, turn.calls)


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
    warnings: tuple[str, ...] = (),
) -> Turn:
    """Freeze a turn and seal it with its digest (values are trusted JSON); ``warnings``
    are the stream's own, the projection's follow."""
    usage = response.get("usage") if response is not None else None
    hosted_calls, citations, found = project(items)
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
        digest=_snapshot_digest(response_id, status, items, calls),
        hosted_calls=hosted_calls,
        citations=citations,
        warnings=warnings + found,
    )


# -- what the provider reported ---------------------------------------------------------


def error_info(source: str, raw: dict[str, Any], event: dict[str, Any] | None) -> ProviderErrorInfo:
    """An error object's ``type``/``code``/``message``/``param``: each kept when a string,
    ``None`` otherwise (the error itself is what refuses the turn; its details are not
    required)."""
    fields = {}
    for key in ("type", "code", "message", "param"):
        value = raw.get(key)
        fields[key] = value if type(value) is str else None
    return ProviderErrorInfo(
        source=source,
        type=fields["type"],
        code=fields["code"],
        message=fields["message"],
        param=fields["param"],
        raw=event if event is not None else raw,
    )


def incomplete_info(source: str, details: dict[str, Any]) -> ProviderErrorInfo:
    """An ``incomplete_details`` object: its ``reason`` becomes the code."""
    reason = details.get("reason")
    return ProviderErrorInfo(
        source=source,
        type="incomplete",
        code=reason if type(reason) is str else None,
        message="the response is incomplete",
        param=None,
        raw=details,
    )


def completion_problem(response: dict[str, Any]) -> ProviderErrorInfo | None:
    """What a Response that claims ``completed`` still reports as wrong: a non-null
    ``error`` or ``incomplete_details`` (each must be an object or null:
    :class:`SchemaError` otherwise). ``None`` when it reports nothing."""
    error, details = response.get("error"), response.get("incomplete_details")
    for key, value in (("error", error), ("incomplete_details", details)):
        if value is not None and type(value) is not dict:
            raise SchemaError(f"completed response field {key!r} has type {type(value).__name__}")
    if error is not None:
        return error_info("response.completed", error, None)
    if details is not None:
        return incomplete_info("response.completed", details)
    return None


def provider_error(info: ProviderErrorInfo, what: str) -> ProviderError:
    """The :class:`ProviderError` for ``info``; ``what`` says where it was reported."""
    return ProviderError(
        f"{what}: {info.message if info.message is not None else 'no details'}",
        error_type=info.type,
        error_code=info.code,
        provider_message=info.message,
    )


# -- the gate ---------------------------------------------------------------------------


def release_calls(
    response: dict[str, Any], items: tuple[dict[str, Any], ...], *, limits: Limits
) -> tuple[FunctionCall, ...]:
    """The gate: the executable calls of a terminal ``response`` whose output is ``items``.

    Only a Response with status ``completed`` and neither ``error`` nor
    ``incomplete_details`` releases anything (:class:`SequenceError` for another status,
    :class:`ProviderError` when it reports a problem). Then every ``function_call`` item
    must be ``completed`` with a fresh ``call_id`` (:class:`SequenceError`) and arguments
    that are a strict JSON object (:class:`JSONError` / :class:`LimitExceededError` /
    :class:`SchemaError`, naming the call). Hosted items are never released; a turn with
    function calls and a hosted item that did not complete releases nothing
    (:class:`SequenceError`). Items passed the shape checks before.
    """
    status = response.get("status")
    if status != "completed":
        raise SequenceError(f"a response with status {status!r} releases no calls")
    problem = completion_problem(response)
    if problem is not None:
        field = "error" if response.get("error") is not None else "incomplete_details"
        raise provider_error(problem, f"the completed response carries a non-null {field!r}")
    calls: list[FunctionCall] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.get("type") != "function_call":
            continue
        call_id, name = item["call_id"], item["name"]
        where = f"function call {name!r} (call_id={call_id!r}, output_index={index})"
        if item.get("status") not in (None, "completed"):
            raise SequenceError(f"{where} has status {item.get('status')!r}")
        if call_id in seen:
            raise SequenceError(f"{where} repeats a call_id")
        seen.add(call_id)
        arguments = loads_arguments(item["arguments"], where, limits=limits)
        caller = item.get("caller")
        calls.append(
            FunctionCall(
                call_id=call_id,
                name=name,
                arguments=arguments,
                item_id=item.get("id"),
                output_index=index,
                item=item,
                caller=caller if type(caller) is dict else None,
            )
        )
    if calls:
        check_not_stopped(items)
    return tuple(calls)
