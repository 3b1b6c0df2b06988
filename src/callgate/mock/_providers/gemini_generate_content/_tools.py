"""Gemini generateContent: the hosted tool objects of a request, checked as the API would.

The native check ``gemini_gc_hosted_tools`` (on by default) reads ``tools`` and
``toolConfig`` of the request and answers the first problem as Google's 400
``INVALID_ARGUMENT``. Nested keys are read in both casings (the SDK sends them snake_case,
``contracts/gemini-generate-content.md`` §2). What is checked, from the SDK's
``types.Tool`` / ``GoogleSearch`` / ``Interval`` / ``FileSearch`` docstrings:

``googleSearch``  an object; ``timeRangeFilter`` is ``{startTime, endTime}``, RFC 3339
                  timestamps with an offset, both or neither ("If customers set a start
                  time, they must set an end time (and vice versa)"), start before end
``fileSearch``    ``fileSearchStoreNames`` required, a non-empty list of
                  ``fileSearchStores/<id>`` names; ``topK`` an int32 >= 1; ``metadataFilter``
                  a string (AIP-160 syntax, not evaluated: the scripted chunks are returned)
``codeExecution``, ``urlContext``  the empty object
``toolConfig.includeServerSideToolInvocations``  a bool

An unknown key is Google's "Unknown name" answer (Vertex-only fields such as
``excludeDomains`` included: the Developer API does not know them). What the mock cannot
render or whose server behaviour is not pinned is refused with a message saying so:
``googleSearch.searchTypes`` (image search), ``includeServerSideToolInvocations: true``
(``toolCall``/``toolResponse`` parts are parsed by callgate but not scripted), and the
``googleMaps``, ``computerUse``, ``googleSearchRetrieval`` and ``mcpServers`` tools.
"""

from __future__ import annotations

import datetime
import functools
import re
from typing import Any

from .._kit import Reply

__all__ = ["HOSTED", "check_tools", "snake"]

_INT32 = 2**31 - 1
_STORE = re.compile(r"fileSearchStores/[A-Za-z0-9._-]+")
_UNPINNED_TOOLS = {
    "googleMaps": "google_maps",
    "computerUse": "computer_use",
    "googleSearchRetrieval": "google_search_retrieval",
    "mcpServers": "mcp_servers",
}
_KNOWN_TOOLS = {
    "functionDeclarations": "function_declarations",
    "googleSearch": "google_search",
    "fileSearch": "file_search",
    "codeExecution": "code_execution",
    "urlContext": "url_context",
}
# Either spelling of a tool key -> its camelCase name.
_UNPINNED_NAMES = {n: camel for camel, other in _UNPINNED_TOOLS.items() for n in (camel, other)}
_KNOWN_NAMES = {n: camel for camel, other in _KNOWN_TOOLS.items() for n in (camel, other)}


class _RefusalError(Exception):
    """The 400 message of the first problem found."""


#: The hosted tool keys of a ``Tool`` object this check knows, in the docs' order.
HOSTED = ("googleSearch", "fileSearch", "codeExecution", "urlContext")


@functools.cache  # called with the field names above only, per field of every request
def snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


#: Each hosted tool key with both its spellings (``googleSearch``, ``google_search``).
SPELLINGS = tuple((key, frozenset((key, snake(key)))) for key in HOSTED)


