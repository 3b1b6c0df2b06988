"""Anthropic server tools in the mock: ``respond.hosted``, checked at load and rendered.

``respond.hosted`` is a list of steps, rendered in order after ``respond.text`` and before
``respond.calls`` (the script's client calls). Each step is one of:

- ``{"tool": "web_search", "query", "results": [{"url", "title", "page_age"?, "marker"?}]}``
- ``{"tool": "web_fetch", "url", "document": {"text" | "pdf_base64", "title"?}, "marker"?}``
- ``{"tool": "bash", "command", "stdout"?, "stderr"?, "return_code"?, "files"?: [file_id]}``
- ``{"tool": "text_editor", "command": "view" | "create" | "str_replace", "path", ...}``
  (``view``: ``content``; ``create``: ``file_text``, ``is_file_update``; ``str_replace``:
  ``old_str``, ``new_str``, ``lines``)
- ``{"tool": "python", "code", "stdout"?, "stderr"?, "return_code"?}`` (the legacy
  ``code_execution_20250522`` form)
- ``{"text", "cite": [{"marker", "quote"?}]}``: a text block whose citations point at the
  results above by marker (a web search result gives ``web_search_result_location``; a
  fetched text document gives ``char_location`` with the quote's offsets, computed here)

A tool step may instead carry ``"error": <error_code>`` (an in-band ``*_tool_result_error``,
``max_uses_exceeded`` included), ``"pending": true`` (the call without its result: a mixed
turn whose server call completes in the next response), or ``"result_for": <id>`` (only the
result block, for a call an earlier response left pending); ``"id"`` names the call.
Web search and fetch steps may carry a ``caller`` (``{"type": "direct"}``, or a
``code_execution_20250825`` / ``_20260120`` caller with its ``tool_id``: the call was made by
running code); ``code_execution_20260521`` has no caller variant in either SDK.
Code execution steps make the message report a ``container``; web search/fetch steps count
in ``usage.server_tool_use``. Wire facts: the contract's section 12 (anthropic 2.14.0 and
0.117.0 types, the SDK's streaming fixtures).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ...._digest import canonical_bytes
from .._kit import Ids

__all__ = ["check_respond", "render_hosted"]

# step tool -> (server_tool_use name, result block type, input keys, result keys)
_TOOLS: dict[str, tuple[str, str, tuple[str, ...], frozenset[str]]] = {
    "web_search": ("web_search", "web_search_tool_result", ("query",), frozenset({"results"})),
    "web_fetch": ("web_fetch", "web_fetch_tool_result", ("url",),
                  frozenset({"document", "marker", "retrieved_at"})),
    "bash": ("bash_code_execution", "bash_code_execution_tool_result", ("command",),
             frozenset({"stdout", "stderr", "return_code", "files"})),
    "text_editor": ("text_editor_code_execution", "text_editor_code_execution_tool_result",
                    ("command", "path", "file_text", "old_str", "new_str"),
                    frozenset({"content", "is_file_update", "lines"})),
    "python": ("code_execution", "code_execution_tool_result", ("code",),
               frozenset({"stdout", "stderr", "return_code", "files"})),
}  # fmt: skip
_COMMON = frozenset({"tool", "id", "error", "pending", "result_for", "caller"})
# The callers both SDK generations decode (no code_execution_20260521 variant exists), and
# the steps whose blocks carry one (code execution results have no `caller` field).
_CALLERS = ("code_execution_20250825", "code_execution_20260120")
_CALLED = ("web_search", "web_fetch")
# The in-band error codes both SDK generations accept (web_fetch's content_too_large and the
# bash/text-editor extras are 2.14.0-only or tool-specific, so they are listed per tool).
_BASE_ERRORS = frozenset({"invalid_tool_input", "unavailable", "too_many_requests"})
_ERRORS: dict[str, frozenset[str]] = {
    "web_search": _BASE_ERRORS
    | {"max_uses_exceeded", "query_too_long", "request_too_large"},
    "web_fetch": _BASE_ERRORS
    | {"url_too_long", "url_not_allowed", "url_not_in_prior_context", "url_not_accessible",
       "unsupported_content_type", "max_uses_exceeded"},
    "bash": _BASE_ERRORS | {"execution_time_exceeded", "output_file_too_large"},
    "text_editor": _BASE_ERRORS | {"execution_time_exceeded", "file_not_found"},
    "python": _BASE_ERRORS | {"execution_time_exceeded"},
}  # fmt: skip
_EDITOR_COMMANDS = {"view": ("content",), "create": ("file_text", "is_file_update"),
                    "str_replace": ("old_str", "new_str", "lines")}  # fmt: skip
_EXPIRES = "2099-01-01T00:00:00Z"


# -- load-time checks -------------------------------------------------------------------------


def _strs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_tool(step: Mapping[str, Any], markers: dict[str, str]) -> str | None:
    tool = step["tool"]
    if not isinstance(tool, str) or tool not in _TOOLS:
        return f"hosted tool must be one of {', '.join(_TOOLS)}"
    _, _, inputs, outputs = _TOOLS[tool]
    unknown = set(step) - _COMMON - set(inputs) - outputs
    if unknown:
        return f"a {tool} step takes no {', '.join(sorted(unknown))}"
    if "id" in step and not isinstance(step["id"], str):
        return "a hosted step's id is a string"
    if "result_for" in step and not isinstance(step["result_for"], str):
        return "result_for names an earlier server call id (a string)"
    if "pending" in step and not isinstance(step["pending"], bool):
        return "pending is true or false"
    if "caller" in step:
        caller = step["caller"]
        if tool not in _CALLED:
            return f"only {' and '.join(_CALLED)} steps take a caller"
        direct = caller == {"type": "direct"}
        if not direct and not (
            isinstance(caller, dict) and set(caller) == {"type", "tool_id"}
            and caller["type"] in _CALLERS and isinstance(caller["tool_id"], str)
        ):  # fmt: skip
            return f"caller is {{type: direct}} or {{type: {' | '.join(_CALLERS)}, tool_id}}"
    if "error" in step and (
        not isinstance(step["error"], str) or step["error"] not in _ERRORS[tool]
    ):
        return f"a {tool} error is one of {', '.join(sorted(_ERRORS[tool]))}"
    if any(not isinstance(step.get(k, ""), str) for k in inputs if k not in ("command",)):
        return f"{tool} input fields are strings"
    required = inputs[:2] if tool == "text_editor" else inputs
    if step.get("result_for") is None and any(not isinstance(step.get(k), str) for k in required):
        return f"a {tool} step needs {', '.join(required)}"
    if tool == "text_editor" and step.get("command", "view") not in tuple(_EDITOR_COMMANDS):
        return "a text_editor command is view, create or str_replace"
    if isinstance(step.get("return_code", 0), bool) or not isinstance(
        step.get("return_code", 0), int
    ):
        return "return_code is an int"
    if any(not isinstance(step.get(k, ""), str) for k in ("stdout", "stderr", "content")):
        return "stdout, stderr and content are strings"
    if not _strs(step.get("files", [])) or not _strs(step.get("lines", [])):
        return "files and lines are lists of strings"
    return _check_results(step, markers)


def _check_results(step: Mapping[str, Any], markers: dict[str, str]) -> str | None:
    if step["tool"] == "web_search":
        results = step.get("results", [])
        if not isinstance(results, list):
            return "web_search results are a list"
        for result in results:
            if not isinstance(result, dict) or set(result) - {"url", "title", "page_age", "marker"}:
                return "a web_search result is {url, title, page_age?, marker?}"
            if any(not isinstance(result.get(k, ""), str) for k in ("page_age", "marker")) or not (
                isinstance(result.get("url"), str) and isinstance(result.get("title"), str)
            ):
                return "a web_search result needs url and title strings"
            if "marker" in result:
                markers[result["marker"]] = "web_search"
    if step["tool"] == "web_fetch" and "error" not in step and "result_for" not in step:
        document = step.get("document")
        if not isinstance(document, dict) or set(document) - {"text", "pdf_base64", "title"}:
            return "a web_fetch document is {text | pdf_base64, title?}"
        if ("text" in document) == ("pdf_base64" in document):
            return "a web_fetch document has exactly one of text or pdf_base64"
        if "marker" in step:
            if "text" not in document:
                return "only a text document can be cited by marker"
            markers[step["marker"]] = "web_fetch"
    return None


def _check_text(step: Mapping[str, Any], markers: dict[str, str]) -> str | None:
    if set(step) - {"text", "cite"} or not isinstance(step["text"], str):
        return "a hosted text step is {text, cite?}"
    cites = step.get("cite", [])
    if not isinstance(cites, list):
        return "cite is a list of {marker, quote?}"
    for cite in cites:
        if not isinstance(cite, dict) or set(cite) - {"marker", "quote"}:
            return "cite is a list of {marker, quote?}"
        if not isinstance(cite.get("marker"), str) or cite["marker"] not in markers:
            return f"cite names no result marker given before it: {cite.get('marker')!r}"
        if not isinstance(cite.get("quote", ""), str):
            return "a cite quote is a string"
    return None


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """Why ``respond.hosted`` cannot be rendered, or ``None``."""
    steps = respond.get("hosted")
    if steps is None:
        return None
    if not isinstance(steps, list) or not steps:
        return "hosted is a non-empty list of steps"
    markers: dict[str, str] = {}
    for step in steps:
        if not isinstance(step, dict) or ("tool" in step) == ("text" in step):
            return "a hosted step has exactly one of 'tool' or 'text'"
        problem = _check_tool(step, markers) if "tool" in step else _check_text(step, markers)
        if problem is not None:
            return problem
    return None


# -- rendering --------------------------------------------------------------------------------


class _Render:
    """One turn's hosted blocks, counters, container and cited sources."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.blocks: list[dict[str, Any]] = []
        self.counts = {"web_search_requests": 0, "web_fetch_requests": 0}
        self.container = False
        self.sources: dict[str, dict[str, Any]] = {}  # marker -> citation facts
        self.documents = 0

    def step(self, n: int, step: Mapping[str, Any]) -> None:
        if "text" in step:
            citations = [self._citation(c, step["text"]) for c in step.get("cite", ())]
            self.blocks.append({"type": "text", "text": step["text"], "citations": citations})
            return
        tool = step["tool"]
        name, result_type, inputs, _ = _TOOLS[tool]
        call_id = step.get("result_for") or step.get("id") or self.ids("srvtoolu_", "server", n)
        if "result_for" not in step:
            arguments = {k: step[k] for k in inputs if k in step}
            spec = {"type": "server_tool_use", "id": call_id, "name": name,
                    "input_json": _json(arguments)}  # fmt: skip
            if "caller" in step:
                spec["caller"] = dict(step["caller"])
            self.blocks.append(spec)
        if step.get("pending"):
            return
        if tool in ("bash", "text_editor", "python"):
            self.container = True
        elif step.get("error") != "max_uses_exceeded":
            self.counts[f"{tool}_requests"] += 1
        content = (
            {"type": f"{result_type}_error", "error_code": step["error"]}
            if "error" in step
            else self._content(tool, call_id, n, step)
        )
        block = {"type": result_type, "tool_use_id": call_id, "content": content}
        if "caller" in step:
            block["caller"] = dict(step["caller"])
        self.blocks.append({"type": "whole", "block": block})

    def _content(self, tool: str, call_id: str, n: int, step: Mapping[str, Any]) -> Any:
        if tool == "web_search":
            return [self._search_result(call_id, k, r) for k, r in enumerate(step["results"])]
        if tool == "web_fetch":
            return self._fetched(step)
        if tool == "text_editor":
            return _editor_result(step)
        kind = "bash_code_execution" if tool == "bash" else "code_execution"
        files = [{"type": f"{kind}_output", "file_id": f} for f in step.get("files", ())]
        return {"type": f"{kind}_result", "stdout": step.get("stdout", ""),
                "stderr": step.get("stderr", ""), "return_code": step.get("return_code", 0),
                "content": files}  # fmt: skip

    def _search_result(self, call_id: str, k: int, result: Mapping[str, Any]) -> dict[str, Any]:
        encrypted = _opaque(f"{call_id}/{k}/{result['url']}")
        block = {"type": "web_search_result", "url": result["url"], "title": result["title"],
                 "encrypted_content": encrypted}  # fmt: skip
        if "page_age" in result:
            block["page_age"] = result["page_age"]
        if "marker" in result:
            self.sources[result["marker"]] = {"kind": "web", "url": result["url"],
                                              "title": result["title"],
                                              "index": _opaque(f"index/{encrypted}")}  # fmt: skip
        return block

    def _fetched(self, step: Mapping[str, Any]) -> dict[str, Any]:
        document = step["document"]
        if "text" in document:
            source = {"type": "text", "media_type": "text/plain", "data": document["text"]}
        else:
            source = {"type": "base64", "media_type": "application/pdf",
                      "data": document["pdf_base64"]}  # fmt: skip
        doc: dict[str, Any] = {"type": "document", "source": source}
        if "title" in document:
            doc["title"] = document["title"]
        if "marker" in step:
            doc["citations"] = {"enabled": True}
            self.sources[step["marker"]] = {"kind": "document", "text": document["text"],
                                            "title": document.get("title"),
                                            "index": self.documents}  # fmt: skip
        self.documents += 1
        result = {"type": "web_fetch_result", "url": step["url"], "content": doc}
        if "retrieved_at" in step:
            result["retrieved_at"] = step["retrieved_at"]
        return result

    def _citation(self, cite: Mapping[str, Any], text: str) -> dict[str, Any]:
        source = self.sources[cite["marker"]]
        if source["kind"] == "web":
            return {"type": "web_search_result_location", "url": source["url"],
                    "title": source["title"], "encrypted_index": source["index"],
                    "cited_text": cite.get("quote", text)}  # fmt: skip
        quote = cite.get("quote", source["text"])
        start = source["text"].find(quote)
        start = max(start, 0)
        return {"type": "char_location", "document_index": source["index"],
                "document_title": source["title"], "start_char_index": start,
                "end_char_index": start + len(quote), "cited_text": quote}  # fmt: skip


