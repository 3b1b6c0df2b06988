"""The non-streaming path: one Response body (``POST /v1/responses`` without ``stream``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._digest import canonical_bytes
from .._errors import (
    CallgateError,
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    UsageError,
)
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ._events import BASELINE_EVENTS
from ._items import check_item, release_calls
from ._turn import ProviderErrorInfo, Turn, make_turn

__all__ = ["parse_response"]

_STRAY = (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError)


def parse_response(
    obj: Mapping[str, Any],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Gate a non-streaming Response body and return its turn.

    ``obj`` is validated as strict JSON and copied (later changes to it do not reach the
    turn). Every output item passes the same checks as a streamed one. Raises
    :class:`~callgate.ProviderError` for status ``failed``, ``incomplete`` or
    ``cancelled``, :class:`~callgate.SequenceError` for a Response that is not terminal
    (``queued``/``in_progress``), :class:`~callgate.UnsupportedProviderState` /
    :class:`~callgate.SchemaError` / :class:`~callgate.JSONError` for items and arguments
    as the stream parser does; the error's ``turn`` holds the parsed items with no calls.
    Raises :class:`~callgate.UsageError` if ``obj`` is not a mapping or a bad argument.
    """
    if not isinstance(limits, Limits):
        raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
    if type(baseline) is not str or baseline not in BASELINE_EVENTS:
        raise UsageError(f"unknown baseline {baseline!r}; expected one of the REVISIONS")
    if not isinstance(obj, Mapping):
        raise UsageError(f"parse_response() takes a mapping, not {type(obj).__name__}")
    state: dict[str, Any] = {"items": (), "response": None, "error": None}
    try:
        try:
            data = canonical_bytes(dict(obj))
        except UsageError as exc:
            raise JSONError(f"response is not a JSON value: {exc.message}") from None
        return _gate(loads_strict(data, limits=limits), limits, baseline, state)
    except CallgateError as exc:
        raise _attach(exc, state, baseline) from None
    except _STRAY as exc:
        err = SchemaError(f"malformed response ({type(exc).__name__}: {str(exc)[:200]})")
        raise _attach(err, state, baseline) from exc


def _gate(response: Any, limits: Limits, baseline: str, state: dict[str, Any]) -> Turn:
    if type(response) is not dict:
        raise SchemaError("response body is not a JSON object")
    state["response"] = response
    rid, status, output = response.get("id"), response.get("status"), response.get("output")
    if type(rid) is not str:
        raise SchemaError("response lacks a string 'id'")
    if type(status) is not str:
        raise SchemaError("response lacks a string 'status'")
    if type(output) is not list:
        raise SchemaError("response lacks an 'output' list")
    if len(output) > limits.max_items_per_turn:
        raise LimitExceededError(
            "too many output items",
            limit="max_items_per_turn",
            bound=limits.max_items_per_turn,
            observed=len(output),
        )
    for index, item in enumerate(output):
        if type(item) is not dict:
            raise SchemaError(f"output item {index} is not an object")
        check_item(item, f"output item {index}")
    items = tuple(output)
    state["items"] = items
    if status in ("failed", "incomplete", "cancelled"):
        info = _info(response, status)
        state["error"] = info
        raise ProviderError(
            f"the response ended with status {status!r}",
            error_type=info.type,
            error_code=info.code,
            provider_message=info.message,
        )
    if status != "completed":
        raise SequenceError(f"response status {status!r} is not terminal")
    n_calls = sum(1 for item in items if item["type"] == "function_call")
    if n_calls > limits.max_calls_per_turn:
        raise LimitExceededError(
            "too many function calls",
            limit="max_calls_per_turn",
            bound=limits.max_calls_per_turn,
            observed=n_calls,
        )
    calls = release_calls(items, limits)
    return make_turn(
        response_id=rid,
        status=status,
        items=items,
        calls=calls,
        response=response,
        error=None,
        baseline=baseline,
    )


def _info(response: dict[str, Any], status: str) -> ProviderErrorInfo:
    if status == "incomplete":
        raw = response.get("incomplete_details")
        raw = raw if type(raw) is dict else {}
        reason = raw.get("reason")
        return ProviderErrorInfo(
            "response.incomplete",
            "incomplete",
            reason if type(reason) is str else None,
            "the response is incomplete",
            None,
            raw,
        )
    raw = response.get("error")
    raw = raw if type(raw) is dict else {}
    code, message = raw.get("code"), raw.get("message")
    return ProviderErrorInfo(
        f"response.{status}",
        status,
        code if type(code) is str else None,
        message if type(message) is str else None,
        None,
        raw,
    )


def _attach(exc: CallgateError, state: dict[str, Any], baseline: str) -> CallgateError:
    if exc.provider is None:
        exc.provider = "openai"
    if exc.turn is None:
        response = state["response"]
        try:
            exc.turn = make_turn(
                response_id=response.get("id") if type(response) is dict else None,
                status=response.get("status") if type(response) is dict else None,
                items=state["items"],
                calls=(),
                response=response,
                error=state["error"],
                baseline=baseline,
            )
        except CallgateError:
            exc.turn = None
    return exc