def _fields(value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """``value``'s fields by their camelCase name; an unknown one is Google's 400."""
    if not isinstance(value, dict):
        raise _RefusalError(f"Invalid value at '{where}', expected an object.")
    out: dict[str, Any] = {}
    for key, item in value.items():
        camel = next((a for a in allowed if key in (a, snake(a))), None)
        if camel is None:
            raise _RefusalError(
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                "Cannot find field."
            )
        if camel in out:
            raise _RefusalError(
                f"Invalid JSON payload received. Field '{where}.{snake(camel)}' set twice."
            )
        out[camel] = item
    return out


def _timestamp(value: Any, where: str) -> datetime.datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed
    raise _RefusalError(
        f"Invalid value at '{where}' (type.googleapis.com/google.protobuf.Timestamp), "
        f"Field '{where}', Invalid time format: {value!r}"
    )


def _google_search(value: Any, where: str) -> None:
    fields = _fields(
        value, where, ("timeRangeFilter", "searchTypes", "excludeDomains", "blockingConfidence")
    )
    for vertex in ("excludeDomains", "blockingConfidence"):
        if vertex in fields:
            raise _RefusalError(
                f"Invalid JSON payload received. Unknown name \"{vertex}\" at '{where}': "
                "Cannot find field."
            )
    if "searchTypes" in fields:
        raise _RefusalError(
            "callgate mock: googleSearch.searchTypes (web/image search selection) is not "
            "pinned by the contract; leave it out (web search is the default)"
        )
    if "timeRangeFilter" in fields:
        at = f"{where}.time_range_filter"
        interval = _fields(fields["timeRangeFilter"], at, ("startTime", "endTime"))
        if ("startTime" in interval) != ("endTime" in interval):
            raise _RefusalError(
                f"{at}: if a start time is set, an end time must be set too (and vice versa)."
            )
        if interval:
            start = _timestamp(interval["startTime"], f"{at}.start_time")
            end = _timestamp(interval["endTime"], f"{at}.end_time")
            if end <= start:
                raise _RefusalError(f"{at}: end_time must be after start_time.")


def _file_search(value: Any, where: str) -> None:
    fields = _fields(value, where, ("fileSearchStoreNames", "topK", "metadataFilter"))
    names = fields.get("fileSearchStoreNames")
    at = f"{where}.file_search_store_names"
    if not names:
        raise _RefusalError(
            f"* GenerateContentRequest.{at}: file_search_store_names is not specified"
        )
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _RefusalError(f"Invalid value at '{at}', expected a list of strings.")
    for name in names:
        if not _STORE.fullmatch(name):
            raise _RefusalError(
                f"* GenerateContentRequest.{at}: {name!r} is not a file search store name "
                "(fileSearchStores/<id>)"
            )
    if "topK" in fields:
        top_k = fields["topK"]
        if type(top_k) is not int or not -_INT32 - 1 <= top_k <= _INT32:
            raise _RefusalError(f"Invalid value at '{where}.top_k' (TYPE_INT32), {top_k!r}")
        if top_k < 1:
            raise _RefusalError(
                f"callgate mock: {where}.top_k is {top_k}; the server's answer to a count "
                "below 1 is not pinned, so the mock serves top_k >= 1 only"
            )
    given = fields.get("metadataFilter")
    if given is not None and not isinstance(given, str):
        raise _RefusalError(f"Invalid value at '{where}.metadata_filter' (TYPE_STRING), {given!r}")


def _empty(value: Any, where: str) -> None:
    _fields(value, where, ())


_CHECKS = {
    "googleSearch": _google_search,
    "fileSearch": _file_search,
    "codeExecution": _empty,
    "urlContext": _empty,
}


def _tool(tool: Any, where: str) -> None:
    if not isinstance(tool, dict):
        raise _RefusalError(f"Invalid value at '{where}', expected an object.")
    for key, value in tool.items():
        unpinned = _UNPINNED_NAMES.get(key)
        if unpinned is not None:
            raise _RefusalError(
                f"callgate mock: the {unpinned} tool is not pinned by the contract and "
                "is not served"
            )
        known = _KNOWN_NAMES.get(key)
        if known is None:
            raise _RefusalError(
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                "Cannot find field."
            )
        if known in _CHECKS:
            _CHECKS[known](value, f"{where}.{_KNOWN_TOOLS[known]}")


def _tool_config(config: Any) -> None:
    if not isinstance(config, dict):
        return
    flag = config.get(
        "includeServerSideToolInvocations", config.get("include_server_side_tool_invocations")
    )
    if flag is None:
        return
    if type(flag) is not bool:
        at = "tool_config.include_server_side_tool_invocations"
        raise _RefusalError(f"Invalid value at '{at}' (TYPE_BOOL), {flag!r}")
    if flag:
        raise _RefusalError(
            "callgate mock: includeServerSideToolInvocations is not served (toolCall and "
            "toolResponse parts are parsed by callgate but cannot be scripted yet)"
        )


def check_tools(body: dict[str, Any]) -> Reply | None:
    """Google's 400 for the first problem in the request's hosted tools, else ``None``."""
    try:
        tools = body.get("tools")
        if isinstance(tools, list):
            for n, tool in enumerate(tools):
                _tool(tool, f"tools[{n}]")
        _tool_config(body.get("toolConfig", body.get("tool_config")))
    except _RefusalError as refusal:
        message = str(refusal)
        return Reply(
            400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
        )
    return None
