"""Gemini Interactions: do the ``input`` steps answer the calls they must answer?

First the hosted tool declarations in ``tools`` (``gemini_hosted_tool_declaration``, 400;
see :mod:`._hosted`), then the previous id:
``gemini_previous_interaction_found`` (404), ``..._stored`` and
``..._active`` (400). Then the steps.

The calls a request may answer are those of the chain its ``previous_interaction_id``
names (that interaction and the ones it continued) and the ``function_call`` steps
replayed earlier in ``input``. The calls it must answer are the pending calls of the
previous interaction (unless it was cancelled) and every replayed ``function_call``
(later in ``input``). In order: ``gemini_result_is_step``, ``gemini_result_has_call``, then
``gemini_call_has_result``.

``gemini_result_is_step`` refuses a ``function_result`` nested in a ``user_input`` step's
``content``: both SDK generations type that content as text, image, audio, document or
video only (``UserInputStepParam.content: List[ContentParam]``), and a result is a step.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .._kit import Reply
from ._errors import gemini_error, not_found
from ._hosted import check_declarations

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["check"]

_PROTOCOL = "gemini_interactions"


def _previous_problem(
    store: SessionStore, body: dict[str, Any], on: Collection[str]
) -> Reply | None:
    """The ``gemini_previous_interaction_*`` checks of ``previous_interaction_id``."""
    previous = body.get("previous_interaction_id")
    if previous is None:
        return None
    found = store.get(_PROTOCOL, previous)
    if found is None or found.deleted:
        if "gemini_previous_interaction_found" in on:
            return not_found(previous)
        return None
    if not found.stored and "gemini_previous_interaction_stored" in on:
        return gemini_error(
            400,
            f"previous_interaction_id {previous!r} names an interaction created with "
            "store=false; only stored interactions can be continued by id.",
        )
    if found.cancelled and "gemini_previous_interaction_active" in on:
        return gemini_error(
            400,
            f"previous_interaction_id {previous!r} names a cancelled interaction; it cannot "
            "be continued.",
            "failed_precondition",
        )
    return None


def _steps(body: dict[str, Any]) -> list[Any]:
    value = body.get("input")
    return value if isinstance(value, list) else []


def _kind(step: Any) -> Any:
    return step.get("type") if isinstance(step, dict) else None


def nested_results(steps: list[Any]) -> list[str]:
    """Where ``function_result`` content sits in ``user_input`` steps: ``input[n].content[k]``."""
    found = []
    for n, step in enumerate(steps):
        content = step.get("content") if _kind(step) == "user_input" else None
        for k, part in enumerate(content if isinstance(content, list) else ()):
            if _kind(part) == "function_result":
                found.append(f"input[{n}].content[{k}]")
    return found


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The first problem the enabled checks find, as Google's error; ``None`` if none."""
    declared = check_declarations(body) if "gemini_hosted_tool_declaration" in on else None
    if declared is not None:
        return gemini_error(400, declared)
    problem = _previous_problem(store, body, on)
    if problem is not None:
        return problem
    steps = _steps(body)
    nested = nested_results(steps)
    if nested and "gemini_result_is_step" in on:
        return gemini_error(
            400,
            f"{nested[0]}: a function_result is not user_input content; in Interactions v1 "
            "user_input content is text, image, audio, document or video. Send the result as "
            'a step of its own in input: {"type": "function_result", "call_id", "result"}.',
        )
    previous_id = body.get("previous_interaction_id")
    previous = store.get(_PROTOCOL, previous_id)
    known: set[Any] = set()
    pending: list[tuple[str, str]] = []
    if previous is not None:
        for record in store.chain(previous):
            known.update(call_id for call_id, _ in record.calls)
        if not previous.cancelled:
            pending = list(previous.calls)
    if "gemini_result_has_call" in on:
        seen = set(known)
        for position, step in enumerate(steps):
            if _kind(step) == "function_call":
                seen.add(step.get("id"))
            elif _kind(step) == "function_result" and step.get("call_id") not in seen:
                return gemini_error(
                    400,
                    f"input[{position}]: function_result call_id {step.get('call_id')!r} does "
                    "not match any function_call of the previous interaction or earlier in input.",
                )
    if "gemini_call_has_result" in on:
        last_result: dict[Any, int] = {}
        for position, step in enumerate(steps):
            if _kind(step) == "function_result":
                last_result[step.get("call_id")] = position
        for call_id, name in pending:
            if call_id not in last_result:
                return gemini_error(
                    400,
                    f"function_call {call_id!r} ({name}) of interaction {previous_id!r} has no "
                    "function_result in input; every pending call must be answered."
                    + (
                        f" (The function_result at {nested[0]} is user_input content, not a "
                        "step: v1 does not admit it there.)"
                        if nested
                        else ""
                    ),
                )
        for position, step in enumerate(steps):
            if _kind(step) == "function_call" and last_result.get(step.get("id"), -1) < position:
                return gemini_error(
                    400,
                    f"input[{position}]: function_call {step.get('id')!r} ({step.get('name')}) "
                    "has no function_result after it in input.",
                )
    return None
