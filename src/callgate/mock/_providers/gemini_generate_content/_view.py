"""Gemini generateContent in the mock:
the request view (what an ``expect`` block can check in a body).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import FunctionResult, RequestView, last_text, list_of
from . import _tools as hosted_tools


def _response(value: Any) -> tuple[Any, bool]:
    """A ``functionResponse.response`` as (output, is_error): the value under its one key
    ``output``/``result`` (``error``: an error result), else the whole object."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key in ("output", "result", "error"):
            return inner, key == "error"
    return value, False


def _part(part: Any, camel: str, snake: str) -> Any:
    if not isinstance(part, dict):
        return None
    return part.get(camel, part.get(snake))


def view(body: Mapping[str, Any]) -> RequestView:
    contents = [c for c in list_of(body.get("contents")) if isinstance(c, dict)]
    groups: list[list[str]] = []
    results = []
    last = contents[-1] if contents else {}
    for content in contents:
        if content.get("role", "user") != "user":
            continue
        parts = [_part(part, "text", "text") for part in list_of(content.get("parts"))]
        groups.append([text for text in parts if isinstance(text, str)])
    found = [text for group in groups for text in group]
    for position, part in enumerate(list_of(last.get("parts"))):
        answer = _part(part, "functionResponse", "function_response")
        if isinstance(answer, dict):
            output, is_error = _response(answer.get("response"))
            call_id = answer.get("id")
            # An answer without id (the SDK never sends one) is named by its function.
            key = call_id if isinstance(call_id, str) else f"(no id) #{position}"
            media = answer.get("parts")
            results.append(FunctionResult(key, answer.get("name"), output, is_error, media))
    system = _part(body, "systemInstruction", "system_instruction")
    instructions = None
    if isinstance(system, dict):
        texts = [_part(p, "text", "text") for p in list_of(system.get("parts"))]
        instructions = "".join(t for t in texts if isinstance(t, str))
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_declared(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(found),
        instructions=instructions,
        last_user_text=last_text(groups),
    )


def _declared(tools: Any) -> tuple[str, ...]:
    """The declared function names, then the hosted tools (``googleSearch``, ...) the
    request turns on, so ``expect.tools`` can name either."""
    names, hosted = [], []
    for tool in list_of(tools):
        declarations = _part(tool, "functionDeclarations", "function_declarations")
        for decl in list_of(declarations):
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                names.append(decl["name"])
        # An empty object ({"googleSearch": {}}) turns a hosted tool on; a Tool holding
        # only its function declarations turns none on.
        if isinstance(tool, dict) and len(tool) > (declarations is not None):
            hosted += [k for k, spelled in hosted_tools.SPELLINGS if not spelled.isdisjoint(tool)]
    return tuple(names + [key for key in hosted_tools.HOSTED if key in hosted])
