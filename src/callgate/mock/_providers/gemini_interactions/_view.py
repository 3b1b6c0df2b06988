"""Gemini Interactions in the mock:
the request view (what an ``expect`` block can check in a body).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import FunctionResult, RequestView, last_text, list_of, texts, tool_names
from ._hosted import hosted_types


def view(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    found: list[str] = []
    # User texts per user turn: a user_input step is one; a bare content list is one.
    groups: list[list[str]] = []
    bare: list[str] = []
    results = []
    nested = 0
    if isinstance(inp, str):
        found.append(inp)
        groups.append([inp])
    elif isinstance(inp, dict):
        found.extend(texts([inp]))
        groups.append(texts([inp]))
    for step in list_of(inp):
        if not isinstance(step, dict):
            continue
        kind = step.get("type")
        if kind == "function_result":
            results.append(
                FunctionResult(
                    step.get("call_id"), step.get("name"), step.get("result"),
                    step.get("is_error") is True,
                )
            )  # fmt: skip
        elif kind == "user_input":
            groups.append(texts(step.get("content")))
            found.extend(groups[-1])
            nested += sum(
                isinstance(p, dict) and p.get("type") == "function_result"
                for p in list_of(step.get("content"))
            )
        elif kind == "model_output":
            results = []  # a model's answer closed the rounds whose results came before it
        elif kind == "text" and isinstance(step.get("text"), str):
            found.append(step["text"])
            bare.append(step["text"])
    if bare:
        groups.append(bare)
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")) + hosted_types(body.get("tools")),
        results=tuple(results),
        previous_id=body.get("previous_interaction_id"),
        user_text="\n".join(found),
        instructions=body.get("system_instruction"),
        nested_results=nested,
        last_user_text=last_text(groups),
    )
