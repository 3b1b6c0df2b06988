"""Non-streaming Interaction bodies (``interactions.create`` / ``interactions.get``) -> Turn.

The two sources differ in where the history boundary is (``contracts/gemini.md`` §4):
``POST /interactions`` returns only the model-generated steps, ``GET /interactions/{id}``
returns the whole timeline with the initial ``user_input`` first. A create body that holds
input steps, or a GET body that does not start with ``user_input``, is refused rather
than guessed at: the stateless builder relies on this boundary to supplement history
exactly once.
"""

from __future__ import annotations

from typing import Any, Literal

from .._digest import canonical_bytes
from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
    at_boundary,
)
from .._feed import wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ._assembly import check_step
from ._events import CLIENT_STEP, INPUT_STEPS, PROVIDER, baseline_steps
from ._hosted import Pairing
from ._turn import FunctionCall, Turn, make_turn, provider_error, release_calls

__all__ = ["parse_interaction", "parse_response"]


_TEXT = (bytes, bytearray, memoryview, str)
_CAUGHT = (CallgateError, *STRAY_ERRORS)


def _decode(obj: Any, limits: Limits) -> dict[str, Any]:
    if isinstance(obj, _TEXT):
        body = loads_strict(obj, limits=limits)
    else:
        try:
            text = canonical_bytes(obj if type(obj) is dict else dict(obj))
        except UsageError as exc:
            raise JSONError(
                f"body is not a JSON value: {exc.message} (pass the SDK object itself, or "
                'its to_dict(mode="json"))'
            ) from None
        body = loads_strict(text, limits=limits)  # a private copy, bounded like wire bytes
    if type(body) is not dict:
        raise SchemaError("an Interaction body must be a JSON object")
    return body


def _refuse_other_bodies(body: dict[str, Any]) -> None:
    """Bodies that are not a v1 Interaction: the API's error object (an Interaction always
    has a ``status``) is the :class:`ProviderError` it reports; a pre-v1 Interaction
    (content under ``outputs``, no ``steps``) is refused as its stream is, since read as v1
    it would be a finished turn with nothing in it."""
    if "status" not in body and type(body.get("error")) is dict:
        raise provider_error(body["error"], "the API answered with an error object")
    if "outputs" in body and "steps" not in body:
        raise UnsupportedProviderState(
            "the body holds 'outputs' and no 'steps': the pre-v1 Interactions shape, which "
            "the v1 gate does not read (its content would be lost)"
        )


class _Partial:
    """What was validated so far, for the partial turn attached to an error."""

    __slots__ = ("id", "status", "steps", "usage", "warnings")

    def __init__(self) -> None:
        self.id: str | None = None
        self.status = ""
        self.steps: list[dict[str, Any]] = []
        self.usage: dict[str, Any] | None = None
        self.warnings: list[str] = []


def _pending_calls(
    steps: list[dict[str, Any]], source: str, limits: Limits
) -> tuple[FunctionCall, ...]:
    """Function calls not answered inside the body, in body order; checks pairing."""
    open_calls: dict[str, FunctionCall] = {}
    answered: set[str] = set()
    for step in steps:
        kind = step["type"]
        if kind == CLIENT_STEP:
            call_id = step["id"]
            if call_id in open_calls or call_id in answered:
                raise SequenceError(f"duplicate function_call id {call_id!r}")
            args = step.get("arguments")
            if type(args) is not dict:
                raise SchemaError("function_call 'arguments' must be a JSON object")
            if len(open_calls) + len(answered) >= limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many function calls in one turn",
                    limit="max_calls_per_turn",
                    bound=limits.max_calls_per_turn,
                    observed=len(open_calls) + len(answered) + 1,
                )
            open_calls[call_id] = FunctionCall(
                call_id=call_id, name=step["name"], arguments=args, step=step
            )
        elif kind == "function_result" and source == "get":
            call_id = step["call_id"]
            call = open_calls.pop(call_id, None)
            if call is None:
                raise SequenceError(
                    f"function_result for {call_id!r} answers no earlier, unanswered "
                    "function_call in this body"
                )
            name = step.get("name")
            if name is not None and name != call.name:
                raise SequenceError(f"function_result name {name!r} is not {call.name!r}")
            answered.add(call_id)
    return tuple(open_calls.values())


