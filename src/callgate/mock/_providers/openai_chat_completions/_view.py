"""OpenAI Chat Completions in the mock: the request view (what an ``expect`` block checks).

The history is replayed in full on every request (the API keeps nothing), so the open
round's results are the ``role: "tool"`` messages after the last assistant message; a
tool message's name is the one its ``tool_call_id`` had in an assistant ``tool_calls``
entry. ``is_error`` is always false: the wire has no error flag for a tool result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import FunctionResult, RequestView, last_text, list_of, texts


def _tool_names(tools: Any) -> tuple[str, ...]:
    """``tools[].function.name`` (and a custom tool's ``custom.name``)."""
    names: list[str] = []
    for tool in list_of(tools):
        if not isinstance(tool, dict):
            continue
        inner = tool.get("function", tool.get("custom"))
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            names.append(inner["name"])
    return tuple(names)


def _output(content: Any) -> Any:
    """A tool message's content: the string, or its text parts joined."""
    return "".join(texts(content)) if isinstance(content, list) else content


def view(body: Mapping[str, Any]) -> RequestView:
    names: dict[str, str] = {}  # tool_call_id -> function name, from assistant messages
    results: list[FunctionResult] = []
    found: list[str] = []
    groups: list[list[str]] = []
    instructions: str | None = None
    for message in list_of(body.get("messages")):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            results = []  # a model's answer closes the rounds whose results came before it
            for call in list_of(message.get("tool_calls")):
                function = call.get("function") if isinstance(call, dict) else None
                if (
                    isinstance(function, dict)
                    and isinstance(call.get("id"), str)
                    and isinstance(function.get("name"), str)
                ):
                    names[call["id"]] = function["name"]
        elif role == "tool":
            call_id = message.get("tool_call_id")
            call_id = call_id if isinstance(call_id, str) else None
            name = names.get(call_id) if call_id is not None else None
            results.append(FunctionResult(call_id, name, _output(message.get("content")), False))
        elif role == "user":
            groups.append(texts(message.get("content")))
            found.extend(groups[-1])
        elif role in ("system", "developer") and instructions is None:
            instructions = "\n".join(texts(message.get("content")))
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(found),
        instructions=instructions,
        last_user_text=last_text(groups),
    )
