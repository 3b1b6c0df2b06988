"""Gemini Interactions hosted tools in the mock: the ``respond.hosted`` script block, its
rendering as hosted steps with cited text, and the check of the request's hosted tool
declarations (``tools: [{"type": ...}]``).

Script block (validated when the script is loaded; ``check_respond``)::

    "hosted": {
      "tools": [
        {"tool": "google_search", "queries": [str], "suggestions": str?,
         "results": [{"marker": str?, "uri": str, "title": str?}]},
        {"tool": "file_search",
         "chunks": [{"marker": str?, "store": str, "document": str, "text": str}]},
        {"tool": "code_execution", "code": str, "language": "python" | "bash"?,
         "outcome": "ok" | "failed" | "deadline_exceeded", "output": str},
        {"tool": "url_context",
         "results": [{"marker": str?, "url": str, "title": str?,
                      "status": "success" | "error" | "paywall" | "unsafe"}]}
      ],                     # every entry may add "id": str, "signature": str,
                             # "stream_as": "start" | "delta"
      "cite": [{"marker": str, "span": str, "occurrence": int?}]
    }

``expect.tools`` may name hosted tool types (``"google_search"``) beside function names.

Each tool entry becomes a call step and its result step, in order, after the thought and
before the text (``contracts/gemini.md`` §10.2). A ``cite`` entry annotates the
``occurrence``-th (default 1st) occurrence of ``span`` in ``respond.text``: the mock
computes its UTF-8 byte offsets. A cited search or URL result becomes a ``url_citation``
(``url``, ``title``), a cited file chunk a ``file_citation`` (``document_uri`` = the
document, ``source`` = the store). Google searches are counted in
``usage.grounding_tool_count``.

What the Interactions wire cannot carry is refused, never dropped: a search result's
``domain`` or ``text`` (``url_citation`` has ``url`` and ``title`` only), a code outcome
other than the three above. ``failed`` and ``deadline_exceeded`` both render as
``is_error: true`` (the wire has no outcome enum). File-search chunks ride in the
``file_search_result`` delta's ``result`` (the only place the SDK declares for them), and in
the non-streamed step as the same extra field: items ``{file_search_store, title, text}``
(an inference: the SDK declares no item fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kit import Ids

__all__ = ["check_declarations", "check_hosted", "hosted_specs", "hosted_types"]

_TOOL_KEYS = {
    "google_search": {"queries", "results", "suggestions"},
    "file_search": {"chunks"},
    "code_execution": {"code", "language", "outcome", "output"},
    "url_context": {"results"},
}
_COMMON = {"tool", "id", "signature", "stream_as"}
_ITEM_KEYS = {
    "google_search": ({"uri"}, {"marker", "title"}),
    "file_search": ({"store", "document", "text"}, {"marker"}),
    "url_context": ({"url", "status"}, {"marker", "title"}),
}
_REFUSED_ITEM_KEYS = {
    "domain": "an Interactions search result has no domain (url_citation carries url, title)",
    "text": "an Interactions search result has no text (url_citation carries url, title)",
}
_OUTCOMES = ("ok", "failed", "deadline_exceeded")
_URL_STATUSES = ("success", "error", "paywall", "unsafe")
_LANGUAGES = ("python", "bash")


# -- load-time validation ---------------------------------------------------------------------


def _strings(value: Any, where: str) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"{where} must be a list of strings"
    return None


def _item_problem(tool: str, item: Any, where: str) -> str | None:
    required, optional = _ITEM_KEYS[tool]
    if not isinstance(item, dict):
        return f"{where} must be an object"
    for key in sorted(set(item) - required - optional):
        if tool == "google_search" and key in _REFUSED_ITEM_KEYS:
            return f"{where}/{key}: {_REFUSED_ITEM_KEYS[key]}"
        return f"{where}: unknown key {key!r}"
    for key in sorted(required | optional):
        if key in item and not isinstance(item[key], str):
            return f"{where}/{key} must be a string"
    missing = sorted(required - set(item))
    if missing:
        return f"{where} needs {', '.join(missing)}"
    if tool == "url_context" and item["status"] not in _URL_STATUSES:
        return f"{where}/status is one of {', '.join(_URL_STATUSES)}"
    return None


def _tool_problem(entry: Any, where: str) -> str | None:
    if not isinstance(entry, dict) or entry.get("tool") not in _TOOL_KEYS:
        return f"{where} needs a 'tool': one of {', '.join(_TOOL_KEYS)}"
    tool = entry["tool"]
    unknown = sorted(set(entry) - _COMMON - _TOOL_KEYS[tool])
    if unknown:
        return f"{where}: unknown key(s) {', '.join(unknown)} for {tool}"
    for key in ("id", "signature", "code", "output", "suggestions"):
        if key in entry and not isinstance(entry[key], str):
            return f"{where}/{key} must be a string"
    if entry.get("stream_as", "start") not in ("start", "delta"):
        return f"{where}/stream_as is 'start' or 'delta'"
    if tool == "google_search" and "queries" in entry:
        problem = _strings(entry["queries"], f"{where}/queries")
        if problem:
            return problem
    if tool == "code_execution":
        for key in ("code", "outcome", "output"):
            if key not in entry:
                return f"{where} needs {key!r}"
        if entry["outcome"] not in _OUTCOMES:
            return f"{where}/outcome is one of {', '.join(_OUTCOMES)}"
        if entry.get("language", "python") not in _LANGUAGES:
            return f"{where}/language is 'python' or 'bash'"
        return None
    items_key = "chunks" if tool == "file_search" else "results"
    items = entry.get(items_key, [])
    if not isinstance(items, list):
        return f"{where}/{items_key} must be a list"
    for n, item in enumerate(items):
        problem = _item_problem(tool, item, f"{where}/{items_key}/{n}")
        if problem:
            return problem
    return None


def _markers(tools: list[dict[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in tools:
        for item in entry.get("chunks", entry.get("results", [])):
            if "marker" in item:
                found.setdefault(item["marker"], (entry["tool"], item))
    return found


def check_hosted(respond: Mapping[str, Any]) -> str | None:
    """Why ``respond.hosted`` is invalid (a message starting with its location), or None."""
    block = respond.get("hosted")
    if block is None:
        return None
    if not isinstance(block, dict) or set(block) - {"tools", "cite"}:
        return "hosted is an object with 'tools' and 'cite'"
    tools = block.get("tools", [])
    if not isinstance(tools, list):
        return "hosted/tools must be a list"
    for n, entry in enumerate(tools):
        problem = _tool_problem(entry, f"hosted/tools/{n}")
        if problem:
            return problem
    ids = [e["id"] for e in tools if "id" in e]
    if len(ids) != len(set(ids)):
        return "hosted/tools: two tools have the same id"
    markers: dict[str, int] = {}
    for entry in tools:
        for item in entry.get("chunks", entry.get("results", [])):
            if "marker" in item:
                markers[item["marker"]] = markers.get(item["marker"], 0) + 1
    if any(count > 1 for count in markers.values()):
        return "hosted/tools: a marker names two results"
    cites = block.get("cite", [])
    if not isinstance(cites, list):
        return "hosted/cite must be a list"
    for n, cite in enumerate(cites):
        problem = _cite_problem(cite, f"hosted/cite/{n}", markers, respond.get("text"))
        if problem:
            return problem
    return None


def _cite_problem(cite: Any, where: str, markers: Mapping[str, int], text: Any) -> str | None:
    if not isinstance(cite, dict) or set(cite) - {"marker", "span", "occurrence"}:
        return f"{where} is an object with 'marker', 'span' and optional 'occurrence'"
    if cite.get("marker") not in markers:
        return f"{where}/marker names no result or chunk marker"
    span, occurrence = cite.get("span"), cite.get("occurrence", 1)
    if not isinstance(span, str) or not span:
        return f"{where}/span must be a non-empty string"
    if type(occurrence) is not int or occurrence < 1:
        return f"{where}/occurrence must be an integer >= 1"
    if not isinstance(text, str) or _find(text, span, occurrence) < 0:
        return f"{where}/span does not occur {occurrence} time(s) in respond.text"
    return None


def _find(text: str, span: str, occurrence: int) -> int:
    at = -1
    for _ in range(occurrence):
        at = text.find(span, at + 1)
        if at < 0:
            return -1
    return at


# -- rendering --------------------------------------------------------------------------------


def _pair(entry: Mapping[str, Any], call_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    tool = entry["tool"]
    call: dict[str, Any] = {"type": f"{tool}_call", "id": call_id}
    result: dict[str, Any] = {"type": f"{tool}_result", "call_id": call_id}
    if tool == "google_search":
        call["arguments"] = {"queries": list(entry.get("queries", []))}
        suggestion = {"search_suggestions": entry["suggestions"]} if "suggestions" in entry else {}
        result["result"] = [suggestion]
    elif tool == "code_execution":
        arguments = {"code": entry["code"], "language": entry.get("language", "python")}
        call["arguments"] = arguments
        result["result"] = entry["output"]
        if entry["outcome"] != "ok":
            result["is_error"] = True
    elif tool == "url_context":
        results = entry.get("results", [])
        call["arguments"] = {"urls": [r["url"] for r in results]}
        result["result"] = [{"url": r["url"], "status": r["status"]} for r in results]
    elif entry.get("chunks"):  # file_search: no arguments; chunks only on the result
        result["result"] = [
            {"file_search_store": c["store"], "title": c["document"], "text": c["text"]}
            for c in entry["chunks"]
        ]
    if "signature" in entry:
        call["signature"] = entry["signature"]
        result["signature"] = entry["signature"]
    return call, result


def _annotation(tool: str, item: Mapping[str, Any], start: int, end: int) -> dict[str, Any]:
    if tool == "file_search":
        cited = {"type": "file_citation", "document_uri": item["document"], "source": item["store"]}
    else:
        cited = {"type": "url_citation", "url": item.get("uri", item.get("url"))}
        if "title" in item:
            cited["title"] = item["title"]
    return {**cited, "start_index": start, "end_index": end}


def hosted_specs(
    respond: Mapping[str, Any], ids: Ids
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """The hosted step specs (for the room's renderer), the text's annotations (``None``
    without ``cite``) and the ``grounding_tool_count`` entries of a validated respond."""
    block = respond.get("hosted") or {}
    tools = block.get("tools", [])
    specs: list[dict[str, Any]] = []
    for n, entry in enumerate(tools):
        call, result = _pair(entry, entry.get("id") or ids("", "hosted", n, size=16))
        as_delta = entry.get("stream_as") == "delta"
        specs.append({"type": "hosted", "step": call, "as_delta": as_delta})
        # File chunks stream in the result delta: the step declares no place for them.
        chunks = entry["tool"] == "file_search" and "result" in result
        specs.append({"type": "hosted", "step": result, "as_delta": as_delta or chunks})
    annotations = None
    if "cite" in block:
        text, markers = respond.get("text", ""), _markers(tools)
        annotations = []
        for cite in block["cite"]:
            at = _find(text, cite["span"], cite.get("occurrence", 1))
            start = len(text[:at].encode("utf-8"))
            end = start + len(cite["span"].encode("utf-8"))
            tool, item = markers[cite["marker"]]
            annotations.append(_annotation(tool, item, start, end))
    searches = sum(e["tool"] == "google_search" for e in tools)
    grounding = [{"type": "google_search", "count": searches}] if searches else []
    return specs, annotations, grounding


# -- request validation: the hosted tool declarations -----------------------------------------

_SEARCH_TYPES = ("web_search", "image_search", "enterprise_web_search")
_DECLARED = {
    "google_search": {"search_types"},
    "code_execution": set(),
    "url_context": set(),
    "file_search": {"file_search_store_names", "metadata_filter", "top_k"},
}
_NOT_MODELLED = ("google_maps", "mcp_server", "retrieval", "computer_use", "tool_search")


def _declaration_problem(tool: Any, where: str) -> str | None:
    if not isinstance(tool, dict):
        return f"{where}: a tool must be an object."
    kind = tool.get("type")
    if kind is None and len(tool) == 1:  # the older {"google_search": {}} form
        ((legacy, options),) = tool.items()
        if legacy in ("google_search", "code_execution", "url_context"):
            if options == {}:
                return None
            return (
                f"{where}.{legacy}: options in the legacy {{{legacy!r}: {{...}}}} form are not "
                f'pinned by the contract; declare {{"type": "{legacy}", ...}} instead.'
            )
    if kind == "function":  # client tools: checked by the continuation checks, not here
        return None
    if not isinstance(kind, str):
        return f"{where}: a tool needs a string 'type'."
    if kind in _NOT_MODELLED:
        return (
            f"{where}.type: the callgate mock does not model the hosted tool {kind!r} (its "
            "request options and results are not pinned); declare google_search, "
            "code_execution, url_context or file_search."
        )
    if kind not in _DECLARED:
        return f"{where}.type: unknown tool type {kind!r}."
    unknown = sorted(set(tool) - {"type"} - _DECLARED[kind])
    if unknown:
        return f"{where}.{kind}: unknown field(s) {', '.join(unknown)}."
    if kind == "google_search" and "search_types" in tool:
        values = tool["search_types"]
        if (
            not isinstance(values, list)
            or not values
            or any(v not in _SEARCH_TYPES for v in values)
        ):
            return f"{where}.search_types: a non-empty list of {', '.join(_SEARCH_TYPES)}."
    if kind == "file_search":
        return _file_search_problem(tool, where)
    return None


def _file_search_problem(tool: Mapping[str, Any], where: str) -> str | None:
    stores = tool.get("file_search_store_names")
    if (
        not isinstance(stores, list)
        or not stores
        or not all(isinstance(s, str) and s.startswith("fileSearchStores/") for s in stores)
    ):
        return (
            f"{where}.file_search_store_names: required, a non-empty list of store names "
            "(fileSearchStores/...)."
        )
    if "metadata_filter" in tool and not isinstance(tool["metadata_filter"], str):
        return f"{where}.metadata_filter: must be a string (a filter expression)."
    top_k = tool.get("top_k")
    if "top_k" in tool and (type(top_k) is not int or top_k < 1):
        return f"{where}.top_k: must be a positive integer."
    return None


def hosted_types(tools: Any) -> tuple[str, ...]:
    """The hosted tool types a request declares (``{"type": t}`` or the legacy ``{t: {}}``),
    so ``expect.tools`` can name them beside function names."""
    found: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        if isinstance(kind, str) and kind != "function":
            found.append(kind)
        elif kind is None and len(tool) == 1:
            found.extend(key for key in tool if isinstance(key, str))
    return tuple(found)


def check_declarations(body: Mapping[str, Any]) -> str | None:
    """The 400 message for the first bad hosted tool declaration in ``tools``, or None."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    for n, tool in enumerate(tools):
        problem = _declaration_problem(tool, f"tools[{n}]")
        if problem:
            return problem
    return None
