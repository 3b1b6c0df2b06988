"""Request validation of every create request the mock serves, in each provider's shape.

Each protocol's spec is generated from both SDK generations' request param types
(``request_specs/<protocol>.<generation>.json``, by ``tests/mock/request_spec_gen.py``)
and walked by :mod:`callgate.mock._reqspec`; this module adds what the types do not
state (the :class:`Overlay` of each protocol: documented ranges and conditional
requirements, each with its source) and renders a :class:`Problem` as the provider's
own 400. The facts behind the shapes are in ``docs/request-validation.md``.

One switch per protocol turns it off (``{"validation": {"<name>": false}}``):
``openai_request_valid``, ``anthropic_request_valid``, ``gemini_request_valid``
(Interactions) and ``gemini_gc_request_valid`` (generateContent).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Final

from ._kit import Reply
from ._reqspec import KIND_OF, Key, Overlay, Problem, RequestSpec, Tag, compile_spec

__all__ = ["SWITCHES", "validator"]

_GENERATIONS: Final = ("2026-11", "2026-07-21")

SWITCHES: Final = {
    "openai_responses": "openai_request_valid",
    "anthropic_messages": "anthropic_request_valid",
    "gemini_interactions": "gemini_request_valid",
    "gemini_generate_content": "gemini_gc_request_valid",
}

_OPENAI_ROOT = "ResponseCreateParams"
_ANTHROPIC_ROOT = "MessageCreateParams"
_THINKING = "thinking_config_enabled_param.ThinkingConfigEnabledParam"
_MODEL = "interactions.createmodelinteraction.CreateModelInteractionParam"
_LEGACY = ("google_search", "code_execution", "url_context")
_AGENT = "interactions.createagentinteraction.CreateAgentInteractionParam"
_BETA_THINKING = "beta.beta_thinking_config_enabled_param.BetaThinkingConfigEnabledParam"
_OVERLAYS: Final[dict[str, Overlay]] = {
    "openai_responses": Overlay(
        # "Missing required parameter: 'model'." unless a stored prompt names the model
        # (openai/openai-dotnet#947, a maintainer: model "is required in all scenarios
        # other than using a saved prompt").
        required_unless={(_OPENAI_ROOT, "model"): "prompt"},
        ranges={
            # SDK docstrings: "between 0 and 2"; "An integer between 0 and 20".
            (_OPENAI_ROOT, "temperature"): (0, 2),
            (_OPENAI_ROOT, "top_p"): (0, 1),
            (_OPENAI_ROOT, "top_logprobs"): (0, 20),
            # "Invalid 'max_output_tokens': integer below minimum value. Expected a
            # value >= 16, but got 10 instead." (reported from the API, see the docs).
            (_OPENAI_ROOT, "max_output_tokens"): (16, None),
        },
    ),
    "anthropic_messages": Overlay(
        ranges={
            # SDK docstring: "Set to `0` to populate the prompt cache without generating
            # a response" (0 is the lowest value a generation documents).
            (_ANTHROPIC_ROOT, "max_tokens"): (0, None),
            # 0.117.0 docstrings: temperature "Ranges from `0.0` to `1.0`"; top_p and
            # top_k are probabilities and counts (anthropic-sdk-python#893: the API
            # rejects temperature -1 since).
            (_ANTHROPIC_ROOT, "temperature"): (0, 1),
            (_ANTHROPIC_ROOT, "top_p"): (0, 1),
            (_ANTHROPIC_ROOT, "top_k"): (0, None),
            # "Must be ≥1024 and less than `max_tokens`."
            (_THINKING, "budget_tokens"): (1024, None),
            (_BETA_THINKING, "budget_tokens"): (1024, None),
        },
    ),
    "gemini_interactions": Overlay(
        # The legacy {"google_search": {}} / {"code_execution": {}} / {"url_context": {}}
        # tool forms Google's docs show (docs/hosted-tools.md); the SDK types lack them.
        extend={
            (_MODEL, "tools"): {"ref": "legacy.Tool"},
            (_AGENT, "tools"): {"ref": "legacy.Tool"},
        },
        types={
            "legacy.Tool": {"fields": {name: {"map": "any"} for name in _LEGACY}, "required": []}
        },
    ),
    "gemini_generate_content": Overlay(
        # "Please use a valid role: user, model." (the API; the type is a plain string)
        enums={("mldev.Content", "role"): ("user", "model")},
    ),
}
_PROTO: Final = frozenset({"gemini_interactions", "gemini_generate_content"})


@functools.cache
def _spec(protocol: str) -> RequestSpec:
    """The compiled spec of ``protocol`` (loaded on first use: ~0.1-0.5 s)."""
    folder = resources.files(__package__) / "request_specs"
    specs = [
        json.loads((folder / f"{protocol}.{gen}.json").read_text(encoding="utf-8"))
        for gen in _GENERATIONS
    ]
    return compile_spec(specs, _OVERLAYS[protocol], proto=protocol in _PROTO)


def validator(protocol: str) -> Callable[[dict[str, Any]], Reply | None]:
    """The check of ``protocol``'s create body: the provider's 400, or ``None``."""
    render = _RENDER[protocol]

    def validate(body: dict[str, Any]) -> Reply | None:
        problem = _spec(protocol).problem(body)
        return None if problem is None else Reply(400, render(problem))

    return validate


# -- OpenAI: {"error": {"message", "type", "param", "code"}} -------------------------------

_A: Final = {"str": "a string", "int": "an integer", "float": "a decimal", "bool": "a boolean",
             "list": "an array", "dict": "an object", "null": "null"}  # fmt: skip


def _openai_path(path: Sequence[Any]) -> str:
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif isinstance(segment, Tag):
            continue
        else:
            name = segment.name if isinstance(segment, Key) else segment
            out += f".{name}" if out else str(name)
    return out


def _quoted(values: Sequence[Any], last: str, *, oxford: bool = True) -> str:
    """``'a', 'b', and 'c'`` (OpenAI) or ``'a', 'b' or 'c'`` (pydantic, ``oxford=False``)."""
    shown = [f"'{v}'" for v in values]
    if len(shown) <= 2:
        return f" {last} ".join(shown)
    return ", ".join(shown[:-1]) + ("," if oxford else "") + f" {last} " + shown[-1]


def _openai(problem: Problem) -> dict[str, Any]:
    path = problem.path
    param = _openai_path(path)
    kind = problem.kind
    if kind == "missing":
        message, code = f"Missing required parameter: '{param}'.", "missing_required_parameter"
    elif kind == "unknown":
        param = _openai_path([*path, problem.value])
        message, code = f"Unknown parameter: '{param}'.", "unknown_parameter"
    elif kind in ("enum", "tag"):
        if kind == "tag":  # the API names the object, not its discriminator
            param = _openai_path(path[:-1])
        supported = _quoted(problem.allowed, "and")
        message = f"Invalid value: '{problem.value}'. Supported values are: {supported}."
        code = "invalid_value"
    elif kind in ("below", "above"):
        number = "integer" if problem.expected[:1] == ("int",) else "decimal"
        where, sign = ("below minimum", ">=") if kind == "below" else ("above maximum", "<=")
        message = (
            f"Invalid '{param}': {number} {where} value. Expected a value {sign} "
            f"{_number(problem.bound)}, but got {problem.value} instead."
        )
        code = f"{number}_{kind}_{'min' if kind == 'below' else 'max'}_value"
    else:
        expected = [_A.get(k, k) for k in problem.expected if k != "null"] or ["null"]
        wanted = expected[0] if len(expected) == 1 else "one of " + " or ".join(expected)
        got = _A.get(_kind(problem.value), "a value")
        message = f"Invalid type for '{param}': expected {wanted}, but got {got} instead."
        code = "invalid_type"
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return {"error": error}


def _kind(value: Any) -> str:
    return KIND_OF.get(type(value), "any")


def _number(value: float | int | None) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- Anthropic: {"type": "error", "error": {"type": "invalid_request_error", "message"}} ----

_VALID: Final = {"str": "a valid string", "int": "a valid integer", "float": "a valid number",
                 "bool": "a valid boolean", "list": "a valid list",
                 "dict": "a valid dictionary", "null": "None"}  # fmt: skip


def _anthropic_path(path: Sequence[Any]) -> str:
    parts: list[str] = []
    for segment in path:
        if isinstance(segment, Tag):
            if segment.key == "type":  # pydantic names the member of a tagged union
                parts.append(segment.value)
        elif isinstance(segment, Key):
            parts.append(segment.name)
        else:
            parts.append(str(segment))
    return ".".join(parts)


def _anthropic(problem: Problem) -> dict[str, Any]:
    path = problem.path
    kind = problem.kind
    at = _anthropic_path(path)
    if kind == "missing":
        text = "Field required"
    elif kind == "unknown":
        at = _anthropic_path([*path, problem.value])
        text = "Extra inputs are not permitted"
    elif kind == "tag" and path and path[-1] == "type":
        at = _anthropic_path(path[:-1])
        tags = ", ".join(f"'{t}'" for t in problem.allowed)
        text = (
            f"Input tag '{problem.value}' found using 'type' does not match any of the "
            f"expected tags: {tags}"
        )
    elif kind in ("enum", "tag"):
        text = "Input should be " + _quoted(problem.allowed, "or", oxford=False)
    elif kind in ("below", "above"):
        relation = "greater" if kind == "below" else "less"
        text = f"Input should be {relation} than or equal to {_number(problem.bound)}"
    else:
        valid = [_VALID.get(k, k) for k in problem.expected if k != "null"] or ["None"]
        text = "Input should be " + " or ".join(valid)
    message = f"{at}: {text}" if at else text
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


# -- Google: google.rpc.Status with a BadRequest's field violations -------------------------

_PROTO_TYPE: Final = {"str": "TYPE_STRING", "int": "TYPE_INT32", "float": "TYPE_FLOAT",
                      "bool": "TYPE_BOOL", "list": "TYPE_MESSAGE", "dict": "TYPE_MESSAGE",
                      "null": "TYPE_MESSAGE"}  # fmt: skip


def _google_path(path: Sequence[Any]) -> str:
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif isinstance(segment, Key):  # a proto map is a list of entries
            out += f"[{segment.position}].value"
        elif isinstance(segment, Tag):
            continue
        else:
            out += f".{segment}" if out else segment
    return out


def _google(root: str) -> Callable[[Problem], str]:
    def render(problem: Problem) -> str:
        path = problem.path
        field = _google_path(path)
        kind = problem.kind
        if kind == "unknown":
            at = f" at '{field}'" if field else ""
            message = (
                f'Invalid JSON payload received. Unknown name "{problem.value}"{at}: '
                "Cannot find field."
            )
        elif kind == "missing":
            message = f"* {root}.{field}: {path[-1]} is not specified"
        elif kind in ("enum", "tag") and path and path[-1] == "role":
            message = "Please use a valid role: " + ", ".join(map(str, problem.allowed)) + "."
        elif kind in ("below", "above"):
            relation = "at least" if kind == "below" else "at most"
            message = f"* {root}.{field}: must be {relation} {_number(problem.bound)}"
        else:
            wanted = "TYPE_ENUM" if kind in ("enum", "tag") else _PROTO_TYPE[problem.expected[0]]
            shown = json.dumps(problem.value, ensure_ascii=False)
            message = f"Invalid value at '{field}' ({wanted}), {shown}"
        return message

    return render


def _generate_content(problem: Problem) -> dict[str, Any]:
    """``google.rpc.Status`` with a ``BadRequest`` detail naming the field."""
    message = _google("GenerateContentRequest")(problem)
    field = _google_path(problem.path)
    violation = {"field": field, "description": message} if field else {"description": message}
    details = [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [violation]}]  # fmt: skip
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                      "details": details}}  # fmt: skip


def _interactions(problem: Problem) -> dict[str, Any]:
    """The Interactions API's own shape, ``{"error": {"message", "code": "invalid_request"}}``
    (both SDK generations type ``error.code`` as a string; a real 400 reads so)."""
    return {"error": {"message": _google("CreateInteractionRequest")(problem),
                      "code": "invalid_request"}}  # fmt: skip


_RENDER: Final[dict[str, Callable[[Problem], dict[str, Any]]]] = {
    "openai_responses": _openai,
    "anthropic_messages": _anthropic,
    "gemini_interactions": _interactions,
    "gemini_generate_content": _generate_content,
}
