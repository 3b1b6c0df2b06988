"""Server tools on Anthropic Messages: checks of their blocks, and the hosted projection.

The provider runs ``web_search``, ``web_fetch`` and ``code_execution`` (with its
``bash_code_execution`` and ``text_editor_code_execution`` sub-tools) itself: a
``server_tool_use`` block is its call, a ``*_tool_result`` block (complete at
``content_block_start``, no deltas) its result, and a failure is in-band (the result's
``content`` is a ``*_tool_result_error`` with an ``error_code``). None of them is ever in
``Turn.calls``. Facts: anthropic 2.14.0 and 0.117.0 ``types/server_tool_use_block.py``,
``types/*_tool_result_block.py``, ``types/text_citation.py``,
``types/server_tool_usage.py`` (the same shapes in both).

- :class:`ServerBlocks` checks each server block as it opens: a known tool name, and never
  a result for a client ``tool_use`` (that would answer the host's call); the rest of the
  pairing (a result type that does not match its call, a second result) is hosted-tool
  bookkeeping, a warning on the turn;
- :func:`citation_problem` says what a text-block citation lacks (body or
  ``citations_delta``): a warning, never a refusal;
- :func:`project` derives ``turn.hosted_calls`` and ``turn.citations`` from the content;
- :func:`check_search_results` / :func:`check_declared` serve the continuation builder.

Usage (``usage.server_tool_use`` included) is telemetry and is never checked here. A
result's ``content`` is kept raw: its shape (search results, error codes) is a hosted-tool
detail that never refuses a turn.

A :class:`~callgate.HostedCall` has ``tool`` = the ``server_tool_use`` name, ``id`` = its
``srvtoolu_`` id, ``raw`` = ``(call block, result block or None)`` and ``status`` derived
only from the wire: ``"completed"`` (a result block), ``"error:<error_code>"`` (an in-band
error result; ``"error"`` when it names no code), ``None`` (no result in this turn: a mixed
client/server turn, or a pause).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import SequenceError, UnsupportedProviderState, UsageError
from .._hosted import Citation, HostedCall

__all__ = [
    "RESULT_OF",
    "STATUS_COMPLETED",
    "ServerBlocks",
    "check_declared",
    "check_search_results",
    "citation_problem",
    "project",
]

STATUS_COMPLETED = "completed"
SERVER_CALL = "server_tool_use"
# server_tool_use name -> the result block type its result arrives in.
RESULT_OF: dict[str, str] = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
    "tool_search_tool_regex": "tool_search_tool_result",
    "tool_search_tool_bm25": "tool_search_tool_result",
}
# The result block types (each tool's result arrives in one of them).
_RESULTS = frozenset(RESULT_OF.values())
# The declaration type prefix each server tool name needs in the request's tools.
_DECLARED_BY: dict[str, str] = {
    "web_search": "web_search_",
    "web_fetch": "web_fetch_",
    "code_execution": "code_execution_",
    "bash_code_execution": "code_execution_",
    "text_editor_code_execution": "code_execution_",
    "tool_search_tool_regex": "tool_search_tool_regex",
    "tool_search_tool_bm25": "tool_search_tool_bm25",
}

# citation type -> ((field, type) pairs the SDK types require, source field, start field,
# end field). A citation lacking one is projected with None there, and a warning.
_S, _I = str, int
_CITATIONS: dict[str, tuple[tuple[tuple[str, type], ...], str | None, str | None, str | None]] = {
    "web_search_result_location": (
        (("url", _S), ("encrypted_index", _S), ("cited_text", _S)), "url", None, None,
    ),
    "search_result_location": (
        (("source", _S), ("search_result_index", _I), ("start_block_index", _I),
         ("end_block_index", _I), ("cited_text", _S)),
        "source", "start_block_index", "end_block_index",
    ),
    "char_location": (
        (("document_index", _I), ("start_char_index", _I), ("end_char_index", _I),
         ("cited_text", _S)),
        None, "start_char_index", "end_char_index",
    ),
    "page_location": (
        (("document_index", _I), ("start_page_number", _I), ("end_page_number", _I),
         ("cited_text", _S)),
        None, "start_page_number", "end_page_number",
    ),
    "content_block_location": (
        (("document_index", _I), ("start_block_index", _I), ("end_block_index", _I),
         ("cited_text", _S)),
        None, "start_block_index", "end_block_index",
    ),
}  # fmt: skip


def _is_error(content: Any) -> bool:
    return type(content) is dict and str(content.get("type", "")).endswith("_tool_result_error")


class ServerBlocks:
    """The server calls and results of one turn, checked as each block opens. Not public."""

    __slots__ = ("_answered", "_calls", "_clients")

    def __init__(self) -> None:
        self._calls: dict[str, str] = {}  # server_tool_use id -> name
        self._clients: set[str] = set()  # client tool_use ids
        self._answered: set[str] = set()

    def on_call(self, block: dict[str, Any]) -> None:
        """A ``tool_use`` or ``server_tool_use`` block (ids already checked unique)."""
        if block["type"] != SERVER_CALL:
            self._clients.add(block["id"])
            return
        name = block["name"]
        if name not in RESULT_OF:
            raise UnsupportedProviderState(f"server_tool_use of unknown tool {name[:80]!r}")
        self._calls[block["id"]] = name

    def on_result(self, block: dict[str, Any], warnings: list[str]) -> None:
        """A ``*_tool_result`` block: its id must name no client call (the host answers
        those); a second result for one call, or a result type that is not its call's
        tool's, is a warning. A result for a call of an earlier response (a mixed turn's
        server call completes in the next) passes."""
        call_id, btype = block["tool_use_id"], block["type"]
        if call_id in self._clients:
            raise SequenceError(f"{btype} answers the client tool_use {call_id[:80]!r}")
        if call_id in self._answered:
            warnings.append(f"a second result block for server call {call_id[:80]!r}")
        name = self._calls.get(call_id)
        if name is not None and RESULT_OF[name] != btype:
            warnings.append(f"{btype} answers a {name} call")
        self._answered.add(call_id)


def citation_problem(citation: Any, where: str) -> str | None:
    """What a text-block citation lacks, or ``None``: it is not an object with a string
    ``type``, or it is of a known type and a field its SDK type requires is missing or
    of another type. An unknown citation type is no problem (projected without source
    and offsets)."""
    if type(citation) is not dict or type(citation.get("type")) is not str:
        return f"{where}: a citation is not an object with a string `type`"
    spec = _CITATIONS.get(citation["type"])
    for field, kind in spec[0] if spec is not None else ():
        if type(citation.get(field)) is not kind:
            return f"{where}: {citation['type']} lacks a {kind.__name__} `{field}`"
    return None


def _citation(raw: dict[str, Any]) -> Citation:
    spec = _CITATIONS.get(raw["type"])
    if spec is None:
        return Citation(kind=raw["type"], source=None, start=None, end=None, raw=raw)
    _, source_key, start_key, end_key = spec
    if source_key is not None:
        source = raw.get(source_key)
    else:  # a document citation: its uploaded file, else its position in the request
        file_id, document = raw.get("file_id"), raw.get("document_index")
        source = file_id if type(file_id) is str else None
        if source is None and type(document) is int:
            source = f"document:{document}"
    start = raw.get(start_key) if start_key is not None else None
    end = raw.get(end_key) if end_key is not None else None
    return Citation(
        kind=raw["type"],
        source=source if type(source) is str else None,
        start=start if type(start) is int else None,
        end=end if type(end) is int else None,
        raw=raw,
    )


def _status(result: dict[str, Any] | None) -> str | None:
    if result is None:
        return None
    content = result.get("content")
    if type(content) is dict and _is_error(content):
        code = content.get("error_code")
        return f"error:{code}" if type(code) is str else "error"
    return STATUS_COMPLETED


def project(
    content: Iterable[dict[str, Any]],
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...]]:
    """``(hosted_calls, citations)`` of checked content blocks, in wire order. A result
    whose call is not in these blocks (it was made in an earlier response) is a call of its
    own with ``tool`` = the result block type. A citation that is not an object with a
    string ``type`` is skipped (its warning came when the block was checked)."""
    blocks = list(content)
    results = {
        b["tool_use_id"]: b for b in blocks if b.get("type") in _RESULTS and "tool_use_id" in b
    }
    calls: list[HostedCall] = []
    citations: list[Citation] = []
    own: set[str] = set()
    for block in blocks:
        btype = block.get("type")
        if btype == SERVER_CALL:
            result = results.get(block["id"])
            own.add(block["id"])
            calls.append(HostedCall(tool=block["name"], id=block["id"],
                                    status=_status(result), raw=(block, result)))  # fmt: skip
        elif btype in _RESULTS and block["tool_use_id"] not in own:
            calls.append(HostedCall(tool=btype, id=block["tool_use_id"],
                                    status=_status(block), raw=(None, block)))  # fmt: skip
        elif btype == "text" and type(block.get("citations")) is list:
            citations.extend(
                _citation(c)
                for c in block["citations"]
                if type(c) is dict and type(c.get("type")) is str
            )
    return tuple(calls), tuple(citations)


# -- the continuation builder ---------------------------------------------------------------


def check_search_results(blocks: list[Any], where: str) -> None:
    """``search_result`` blocks a client ``tool_result`` carries (anthropic
    ``SearchResultBlockParam``): ``source`` and ``title`` strings, ``content`` a non-empty
    list of text blocks, ``citations`` absent or ``{"enabled": bool}``."""
    for block in blocks:
        if type(block) is not dict or block.get("type") != "search_result":
            continue
        for field in ("source", "title"):
            if type(block.get(field)) is not str:
                raise UsageError(f"{where}: search_result `{field}` must be a str")
        text = block.get("content")
        if (
            type(text) is not list
            or not text
            or any(
                type(t) is not dict or t.get("type") != "text" or type(t.get("text")) is not str
                for t in text
            )
        ):
            raise UsageError(f"{where}: search_result `content` must be a list of text blocks")
        config = block.get("citations")
        if config is not None and (
            type(config) is not dict or type(config.get("enabled")) is not bool
        ):
            raise UsageError(f"{where}: search_result `citations` must be {{enabled: bool}}")


def check_declared(content: Iterable[dict[str, Any]], tools: list[dict[str, Any]]) -> list[str]:
    """The server tools the content used that ``tools`` declares no server tool for, as
    ``"<name> (server tool)"``: a pause or mixed turn resends the same tools."""
    types = [str(t.get("type", "")) for t in tools]
    missing = {
        b["name"]
        for b in content
        if b.get("type") == SERVER_CALL
        and not any(t.startswith(_DECLARED_BY.get(b["name"], "\0")) for t in types)
    }
    return [f"{name} (server tool)" for name in sorted(missing)]
