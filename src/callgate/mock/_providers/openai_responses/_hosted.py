"""OpenAI Responses hosted tools in a script: ``respond.hosted`` and cited text.

``respond.hosted`` is a list of hosted steps, rendered in order before the turn's message
and calls, each one output item (its id is the mock's, deterministic)::

    {"web_search": {"action": "search", "query": "...", "results": [{"marker", "url", "title"}]}}
    {"web_search": {"action": "open_page", "url": "..."}}
    {"web_search": {"action": "find_in_page", "url": "...", "pattern": "..."}}
    {"file_search": {"queries": ["..."], "results": [{"marker", "file_id", "filename",
                     "score", "text", "attributes"}]}}
    {"code_interpreter": {"container_id"?, "code": "...", "outputs": [{"logs": "..."} |
                          {"image": "<url>"}], "files": [{"marker", "file_id", "filename"}]}}

Each step may set ``"status"`` (``completed``, the default, ``failed`` or ``incomplete``;
a web search may be ``incomplete`` only on the 2026-11 baseline, whose SDK has it). The
turn's ``text`` cites them as ``[cited words](cite:<marker>)``: the mock removes the markup
and computes the offsets (code points into the message text, end exclusive) -- a web result
gives a ``url_citation``, a file search result a ``file_citation`` at the end of the cited
words, a code interpreter file a ``container_file_citation``. Results are shown only as the
request's ``include`` asks (contract §9.5). ``respond.billable_web_requests`` (an int, or
``null`` to omit it) sets ``tool_usage.web_search.num_requests`` under the 2026-11 baseline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._kit import Ids

__all__ = [
    "RENDER_INCLUDES",
    "RESPOND_KEYS",
    "check_respond",
    "cited_text",
    "hosted_items",
    "tool_usage",
]

RESPOND_KEYS: Final = frozenset({"hosted", "billable_web_requests"})
# The include values that change what the renderer shows.
RENDER_INCLUDES: Final = frozenset(
    {"web_search_call.action.sources", "file_search_call.results", "code_interpreter_call.outputs"}
)
_CITE: Final = re.compile(r"\[([^\[\]]*)\]\(cite:([A-Za-z0-9_.-]+)\)")
_STEP_KEYS: Final = {
    "web_search": {"action", "query", "queries", "url", "pattern", "results", "status"},
    "file_search": {"queries", "results", "status"},
    "code_interpreter": {"container_id", "code", "outputs", "files", "status"},
}
_ITEM_TYPE: Final = {
    "web_search": ("web_search_call", "ws_"),
    "file_search": ("file_search_call", "fs_"),
    "code_interpreter": ("code_interpreter_call", "ci_"),
}
_RESULT_KEYS: Final = {
    "web_search": ({"url", "title"}, {"marker"}),
    "file_search": (set(), {"marker", "file_id", "filename", "score", "text", "attributes"}),
    "code_interpreter": ({"file_id", "filename"}, {"marker"}),
}
_STATUSES: Final = ("completed", "failed", "incomplete")
_MAX_STEPS: Final = 64


# -- load-time checks -------------------------------------------------------------------


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """Why ``respond``'s hosted steps cannot be rendered (``None`` when they can)."""
    usage = respond.get("billable_web_requests")
    if usage is not None and (type(usage) is not int or not 0 <= usage < 2**31):
        return "billable_web_requests is a non-negative int or null"
    if "hosted" not in respond:
        return None
    steps = respond["hosted"]
    if type(steps) is not list or not 0 < len(steps) <= _MAX_STEPS:
        return f"hosted is a list of 1 to {_MAX_STEPS} steps"
    markers: dict[str, str] = {}
    for n, step in enumerate(steps):
        problem = _check_step(step, markers)
        if problem is not None:
            return f"hosted/{n}: {problem}"
    text = respond.get("text")
    for match in _CITE.finditer(text if type(text) is str else ""):
        if match.group(2) not in markers:
            return f"text cites marker {match.group(2)!r}, which no hosted result defines"
    return None