def _editor_result(step: Mapping[str, Any]) -> dict[str, Any]:
    prefix = "text_editor_code_execution"
    command = step.get("command", "view")
    if command == "view":
        text = step.get("content", "")
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        return {"type": f"{prefix}_view_result", "content": text, "file_type": "text",
                "num_lines": lines, "start_line": 1, "total_lines": lines}  # fmt: skip
    if command == "create":
        return {"type": f"{prefix}_create_result",
                "is_file_update": bool(step.get("is_file_update", False))}  # fmt: skip
    return {"type": f"{prefix}_str_replace_result", "lines": list(step.get("lines", ()))}


def _opaque(seed: str) -> str:
    """A deterministic opaque value, base64 like the provider's encrypted fields."""
    return base64.b64encode(("callgate-mock:" + seed).encode("utf-8")).decode("ascii")


def _json(value: Mapping[str, Any]) -> str:
    return canonical_bytes(dict(value)).decode("utf-8")


def render_hosted(
    respond: Mapping[str, Any], ids: Ids
) -> tuple[list[dict[str, Any]], dict[str, int] | None, dict[str, Any] | None]:
    """``(block specs, usage.server_tool_use or None, container or None)`` of a turn."""
    steps = respond.get("hosted")
    if not steps:
        return [], None, None
    render = _Render(ids)
    for n, step in enumerate(steps):
        render.step(n, step)
    container = {"id": ids("container_", "container"), "expires_at": _EXPIRES} if (
        render.container
    ) else None  # fmt: skip
    return render.blocks, render.counts, container
