"""Continuation builders: (turn, results, explicit config) -> the next create request body.

Both builders are pure: they return a new JSON-ready dict and never mutate their inputs
(caller data is deep-copied). Nothing is inherited implicitly: ``previous_interaction_id``
carries the conversation but none of the tools, system instruction, generation config or
response format (``contracts/gemini.md`` §5), so each is re-sent from the caller's
explicit arguments, and ``store`` is always explicit because Interactions default to
storing, with a retention that is a privacy decision.

The error rule of every room's builders: an argument of the wrong type or shape is a
:class:`~callgate.UsageError` (``turn`` not a :class:`Turn`; ``tools`` not a list of
well-formed Gemini declarations, OpenAI-only fields such as ``strict`` included; a
``response_format`` in OpenAI's shape; a control of the wrong type; caller data that is not
JSON; ``prior_input_steps`` not a list of objects). A precondition of the conversation is a
:class:`~callgate.ContinuationError`: the turn's digest no longer matches its content or
its calls are not its own ``function_call`` steps; it did not end in ``requires_action``
with calls; the prior Interaction is not stored; the snapshot's origin and the history
disagree; a step cannot be replayed; a function name observed in the request's steps is
not declared in ``tools``. Results bind to the calls exactly, or
:class:`~callgate.BindingError`.

A result whose output is a tuple of parts is sent as a ``function_result.result`` list of
subcontent (``_media``: text and image under 2026-07-21; document, audio and video added
under 2026-11); a part the baseline cannot take, an Internal or audit value in an output
is a :class:`~callgate.ContinuationError`, a media bound of ``limits`` a
:class:`~callgate.LimitExceededError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._errors import CallgateError, ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_results
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs
from ._assembly import check_step
from ._events import CLIENT_STEP, PROVIDER, baseline_steps
from ._hosted import Pairing
from ._media import API, render_result
from ._turn import ORIGINS, Turn, turn_digest

__all__ = ["build_stateful_continuation", "build_stateless_continuation"]

_FUNCTION_KEYS = frozenset(
    {"type", "name", "description", "parameters", "short_description", "defer_loading"}
)
_FOREIGN_FORMATS = frozenset({"json_schema", "json_object"})  # OpenAI's spellings


def _check_turn(value: Any) -> Turn:
    turn = check_parsed_turn(value, Turn, "gemini_interactions", turn_digest, baseline=True)
    if turn.origin not in ORIGINS:
        raise ContinuationError(f"the turn has an unknown origin {turn.origin!r}")
    if turn.status != "requires_action" or not turn.calls:
        raise ContinuationError(
            f"only a requires_action turn with function calls can be continued "
            f"(status {turn.status!r}, {len(turn.calls)} call(s))"
        )
    for call in turn.calls:
        step = call.step
        if (
            not any(step is own for own in turn.steps)
            or step.get("type") != CLIENT_STEP
            or step.get("id") != call.call_id
            or step.get("name") != call.name
            or step.get("arguments") != call.arguments
        ):
            raise ContinuationError(f"call {call.call_id!r} is not bound to its turn's steps")
    return turn


def _check_tools(tools: Any) -> tuple[list[Any], set[str]]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise UsageError("tools must be a list of tool declarations")
    copied = json_copy(list(tools), what="tools")
    names: set[str] = set()
    for tool in copied:
        if type(tool) is not dict or type(tool.get("type")) is not str:
            raise UsageError("every tool must be an object with a string 'type'")
        if tool["type"] != "function":
            continue
        if "strict" in tool:
            raise UsageError(
                "a Gemini function declaration has no 'strict' field (that is OpenAI's)"
            )
        extra = sorted(set(tool) - _FUNCTION_KEYS)
        if extra:
            raise UsageError(f"function declaration has unknown field(s) {extra}")
        name = tool.get("name")
        if type(name) is not str or not name:
            raise UsageError("a function declaration needs a non-empty 'name'")
        if "parameters" in tool and type(tool["parameters"]) is not dict:
            raise UsageError(f"function {name!r}: 'parameters' must be a JSON Schema object")
        if name in names:
            raise UsageError(f"function {name!r} is declared twice")
        names.add(name)
    return copied, names


def _check_response_format(response_format: Any) -> Any:
    copied = json_copy(response_format, what="response_format")
    entries = copied if type(copied) is list else [copied]
    for entry in entries:
        if type(entry) is not dict or type(entry.get("type")) is not str:
            raise UsageError("response_format entries must be objects with a 'type'")
        if entry["type"] in _FOREIGN_FORMATS or "json_schema" in entry:
            raise UsageError(
                "a JSON answer is {'type': 'text', 'mime_type': 'application/json', "
                "'schema': ...}, not OpenAI's json_schema"
            )
        if "schema" in entry and type(entry["schema"]) is not dict:
            raise UsageError("response_format 'schema' must be a JSON Schema object")
    return copied


def _request(
    model: Any,
    tools: list[Any],
    system_instruction: Any,
    generation_config: Any,
    response_format: Any,
) -> dict[str, Any]:
    if type(model) is not str or not model:
        raise UsageError("model must be a non-empty str")
    request: dict[str, Any] = {"model": model}
    if system_instruction is not None:
        if type(system_instruction) is not str:
            raise UsageError("system_instruction must be a str (Interactions take plain text)")
        request["system_instruction"] = system_instruction
    request["tools"] = tools
    if generation_config is not None:
        if type(generation_config) is not dict:
            raise UsageError("generation_config must be a dict")
        request["generation_config"] = json_copy(generation_config, what="generation_config")
    if response_format is not None:
        request["response_format"] = _check_response_format(response_format)
    return request


def _result_steps(
    turn: Turn, results: Iterable[ToolResult], limits: Limits
) -> list[dict[str, Any]]:
    bound = bind_results([call.call_id for call in turn.calls], results)
    checked_outputs(bound, api=API, provider=PROVIDER, limits=limits, measure="raw")
    steps: list[dict[str, Any]] = []
    for call, result in zip(turn.calls, bound, strict=True):
        step: dict[str, Any] = {
            "type": "function_result",
            "call_id": call.call_id,
            "name": call.name,
            "result": render_result(result, turn.baseline)
            if type(result.output) is tuple
            else json_copy(result.output, what="result output"),
        }
        if result.is_error:
            step["is_error"] = True
        steps.append(step)
    return steps


def _check_declared(steps: Iterable[dict[str, Any]], declared: set[str]) -> None:
    for step in steps:
        if step.get("type") == CLIENT_STEP and step.get("name") not in declared:
            raise ContinuationError(
                f"function {step.get('name')!r} was called but is not declared in tools"
            )


def build_stateful_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    previous_interaction_was_stored: bool,
    store: bool,
    model: str,
    tools: Sequence[dict[str, Any]],
    system_instruction: str | None = None,
    generation_config: dict[str, Any] | None = None,
    response_format: dict[str, Any] | list[dict[str, Any]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next request continuing ``turn`` by ``previous_interaction_id``.

    ``previous_interaction_was_stored`` must be ``True``: the caller's proof that the prior
    Interaction was stored and can be referenced (it is not sent). A turn without an id
    (an unstored Interaction) is a ContinuationError: use the stateless builder. ``store``
    is the new Interaction's own explicit choice. ``input`` holds one ``function_result``
    step per call, in call order. Raises as described in the module docstring; inputs are
    never mutated.
    """
    turn = _check_turn(turn)
    if turn.interaction_id is None:
        raise ContinuationError(
            "the turn has no interaction id (the Interaction was not stored: store=false), "
            "so it cannot be continued by previous_interaction_id; continue it with "
            "build_stateless_continuation"
        )
    if type(previous_interaction_was_stored) is not bool:
        raise UsageError("previous_interaction_was_stored must be an explicit bool")
    if previous_interaction_was_stored is not True:
        raise ContinuationError(
            "previous_interaction_id needs a stored prior Interaction; pass "
            "previous_interaction_was_stored=True only when it was stored"
        )
    if type(store) is not bool:
        raise UsageError("store must be an explicit bool")
    copied_tools, declared = _check_tools(tools)
    _check_declared(turn.steps, declared)
    request = _request(model, copied_tools, system_instruction, generation_config, response_format)
    request["previous_interaction_id"] = turn.interaction_id
    request["store"] = store
    request["input"] = _result_steps(turn, results, limits)
    return request


