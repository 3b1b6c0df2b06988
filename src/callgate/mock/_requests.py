"""Read what a provider request contains, per protocol, for matching ``expect`` blocks.

Only what scripts can assert is extracted; the rest of the body is journaled as sent. A
field of the wrong shape is reported as a mismatch by the matcher, never as a crash.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["FunctionResult", "RequestView", "view_request"]


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionResult:
    call_id: str | None
    name: str | None
    output: Any
    is_error: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RequestView:
    model: Any
    stream: bool
    tools: tuple[str, ...]
    results: tuple[FunctionResult, ...]
    previous_id: Any
    user_text: str
    instructions: Any
    # Gemini: function_result content nested in user_input steps (not results in v1).
    nested_results: int = 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _texts(content: Any) -> list[str]:
    """Text of a content value: a string, or a list of text blocks."""
    if isinstance(content, str):
        return [content]
    return [
        block["text"]
        for block in _list(content)
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]


def _tool_names(tools: Any) -> tuple[str, ...]:
    return tuple(
        tool["name"]
        for tool in _list(tools)
        if isinstance(tool, dict) and isinstance(tool.get("name"), str)
    )


def _openai(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    texts: list[str] = []
    results = []
    if isinstance(inp, str):
        texts.append(inp)
    for item in _list(inp):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            results.append(FunctionResult(item.get("call_id"), None, item.get("output"), False))
        elif item.get("role") == "user":
            texts.extend(_texts(item.get("content")))
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=body.get("previous_response_id"),
        user_text="\n".join(texts),
        instructions=body.get("instructions"),
    )


def _anthropic(body: Mapping[str, Any]) -> RequestView:
    messages = [m for m in _list(body.get("messages")) if isinstance(m, dict)]
    texts: list[str] = []
    results = []
    for message in messages:
        if message.get("role") != "user":
            continue
        texts.extend(_texts(message.get("content")))
    last = messages[-1] if messages else {}
    if last.get("role") == "user":
        for block in _list(last.get("content")):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(
                    FunctionResult(
                        block.get("tool_use_id"),
                        None,
                        block.get("content"),
                        block.get("is_error") is True,
                    )
                )
    system = body.get("system")
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(texts),
        instructions="\n".join(_texts(system)) if system is not None else None,
    )


def _gemini(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    texts: list[str] = []
    results = []
    nested = 0
    if isinstance(inp, str):
        texts.append(inp)
    elif isinstance(inp, dict):
        texts.extend(_texts([inp]))
    for step in _list(inp):
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
            texts.extend(_texts(step.get("content")))
            nested += sum(
                isinstance(p, dict) and p.get("type") == "function_result"
                for p in _list(step.get("content"))
            )
        elif kind == "text" and isinstance(step.get("text"), str):
            texts.append(step["text"])
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=body.get("previous_interaction_id"),
        user_text="\n".join(texts),
        instructions=body.get("system_instruction"),
        nested_results=nested,
    )


_VIEWS = {
    "openai_responses": _openai,
    "anthropic_messages": _anthropic,
    "gemini_interactions": _gemini,
}


def view_request(protocol: str, body: Mapping[str, Any]) -> RequestView:
    """Project a request body onto what ``expect`` can check."""
    return _VIEWS[protocol](body)
