"""The non-streaming path: one Response body (``POST /v1/responses`` without ``stream``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._digest import canonical_bytes
from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    UsageError,
    at_boundary,
)
from .._feed import wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ._assembly import check_item
from ._events import BASELINE_EVENTS, PROVIDER
from ._hosted import check_declared, declared_tools, request_copy
from ._turn import (
    ProviderErrorInfo,
    Turn,
    completion_problem,
    error_info,
    incomplete_info,
    make_turn,
    provider_error,
    release_calls,
)

__all__ = ["parse_response"]

_CAUGHT: Final = (CallgateError, *STRAY_ERRORS)


def parse_response(
    obj: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    request: Mapping[str, Any] | None = None,
) -> Turn:
    """Gate a non-streaming Response body and return its turn.

    ``request`` (optional) is the request body: a hosted item none of its ``tools`` can
    produce is then a :class:`~callgate.SequenceError`.

    ``obj`` is the body as a mapping or the SDK's ``Response`` object (converted once,
    ``to_dict(mode="json")``; either is validated as strict JSON and copied: later changes
    to it do not reach the turn) or as its JSON text (``bytes`` or ``str``). Every output item
    passes the same checks as a streamed one, and the calls the same gate. Raises
    :class:`~callgate.ProviderError` for status ``failed``, ``incomplete`` or
    ``cancelled``, or a completed Response that carries an ``error`` or
    ``incomplete_details``; :class:`~callgate.SequenceError` for a Response that is not
    terminal (``queued``/``in_progress``); :class:`~callgate.ProviderError` for the API's
    error object (``{"error": {...}}``, no ``status``), with its ``type``, ``code`` and
    ``message``; :class:`~callgate.JSONError` for invalid JSON
    text; :class:`~callgate.UnsupportedProviderState` / :class:`~callgate.SchemaError` /
    :class:`~callgate.JSONError` for items and arguments as the stream parser does; the
    error's ``turn`` holds the parsed items with no calls. Raises
    :class:`~callgate.UsageError` if ``obj`` is of another type or an argument is bad.
    """
    check_limits_and_baseline(limits, baseline, BASELINE_EVENTS)
    declared = declared_tools(request_copy(request))
    if not isinstance(obj, bytes | bytearray | memoryview | str):
        obj = wire_mapping(obj, "parse_response()")
    state: dict[str, Any] = {"items": (), "response": None, "error": None}
    try:
        data: bytes | bytearray | memoryview | str
        if not isinstance(obj, Mapping):
            data = obj
        else:
            try:
                data = canonical_bytes(dict(obj))
            except UsageError as exc:
                raise JSONError(
                    f"response is not a JSON value (pass the SDK Response itself, or its "
                    f'to_dict(mode="json")): {exc.message}'
                ) from None
        return _gate(loads_strict(data, limits=limits), limits, baseline, state, declared)
    except _CAUGHT as exc:
        err = at_boundary(exc, provider=PROVIDER, partial_turn=lambda: _partial(state, baseline))
        raise err from (None if err is exc else exc)


def _gate(
    response: Any,
    limits: Limits,
    baseline: str,
    state: dict[str, Any],
    declared: frozenset[str] | None,
) -> Turn:
    if type(response) is not dict:
        raise SchemaError("response body is not a JSON object")
    state["response"] = response
    if "status" not in response and type(response.get("error")) is dict:
        # The API's error object ({"error": {...}}, a non-2xx body): a Response always has
        # a status, so this is the provider reporting a failure, typed as the stream's
        # error event is.
        state["error"] = info = error_info("error_body", response["error"], None)
        raise provider_error(info, "the API answered with an error object")
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
        where = f"output item {index}"
        check_declared(check_item(item, where), declared, where)
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
    state["error"] = completion_problem(response)  # the gate refuses it, if any
    calls = release_calls(response, items, limits=limits)
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
        return incomplete_info("response.incomplete", raw if type(raw) is dict else {})
    raw = response.get("error")
    raw = raw if type(raw) is dict else {}
    code, message = raw.get("code"), raw.get("message")
    return ProviderErrorInfo(
        source=f"response.{status}",
        type=status,
        code=code if type(code) is str else None,
        message=message if type(message) is str else None,
        param=None,
        raw=raw,
    )


def _partial(state: dict[str, Any], baseline: str) -> Turn | None:
    response = state["response"]
    try:
        return make_turn(
            response_id=response.get("id") if type(response) is dict else None,
            status=response.get("status") if type(response) is dict else None,
            items=state["items"],
            calls=(),
            response=response,
            error=state["error"],
            baseline=baseline,
        )
    except CallgateError:
        return None