def _replayable(turn: Turn) -> list[dict[str, Any]]:
    reasons = turn.opaque_reasons
    opaque = {
        position: reasons[n] if len(reasons) == len(turn.opaque) else "reason unknown"
        for n, position in enumerate(turn.opaque)
    }
    for position, step in enumerate(turn.steps):
        kind = step.get("type")
        if position in opaque:
            raise ContinuationError(
                f"step {position} ({kind}) is not provably complete and cannot be replayed: "
                f"{opaque[position]}"
            )
        if kind == "thought" and not (type(step.get("signature")) is str and step["signature"]):
            raise ContinuationError(f"thought step {position} has no signature to replay")
    copied: list[dict[str, Any]] = json_copy(list(turn.steps), what="turn steps")
    return copied


def _check_prior(prior: Any, baseline: str) -> list[dict[str, Any]]:
    if isinstance(prior, str | bytes) or not isinstance(prior, Sequence):
        raise UsageError("prior_input_steps must be a list of steps")
    copied: list[dict[str, Any]] = json_copy(list(prior), what="prior_input_steps")
    if any(type(step) is not dict for step in copied):
        raise UsageError("every prior input step must be an object")
    if not copied:
        raise ContinuationError("prior_input_steps must be a non-empty list of steps")
    known = baseline_steps(baseline)
    for position, step in enumerate(copied):
        try:
            kind = check_step(step, known, baseline)
        except CallgateError as exc:
            raise ContinuationError(f"prior input step {position}: {exc.message}") from None
        if position == 0 and kind != "user_input":
            raise ContinuationError("prior_input_steps must start with user_input")
        if kind == "function_result" and type(step.get("name")) is not str:
            raise ContinuationError(f"prior function_result {position} needs its 'name'")
        if kind == "thought" and not (type(step.get("signature")) is str and step["signature"]):
            raise ContinuationError(f"prior thought step {position} has no signature")
    return copied