def parse_interaction(
    obj: Any,
    *,
    source: Literal["create", "get"],
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse a non-streaming Interaction body into a :class:`Turn` (``origin=source``).

    ``obj`` is the decoded JSON object, a Mapping (copied; the caller's dict is not kept;
    a value in it that is not JSON is a :class:`~callgate.JSONError`), the SDK's
    ``Interaction`` as it is (converted once, ``to_dict(mode="json")``) or its raw
    bytes/str (invalid JSON text is a JSONError); any other type is a
    :class:`~callgate.UsageError`.
    ``source="create"``: the body of ``POST /interactions`` (model steps only; an input
    step in it is a :class:`~callgate.SequenceError`). ``source="get"``: the body
    of ``GET /interactions/{id}`` (history first: the first step must be ``user_input``;
    calls answered by a later ``function_result`` in the body are history, not pending).
    An unstored Interaction (``store: false``) has no ``id`` (absent or ``""``): its turn
    has ``interaction_id`` ``None`` and can be continued only statelessly.

    The terminal gate is the stream's: ``requires_action`` releases the pending calls,
    ``completed`` releases none (a pending call in it is a SequenceError), failed statuses
    raise :class:`~callgate.ProviderError`, anything else
    :class:`~callgate.UnsupportedProviderState`. Other protocol errors: SchemaError,
    JSONError, LimitExceededError. Errors carry ``turn`` (a partial turn, ``calls == ()``).
    A bad ``source``, ``limits`` or ``baseline`` raises :class:`~callgate.UsageError`.
    """
    check_limits_and_baseline(limits, baseline, REVISIONS)
    if source not in ("create", "get"):
        raise UsageError(f"source must be 'create' or 'get', got {source!r}")
    if not isinstance(obj, _TEXT):
        obj = wire_mapping(obj, "parse_response()")
    partial = _Partial()
    try:
        body = _decode(obj, limits)
        _refuse_other_bodies(body)
        interaction_id, status = body.get("id"), body.get("status")
        # Interaction.id is Optional[str] = "" in both SDK generations: an unstored
        # interaction (store: false) has no id, absent or "", and its turn has id None.
        if interaction_id is not None and type(interaction_id) is not str:
            raise SchemaError("interaction 'id' must be a string when present")
        if type(status) is not str:
            raise SchemaError("interaction needs a string 'status'")
        partial.id, partial.status = interaction_id or None, status
        usage = body.get("usage")
        if usage is not None and type(usage) is not dict:  # telemetry: never a refusal
            partial.warnings.append("interaction 'usage' is not an object: ignored")
            usage = None
        partial.usage = usage
        raw_steps = body.get("steps")
        if raw_steps is None:
            raw_steps = []
        if type(raw_steps) is not list:
            raise SchemaError("interaction 'steps' must be a list")
        if len(raw_steps) > limits.max_items_per_turn:
            raise LimitExceededError(
                "too many steps in one turn",
                limit="max_items_per_turn",
                bound=limits.max_items_per_turn,
                observed=len(raw_steps),
            )
        known = baseline_steps(baseline)
        pairing = Pairing(partial.warnings)
        for position, step in enumerate(raw_steps):
            kind = check_step(step, known, baseline, partial.warnings)
            pairing.see(step, kind)
            if source == "create" and kind in INPUT_STEPS:
                raise SequenceError(
                    f"a create body holds a {kind} step: it must hold model steps only"
                )
            if source == "get" and position == 0 and kind != "user_input":
                raise SequenceError("a GET body's history must start with user_input")
            partial.steps.append(step)
        pending = _pending_calls(partial.steps, source, limits)
        calls = release_calls(status, pending, body.get("errors"))
        return _turn(partial, calls, source, baseline)
    except _CAUGHT as exc:
        raise at_boundary(  # noqa: B904 - at_boundary sets the cause it means
            exc, provider=PROVIDER, partial_turn=lambda: _partial_turn(partial, source, baseline)
        )


def _partial_turn(partial: _Partial, source: str, baseline: str) -> Turn | None:
    try:
        return _turn(partial, (), source, baseline)
    except CallgateError:
        return None


def _turn(partial: _Partial, calls: tuple[FunctionCall, ...], source: str, baseline: str) -> Turn:
    try:
        return make_turn(
            interaction_id=partial.id,
            status=partial.status,
            steps=tuple(partial.steps),
            calls=calls,
            usage=partial.usage,
            origin=source,
            baseline=baseline,
            warnings=tuple(partial.warnings),
        )
    except UsageError as exc:
        raise SchemaError(f"turn cannot be canonicalised: {exc.message}") from None


def parse_response(
    obj: Any,
    *,
    source: Literal["create", "get"] = "create",
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """:func:`parse_interaction` under the name every protocol package exposes
    (``source`` defaults to ``"create"``). Raises exactly what it raises."""
    return parse_interaction(obj, source=source, limits=limits, baseline=baseline)
