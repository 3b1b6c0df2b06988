"""Anthropic Messages in the mock:
the request view (what an ``expect`` block can check in a body).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import FunctionResult, RequestView, last_text, list_of, texts, tool_names


def view(body: Mapping[str, Any]) -> RequestView:
    messages = [m for m in list_of(body.get("messages")) if isinstance(m, dict)]
    groups: list[list[str]] = []
    results = []
    names: dict[str, str] = {}  # tool_use id -> name, from the assistant turns replayed
    for message in messages:
        if message.get("role") == "user":
            groups.append(texts(message.get("content")))
        elif message.get("role") == "assistant":
            for block in list_of(message.get("content")):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call_id, name = block.get("id"), block.get("name")
                    if isinstance(call_id, str) and isinstance(name, str):
                        names[call_id] = name
    found = [text for group in groups for text in group]
    last = messages[-1] if messages else {}
    if last.get("role") == "user":
        for block in list_of(last.get("content")):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                results.append(
                    FunctionResult(
                        call_id, names.get(call_id) if isinstance(call_id, str) else None,
                        block.get("content"), block.get("is_error") is True,
                    )
                )  # fmt: skip
    system = body.get("system")
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(found),
        instructions="\n".join(texts(system)) if system is not None else None,
        last_user_text=last_text(groups),
    )