def _check_pairing(steps: list[dict[str, Any]]) -> None:
    """Every function_call answered by exactly one later function_result of its name, and
    every hosted result after its own hosted call (once)."""
    waiting: dict[str, str] = {}
    seen: set[str] = set()
    hosted = Pairing()
    for step in steps:
        kind = step.get("type")
        try:
            hosted.see(step, kind)  # type: ignore[arg-type]
        except CallgateError as exc:
            raise ContinuationError(f"history: {exc.message}") from None
        if kind == CLIENT_STEP:
            call_id = step["id"]
            if call_id in seen:
                raise ContinuationError(f"call id {call_id!r} appears twice in the history")
            seen.add(call_id)
            waiting[call_id] = step["name"]
        elif kind == "function_result":
            call_id = step["call_id"]
            name = waiting.pop(call_id, None)
            if name is None:
                raise ContinuationError(f"function_result {call_id!r} answers no earlier call")
            if step.get("name", name) != name:
                raise ContinuationError(f"function_result {call_id!r} names another function")
    if waiting:
        raise ContinuationError(f"call(s) {sorted(waiting)} have no result in the history")


def build_stateless_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    snapshot_source: str,
    prior_input_steps: Sequence[dict[str, Any]] | None = None,
    model: str,
    tools: Sequence[dict[str, Any]],
    system_instruction: str | None = None,
    generation_config: dict[str, Any] | None = None,
    response_format: dict[str, Any] | list[dict[str, Any]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next request replaying the whole conversation as one step array, ``store: false``.

    ``snapshot_source`` must name the turn's origin (``"stream"``, ``"create"`` or
    ``"get"``). A stream or create snapshot holds model steps only and must be supplemented
    with ``prior_input_steps`` (starting with ``user_input``; every earlier call paired with
    exactly one result of the same name); a GET snapshot already holds its history and must
    not be supplemented again. ``input`` = history + the turn's steps + one
    ``function_result`` per call. Only provably complete steps are replayed: an opaque step
    or a thought without its signature is a ContinuationError. Raises as described in the
    module docstring; inputs are never mutated.
    """
    turn = _check_turn(turn)
    if snapshot_source not in ORIGINS:
        raise UsageError(f"snapshot_source must be one of {ORIGINS}, got {snapshot_source!r}")
    if snapshot_source != turn.origin:
        raise ContinuationError(
            f"snapshot_source {snapshot_source!r} does not match the turn's origin {turn.origin!r}"
        )
    if turn.origin == "get":
        if prior_input_steps is not None:
            raise ContinuationError(
                "a GET snapshot already holds its input history; supplementing it again "
                "would replay the history twice"
            )
        history: list[dict[str, Any]] = []
    else:
        if prior_input_steps is None:
            raise ContinuationError(
                f"a {turn.origin} snapshot holds model steps only; pass prior_input_steps"
            )
        history = _check_prior(prior_input_steps, turn.baseline)
    copied_tools, declared = _check_tools(tools)
    steps = history + _replayable(turn) + _result_steps(turn, results, limits)
    _check_pairing(steps)
    _check_declared(steps, declared)
    request = _request(model, copied_tools, system_instruction, generation_config, response_format)
    request["store"] = False
    request["input"] = steps
    return request
