"""OpenAI Responses in the mock: the request view (what an ``expect`` block can check in a body)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import FunctionResult, RequestView, last_text, list_of, texts, tool_names


def view(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    if isinstance(inp, str):  # one user message, nothing replayed
        return _view(body, inp, (), inp)
    found: list[str] = []
    groups: list[list[str]] = []
    results = []
    names: dict[str, str] = {}  # call_id -> name, from the function_call items replayed
    for item in list_of(inp):
        if not isinstance(item, dict):
            continue
        call_id = item.get("call_id")
        if item.get("type") == "function_call":
            if isinstance(call_id, str) and isinstance(item.get("name"), str):
                names[call_id] = item["name"]
        elif item.get("type") == "function_call_output":
            name = names.get(call_id) if isinstance(call_id, str) else None
            results.append(FunctionResult(call_id, name, item.get("output"), False))
        elif item.get("role") == "user":
            groups.append(texts(item.get("content")))
            found.extend(groups[-1])
        elif item.get("role") == "assistant":
            results = []  # a model's answer closed the rounds whose results came before it
    return _view(body, "\n".join(found), tuple(results), last_text(groups))


def _view(
    body: Mapping[str, Any], text: str, results: tuple[FunctionResult, ...], last: str
) -> RequestView:
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")),
        results=results,
        previous_id=body.get("previous_response_id"),
        user_text=text,
        instructions=body.get("instructions"),
        last_user_text=last,
    )
