"""The continuation builder: (turn, results, explicit config) -> the next request.

Pure: returns a new JSON-ready dict and never mutates its inputs (caller data is copied).
generateContent is stateless, so the request is a full replay
(``contracts/gemini-generate-content.md`` §7): the caller's prior ``contents``; the model
turn as one ``model`` Content holding ``Turn.parts`` (every part in arrival order, each
signed part exactly as received — the SDK itself concatenates the parts of several
responses into one Content when it merges continuation hops); then one ``user`` Content
with one ``functionResponse`` per call, in call order. Nothing is inherited: tools, tool
config, system instruction, generation config and safety settings are re-sent from the
caller's explicit arguments (each must be passed; ``None`` omits it).

Errors, the rule of every room's builders: an argument of the wrong type or shape is a
:class:`~callgate.UsageError` (``turn`` not a :class:`Turn`; ``results`` not an iterable of
:class:`~callgate.ToolResult`; malformed tool declarations, one name declared twice
included; a Content or part of the wrong shape, a thought signature in the history that is
not base64 included; caller data that is not JSON; a control of the wrong type). A
precondition of the conversation is a :class:`~callgate.ContinuationError` (mutated turn, a
turn that released no calls, history that does not start and end with the user or leaves a
call unanswered, an undeclared function). Results that do not match the calls exactly are
:class:`~callgate.BindingError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._errors import CallgateError, ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_argument
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs, refuse_request_total
from ._assembly import decode_signature
from ._events import CALL_PART, PROVIDER, STOP
from ._media import API, INLINE_MAX, INLINE_RULE, render_response
from ._turn import Turn, turn_digest

__all__ = ["build_continuation", "same_signature"]

_ROLES = ("user", "model")
_DECLARATION_KEYS = ("functionDeclarations", "function_declarations")


def same_signature(a: Any, b: Any) -> bool:
    """Whether two ``thoughtSignature`` strings carry the same bytes (standard or URL-safe
    alphabet, padded or not: the SDK re-encodes what it received). False if either is not
    valid base64."""
    try:
        return decode_signature(a) == decode_signature(b)
    except CallgateError:
        return False


def _check_turn(value: Any) -> Turn:
    turn = check_parsed_turn(value, Turn, "gemini_generate_content", turn_digest, baseline=True)
    if turn.finish_reason != STOP or not turn.calls:
        raise ContinuationError(
            f"only a STOP turn with released function calls can be continued "
            f"(finishReason {turn.finish_reason!r}, {len(turn.calls)} call(s))"
        )
    for call in turn.calls:
        part = turn.parts[call.index] if 0 <= call.index < len(turn.parts) else None
        if part is not call.part or part.get(CALL_PART, {}).get("name") != call.name:
            raise ContinuationError(f"call {call.call_id!r} is not bound to its turn's parts")
    return turn


def _history(history: Any) -> list[dict[str, Any]]:
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise UsageError("history must be a list of Content objects")
    contents: list[dict[str, Any]] = json_copy(list(history), what="history")
    if not contents:
        raise ContinuationError("history must hold at least the user's request")
    waiting: list[tuple[str | None, str]] = []  # (id, name) of the last model turn's calls
    for position, content in enumerate(contents):
        if type(content) is not dict or type(content.get("parts")) is not list:
            raise UsageError(f"history[{position}] must be a Content with a 'parts' list")
        role = content.get("role", "user")
        if role not in _ROLES:
            raise ContinuationError(f"history[{position}] has role {role!r}, not user or model")
        if role == "model" and position == 0:
            raise ContinuationError("history must start with a user Content")
        calls, answers = _scan_parts(content["parts"], position)
        if role == "model":
            waiting.extend(calls)
            continue
        if waiting and not _answers_match(waiting, answers):
            raise ContinuationError(
                f"history[{position}] does not answer the model's call(s) "
                f"{[name for _, name in waiting]} one functionResponse each, in order"
            )
        if not waiting and answers:
            raise ContinuationError(f"history[{position}] answers no earlier functionCall")
        waiting = []
    if waiting:
        raise ContinuationError("the history ends with unanswered function calls")
    if contents[-1].get("role", "user") != "user":
        raise ContinuationError("the history must end with the user Content this turn answered")
    return contents


def _answers_match(
    calls: list[tuple[str | None, str]], answers: list[tuple[str | None, str]]
) -> bool:
    """One answer per call, in order, by name; ids must agree where both are present (the
    SDK's own function calling never sends ``functionResponse.id``)."""
    if len(calls) != len(answers):
        return False
    for (call_id, name), (answer_id, answer_name) in zip(calls, answers, strict=True):
        if name != answer_name or (call_id and answer_id and call_id != answer_id):
            return False
    return True


def _scan_parts(
    parts: list[Any], position: int
) -> tuple[list[tuple[str | None, str]], list[tuple[str | None, str]]]:
    calls: list[tuple[str | None, str]] = []
    answers: list[tuple[str | None, str]] = []
    for part in parts:
        if type(part) is not dict:
            raise UsageError(f"history[{position}] holds a part that is not an object")
        for key in ("thoughtSignature", "thought_signature"):
            if key in part:
                try:
                    decode_signature(part[key])
                except CallgateError:
                    raise UsageError(
                        f"history[{position}] holds a thought signature that is not base64"
                    ) from None
        for key, into in (("functionCall", calls), ("function_call", calls)):
            value = part.get(key)
            if type(value) is dict:
                into.append((value.get("id"), value.get("name")))  # type: ignore[arg-type]
        for key in ("functionResponse", "function_response"):
            value = part.get(key)
            if type(value) is dict:
                answers.append((value.get("id"), value.get("name")))  # type: ignore[arg-type]
    return calls, answers


def _declared(tools: Any) -> tuple[list[Any], set[str]]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise UsageError("tools must be a list of Tool objects")
    copied: list[Any] = json_copy(list(tools), what="tools")
    names: set[str] = set()
    for tool in copied:
        if type(tool) is not dict:
            raise UsageError("every tool must be a Tool object")
        for key in _DECLARATION_KEYS:
            decls = tool.get(key)
            if decls is None:
                continue
            if type(decls) is not list:
                raise UsageError(f"Tool.{key} must be a list")
            for decl in decls:
                name = decl.get("name") if type(decl) is dict else None
                if type(name) is not str or not name:
                    raise UsageError("a function declaration needs a non-empty 'name'")
                if name in names:
                    raise UsageError(f"function {name!r} is declared twice")
                names.add(name)
    return copied, names


def _function_responses(
    turn: Turn,
    results: Iterable[ToolResult],
    model: str,
    parts_allowed: bool | None,
    limits: Limits,
) -> dict[str, Any]:
    bound = bind_argument([call.call_id for call in turn.calls], results)
    checked_outputs(bound, api=API, provider=PROVIDER, limits=limits, measure="raw")
    refuse_request_total(
        bound, api=API, provider=PROVIDER, bound=INLINE_MAX, measure="base64", rule=INLINE_RULE
    )
    parts = []
    for call, result in zip(turn.calls, bound, strict=True):
        media: list[dict[str, Any]] = []
        if type(result.output) is tuple:
            response, media = render_response(result, model, parts_allowed)
        else:
            output = json_copy(result.output, what="result output")
            # Always wrapped, as the API documents ("output" / "error" keys): a bare dict
            # with an "error" key would otherwise read as a failure.
            response = {"error": output} if result.is_error else {"output": output}
        answer: dict[str, Any] = {"name": call.name, "response": response}
        if media:
            answer["parts"] = media
        if call.provider_id is not None:
            answer = {"id": call.provider_id, **answer}
        parts.append({"functionResponse": answer})
    return {"role": "user", "parts": parts}


def _optional_dict(value: Any, what: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is not dict:
        raise UsageError(f"{what} must be a dict or None")
    copied: dict[str, Any] = json_copy(value, what=what)
    return copied


def _optional_list(value: Any, what: str) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise UsageError(f"{what} must be a list or None")
    copied: list[Any] = json_copy(list(value), what=what)
    return copied


def build_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    history: Sequence[dict[str, Any]],
    model: str,
    tools: Sequence[dict[str, Any]],
    tool_config: dict[str, Any] | None,
    system_instruction: str | dict[str, Any] | None,
    generation_config: dict[str, Any] | None,
    safety_settings: Sequence[dict[str, Any]] | None,
    cached_content: str | None = None,
    function_response_parts: bool | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next ``generateContent`` request after ``turn``'s calls ran.

    Returns ``{"model": "models/<model>", "body": {...}}``: the resource the request goes
    to (``POST {base}/{version}/{model}:generateContent``) and the JSON body. ``history`` is
    the caller's prior ``contents`` ending with the user Content the turn answered;
    ``system_instruction`` is a text or a Content. A success result is sent as
    ``{"output": ...}``, an error result as ``{"error": ...}``; ``functionResponse.id`` is
    sent only for calls that had a provider id (a local id is callgate's). Every function
    name called in the history or the turn must be declared in ``tools``. Raises as the
    module docstring says.

    A result whose output is a tuple of parts sends its texts as ``{"output": [...]}`` and
    its media as ``functionResponse.parts`` (see ``_media``), only to a Gemini 3 or later
    model unless ``function_response_parts`` says otherwise (``True``: the caller knows the
    model takes them; ``False``: refuse media); a refused part, an Internal or audit value
    in an output is a :class:`~callgate.ContinuationError`, a media bound of ``limits`` a
    :class:`~callgate.LimitExceededError`.
    """
    turn = _check_turn(turn)
    if type(model) is not str or not model:
        raise UsageError("model must be a non-empty str")
    contents = _history(history)
    copied_tools, declared = _declared(tools)
    called = [name for content in contents for _, name in _scan_parts(content["parts"], 0)[0]]
    called += [call.name for call in turn.calls]
    missing = sorted({name for name in called if name not in declared})
    if missing:
        raise ContinuationError(f"function(s) {missing} were called but are not declared in tools")
    model_content = {"role": "model", "parts": json_copy(list(turn.parts), what="turn parts")}
    if function_response_parts is not None and type(function_response_parts) is not bool:
        raise UsageError("function_response_parts must be a bool or None")
    responses = _function_responses(turn, results, model, function_response_parts, limits)
    contents += [model_content, responses]
    body: dict[str, Any] = {"contents": contents, "tools": copied_tools}
    if type(system_instruction) is str:
        system: Any = {"role": "user", "parts": [{"text": system_instruction}]}
    else:
        system = _optional_dict(system_instruction, "system_instruction")
    if cached_content is not None and (type(cached_content) is not str or not cached_content):
        raise UsageError("cached_content must be a non-empty str or None")
    for key, value in (
        ("toolConfig", _optional_dict(tool_config, "tool_config")),
        ("systemInstruction", system),
        ("generationConfig", _optional_dict(generation_config, "generation_config")),
        ("safetySettings", _optional_list(safety_settings, "safety_settings")),
        ("cachedContent", cached_content),
    ):
        if value is not None:
            body[key] = value
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return {"model": name, "body": body}
