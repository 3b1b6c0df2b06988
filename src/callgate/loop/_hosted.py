"""Hosted (provider-executed) tools a loop declares beside its own: checked and copied.

``HostLoop(hosted_tools=[...])`` takes each provider's own declaration objects (OpenAI
``{"type": "web_search"}``, Anthropic ``{"type": "web_search_20250305", "name":
"web_search"}``, Interactions ``{"type": "google_search"}``, generateContent
``{"googleSearch": {}}``) and sends them after the function declarations of its
``ToolSpec`` tools, on every request of a run. The provider runs them: their calls never
reach the ledger (the rooms put them in ``turn.hosted_calls``), and a continuation
carries what they produced as the rooms' builders replay it. A declaration of a function
(client) tool is refused here: its calls would reach no registered tool, so it must be a
``ToolSpec``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from .._errors import UsageError

__all__ = ["hosted_declarations"]


def _client_tool(protocol: str, declaration: Mapping[str, Any]) -> bool:
    """Whether ``declaration`` declares a function the host would have to run."""
    if protocol == "gemini_generate_content":
        return "functionDeclarations" in declaration or "function_declarations" in declaration
    kind = declaration.get("type")
    if protocol == "anthropic_messages":
        return kind is None or kind == "custom"  # a server tool always names its version
    return kind == "function" or not isinstance(kind, str)


def hosted_declarations(
    protocol: str, hosted_tools: Iterable[Any] | None, function_names: Iterable[str]
) -> tuple[dict[str, Any], ...]:
    """``hosted_tools`` checked and deep-copied (later changes to them change nothing)."""
    if hosted_tools is None:
        return ()
    if isinstance(hosted_tools, Mapping | str | bytes):
        raise UsageError("hosted_tools must be a list of declaration objects")
    taken = set(function_names)
    out: list[dict[str, Any]] = []
    for n, declaration in enumerate(hosted_tools):
        if not isinstance(declaration, Mapping):
            raise UsageError(f"hosted_tools[{n}] must be a declaration object")
        if _client_tool(protocol, declaration):
            raise UsageError(
                f"hosted_tools[{n}] declares a function tool; give it as a ToolSpec so "
                "its calls reach the ledger"
            )
        name = declaration.get("name")
        if isinstance(name, str) and name in taken:
            raise UsageError(f"hosted_tools[{n}] reuses the tool name {name!r}")
        if isinstance(name, str):
            taken.add(name)
        out.append(copy.deepcopy(dict(declaration)))
    return tuple(out)