def _check_step(step: Any, markers: dict[str, str]) -> str | None:
    if type(step) is not dict or len(step) != 1 or next(iter(step)) not in _STEP_KEYS:
        return f"a step is one object keyed by one of {', '.join(sorted(_STEP_KEYS))}"
    ((tool, spec),) = step.items()
    if type(spec) is not dict:
        return f"{tool} is an object"
    unknown = set(spec) - _STEP_KEYS[tool]
    if unknown:
        return f"{tool} has unknown keys {sorted(unknown)}"
    if spec.get("status", "completed") not in _STATUSES:
        return f"status is one of {', '.join(_STATUSES)}"
    problem = _STEP_CHECKS[tool](spec)
    if problem is not None:
        return problem
    for k, result in enumerate(spec.get("results" if tool != "code_interpreter" else "files", ())):
        problem = _check_result(tool, result, markers)
        if problem is not None:
            return f"result {k}: {problem}"
    return None


def _strs(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _check_web(spec: Mapping[str, Any]) -> str | None:
    action = spec.get("action", "search")
    needs = {"search": ("query",), "open_page": ("url",), "find_in_page": ("url", "pattern")}
    if action not in needs:
        return "web_search action is search, open_page or find_in_page"
    for key in needs[action]:
        if type(spec.get(key)) is not str:
            return f"a {action} action needs a string {key!r}"
    if "queries" in spec and not _strs(spec["queries"]):
        return "queries is a list of strings"
    if action != "search" and "results" in spec:
        return "only a search action has results"
    return None


def _check_file(spec: Mapping[str, Any]) -> str | None:
    if not _strs(spec.get("queries")):
        return "file_search needs 'queries', a list of strings"
    return None


def _check_code(spec: Mapping[str, Any]) -> str | None:
    if type(spec.get("code")) is not str:
        return "code_interpreter needs a string 'code'"
    if "container_id" in spec and type(spec["container_id"]) is not str:
        return "container_id is a string"
    outputs = spec.get("outputs", [])
    if type(outputs) is not list:
        return "outputs is a list"
    for output in outputs:
        if (
            type(output) is not dict
            or len(output) != 1
            or next(iter(output))
            not in (
                "logs",
                "image",
            )
        ):
            return "an output is {'logs': str} or {'image': url}"
        if type(next(iter(output.values()))) is not str:
            return "an output's logs or image url is a string"
    return None


_STEP_CHECKS: Final = {"web_search": _check_web, "file_search": _check_file,
                       "code_interpreter": _check_code}  # fmt: skip


def _check_result(tool: str, result: Any, markers: dict[str, str]) -> str | None:
    required, optional = _RESULT_KEYS[tool]
    if type(result) is not dict:
        return "a result is an object"
    if set(result) - required - optional or required - set(result):
        return f"a {tool} result has keys {sorted(required)} and optional {sorted(optional)}"
    for key in ("url", "title", "file_id", "filename", "text", "marker"):
        if key in result and type(result[key]) is not str:
            return f"{key!r} is a string"
    score = result.get("score", 0.0)
    if type(score) not in (int, float) or not 0 <= score <= 1:
        return "score is a number from 0 to 1"
    attributes = result.get("attributes", {})
    if type(attributes) is not dict or any(
        type(v) not in (str, int, float, bool) for v in attributes.values()
    ):
        return "attributes map names to strings, numbers or booleans"
    marker = result.get("marker")
    if marker is not None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", marker):
            return "a marker is letters, digits, '_', '.' or '-'"
        if marker in markers:
            return f"marker {marker!r} is defined twice"
        markers[marker] = tool
    return None


# -- rendering ----------------------------------------------------------------------------


def hosted_items(
    respond: Mapping[str, Any], ids: Ids, include: Sequence[str]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The hosted item specs of the room's writer, in order, and the citation each marker
    stands for (without its offsets)."""
    specs: list[dict[str, Any]] = []
    cites: dict[str, dict[str, Any]] = {}
    for n, step in enumerate(respond.get("hosted", ())):
        ((tool, spec),) = step.items()
        item_type, prefix = _ITEM_TYPE[tool]
        item = _BUILDERS[tool](spec, ids(prefix, tool, n), ids, n, include, cites)
        specs.append({"type": item_type, "item": item})
    return specs, cites


def _base(spec: Mapping[str, Any], item_id: str, item_type: str) -> dict[str, Any]:
    return {"id": item_id, "type": item_type, "status": spec.get("status", "completed")}


def _web(
    spec: Mapping[str, Any],
    item_id: str,
    ids: Ids,
    n: int,
    include: Sequence[str],
    cites: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    item = _base(spec, item_id, "web_search_call")
    kind = spec.get("action", "search")
    action: dict[str, Any] = {"type": kind}
    if kind == "search":
        action["query"] = spec["query"]
        if "queries" in spec:
            action["queries"] = list(spec["queries"])
        if "web_search_call.action.sources" in include:
            action["sources"] = [{"type": "url", "url": r["url"]} for r in spec.get("results", ())]
    else:
        action["url"] = spec["url"]
        if kind == "find_in_page":
            action["pattern"] = spec["pattern"]
    item["action"] = action
    for result in spec.get("results", ()):
        if "marker" in result:
            cites[result["marker"]] = {"type": "url_citation", "url": result["url"],
                                       "title": result["title"]}  # fmt: skip
    return item


def _file(
    spec: Mapping[str, Any],
    item_id: str,
    ids: Ids,
    n: int,
    include: Sequence[str],
    cites: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    item = _base(spec, item_id, "file_search_call")
    item["queries"] = list(spec["queries"])
    results = []
    for k, result in enumerate(spec.get("results", ())):
        file_id = result.get("file_id") or ids("file-", "file_search_file", n * 1000 + k)
        filename = result.get("filename", f"{file_id}.txt")
        entry = {key: result[key] for key in ("score", "text", "attributes") if key in result}
        results.append({"file_id": file_id, "filename": filename, **entry})
        if "marker" in result:
            cites[result["marker"]] = {"type": "file_citation", "file_id": file_id,
                                       "filename": filename}  # fmt: skip
    item["results"] = results if "file_search_call.results" in include else None
    return item


def _code(
    spec: Mapping[str, Any],
    item_id: str,
    ids: Ids,
    n: int,
    include: Sequence[str],
    cites: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    item = _base(spec, item_id, "code_interpreter_call")
    container = spec.get("container_id") or ids("cntr_", "container", n)
    outputs = [
        {"type": "logs", "logs": o["logs"]} if "logs" in o else {"type": "image", "url": o["image"]}
        for o in spec.get("outputs", ())
    ]
    item |= {
        "container_id": container,
        "code": spec["code"],
        "outputs": outputs if "code_interpreter_call.outputs" in include else None,
    }
    for result in spec.get("files", ()):
        if "marker" in result:
            cites[result["marker"]] = {"type": "container_file_citation",
                                       "container_id": container, "file_id": result["file_id"],
                                       "filename": result["filename"]}  # fmt: skip
    return item


_BUILDERS: Final = {"web_search": _web, "file_search": _file, "code_interpreter": _code}


def cited_text(
    text: str, cites: Mapping[str, Mapping[str, Any]]
) -> tuple[str, list[dict[str, Any]]]:
    """``text`` without its citation markup, and its annotations in text order."""
    pieces: list[str] = []
    annotations: list[dict[str, Any]] = []
    length = last = 0
    for match in _CITE.finditer(text):
        before = text[last : match.start()]
        pieces.append(before)
        start = length + len(before)
        words = match.group(1)
        pieces.append(words)
        end = start + len(words)
        length, last = end, match.end()
        cite = dict(cites[match.group(2)])
        if cite["type"] == "file_citation":
            cite["index"] = end
        else:
            cite |= {"start_index": start, "end_index": end}
        annotations.append(cite)
    pieces.append(text[last:])
    return "".join(pieces), annotations


def tool_usage(respond: Mapping[str, Any], baseline: str) -> dict[str, Any] | None:
    """``tool_usage`` for ``respond`` (2026-11 baseline only: the 2.46.0 SDK has no such
    field); both families are sent, as the strict SDK requires, image_gen at zero."""
    requests = respond.get("billable_web_requests")
    if requests is None or baseline == "2026-07-21":
        return None
    zero = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0,
            "input_tokens_details": {"image_tokens": 0, "text_tokens": 0}}  # fmt: skip
    return {"web_search": {"num_requests": requests}, "image_gen": zero}
