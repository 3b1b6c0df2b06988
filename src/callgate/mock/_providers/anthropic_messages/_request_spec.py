"""Anthropic Messages in the mock: the create body's spec overlay and its 400 shape,
pydantic's messages in ``{"type": "error", "error": {...}}``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .._reqspec import Key, Overlay, Problem, Tag
from .._request_valid import quoted, show_number, validator

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "anthropic_request_valid"
_ANTHROPIC_ROOT = "MessageCreateParams"
_THINKING = "thinking_config_enabled_param.ThinkingConfigEnabledParam"
_BETA_THINKING = "beta.beta_thinking_config_enabled_param.BetaThinkingConfigEnabledParam"
OVERLAY: Final = Overlay(
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
)


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


def render(problem: Problem) -> dict[str, Any]:
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
        text = "Input should be " + quoted(problem.allowed, "or", oxford=False)
    elif kind in ("below", "above"):
        relation = "greater" if kind == "below" else "less"
        text = f"Input should be {relation} than or equal to {show_number(problem.bound)}"
    else:
        valid = [_VALID.get(k, k) for k in problem.expected if k != "null"] or ["None"]
        text = "Input should be " + " or ".join(valid)
    message = f"{at}: {text}" if at else text
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


VALIDATE: Final = validator("anthropic_messages", OVERLAY, render)
