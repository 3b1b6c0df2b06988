"""OpenAI Responses in the mock: the create body's spec overlay and its 400 shape,
``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .._reqspec import Key, Overlay, Problem, Tag
from .._request_valid import quoted, show_number, validator, value_kind

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "openai_request_valid"
_OPENAI_ROOT = "ResponseCreateParams"
OVERLAY: Final = Overlay(
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
)


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


def render(problem: Problem) -> dict[str, Any]:
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
        supported = quoted(problem.allowed, "and")
        message = f"Invalid value: '{problem.value}'. Supported values are: {supported}."
        code = "invalid_value"
    elif kind in ("below", "above"):
        number = "integer" if problem.expected[:1] == ("int",) else "decimal"
        where, sign = ("below minimum", ">=") if kind == "below" else ("above maximum", "<=")
        message = (
            f"Invalid '{param}': {number} {where} value. Expected a value {sign} "
            f"{show_number(problem.bound)}, but got {problem.value} instead."
        )
        code = f"{number}_{kind}_{'min' if kind == 'below' else 'max'}_value"
    else:
        expected = [_A.get(k, k) for k in problem.expected if k != "null"] or ["null"]
        wanted = expected[0] if len(expected) == 1 else "one of " + " or ".join(expected)
        got = _A.get(value_kind(problem.value), "a value")
        message = f"Invalid type for '{param}': expected {wanted}, but got {got} instead."
        code = "invalid_type"
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return {"error": error}


VALIDATE: Final = validator("openai_responses", OVERLAY, render)
