"""``respond.hosted`` for generateContent: scripted hosted-tool results on the wire.

The mock never searches, retrieves or runs code: the script says what the server's tools
returned, and this module renders it the way the Developer API carries it
(``contracts/gemini-generate-content.md`` §9)::

    "hosted": {
      "search": {"queries": [str, ...],                        # -> webSearchQueries
                 "results": [{"id": str, "uri": str, "title"?: str, "domain"?: str}],
                 "entry_point"?: str},                         # searchEntryPoint.renderedContent
      "file_search": [{"id": str, "store": str, "document": str, "text": str, "uri"?: str}],
      "code": [{"code": str, "outcome"?: "OUTCOME_OK" | "OUTCOME_FAILED"
                                       | "OUTCOME_DEADLINE_EXCEEDED", "output"?: str, "id"?: str}],
      "url_context": [{"url": str, "status"?: "SUCCESS" | "ERROR" | "PAYWALL" | "UNSAFE",
                       "id"?: str, "title"?: str}],
      "queries_first"?: bool,      # stream: webSearchQueries already on the first chunk
      "tool_use_tokens"?: int      # usageMetadata.toolUsePromptTokenCount
    }

- A search result becomes a ``web`` grounding chunk ``{uri, title}``; the Developer API
  sends the site's domain as the title, so ``title`` defaults to ``domain`` (``domain``
  itself is a Vertex-only field and is not sent). A web chunk carries no text on this wire,
  so a result has no ``text`` key.
- A file-search chunk becomes ``retrievedContext`` ``{uri?, title: document, text,
  fileSearchStore: store}``; a URL-context result becomes an ``urlMetadata`` entry (the
  status prefixed ``URL_RETRIEVAL_STATUS_``) and, when it has an ``id``, a ``web`` chunk a
  marker can cite (fetched pages are cited through groundingMetadata).
- Code becomes an ``executableCode`` part (``PYTHON``) and its ``codeExecutionResult``,
  before the answer text, pairs in order.
- **Markers.** With ``hosted`` present, ``respond.text`` may cite results: ``[[r1]]`` or
  ``[[r1,f2]]`` right after the cited text. The mock removes the markers and computes each
  ``groundingSupport``: the segment runs from the previous marker (or the start, leading
  blanks skipped) to the marker, in UTF-8 bytes of the answer part, end exclusive, with
  ``partIndex`` of that part and ``groundingChunkIndices`` of the named results.

Grounding and URL context go on the last chunk of a stream with ``finishReason`` (the
contract's default), or split with ``queries_first``; the body carries them on its one
candidate. Every function raises nothing on a block :func:`check` accepted.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["answer_text", "check", "code_parts", "first_chunk", "metadata", "tool_tokens"]

_KEYS = {"search", "file_search", "code", "url_context", "queries_first", "tool_use_tokens"}
_RESULT_KEYS = {"id", "uri", "title", "domain"}
_FILE_KEYS = {"id", "store", "document", "text", "uri"}
_CODE_KEYS = {"code", "outcome", "output", "id"}
_URL_KEYS = {"url", "status", "id", "title"}
_OUTCOMES = ("OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED")
_URL_STATUSES = ("SUCCESS", "ERROR", "PAYWALL", "UNSAFE")
_MARKER = re.compile(r"\[\[([A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*)\]\]")
_MAX_TOKENS = 2**53
_NON_EMPTY = frozenset({"id", "uri", "url", "code", "store", "document"})


class _HostedScriptError(Exception):
    """A script problem, with its location under ``respond/hosted``."""


def _obj(value: Any, where: str, keys: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _HostedScriptError(f"{where} must be an object")
    extra = sorted(set(value) - keys)
    if extra:
        raise _HostedScriptError(f"{where} has unknown key(s) {extra} (allowed: {sorted(keys)})")
    for key in required:
        if key not in value:
            raise _HostedScriptError(f"{where} needs {key!r}")
    for key, item in value.items():
        if not isinstance(item, str) or (key in _NON_EMPTY and not item):
            kind = "a non-empty string" if key in _NON_EMPTY else "a string"
            raise _HostedScriptError(f"{where}/{key} must be {kind}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _HostedScriptError(f"{where} must be a list")
    return value


def _hosted(respond: Mapping[str, Any]) -> dict[str, Any]:
    hosted = respond.get("hosted")
    return hosted if isinstance(hosted, dict) else {}


def _check_search(search: Any, ids: list[str]) -> None:
    if not isinstance(search, dict) or set(search) - {"queries", "results", "entry_point"}:
        raise _HostedScriptError("search is {queries: [str], results: [...], entry_point?: str}")
    for query in _list(search.get("queries", []), "search/queries"):
        if not isinstance(query, str) or not query:
            raise _HostedScriptError("search/queries holds non-empty strings")
    if not isinstance(search.get("entry_point", ""), str):
        raise _HostedScriptError("search/entry_point must be a string")
    for n, result in enumerate(_list(search.get("results", []), "search/results")):
        if isinstance(result, dict) and "text" in result:
            raise _HostedScriptError(
                f"search/results/{n}: a web grounding chunk carries no text on the Developer "
                "API wire (uri, title, domain only)"
            )
        ids.append(_obj(result, f"search/results/{n}", _RESULT_KEYS, ("id", "uri"))["id"])


def _check_entries(hosted: dict[str, Any], ids: list[str]) -> None:
    for n, chunk in enumerate(_list(hosted.get("file_search", []), "file_search")):
        required = ("id", "store", "document", "text")
        ids.append(_obj(chunk, f"file_search/{n}", _FILE_KEYS, required)["id"])
    for n, spec in enumerate(_list(hosted.get("code", []), "code")):
        spec = _obj(spec, f"code/{n}", _CODE_KEYS, ("code",))
        if spec.get("outcome", "OUTCOME_OK") not in _OUTCOMES:
            raise _HostedScriptError(f"code/{n}/outcome is one of {', '.join(_OUTCOMES)}")
    for n, spec in enumerate(_list(hosted.get("url_context", []), "url_context")):
        spec = _obj(spec, f"url_context/{n}", _URL_KEYS, ("url",))
        if spec.get("status", "SUCCESS") not in _URL_STATUSES:
            raise _HostedScriptError(f"url_context/{n}/status is one of {', '.join(_URL_STATUSES)}")
        if "id" in spec:
            ids.append(spec["id"])


def check(respond: Mapping[str, Any]) -> str | None:
    """Why ``respond.hosted`` cannot be rendered (a message naming its place), or ``None``."""
    if "hosted" not in respond:
        return None
    hosted = respond["hosted"]
    try:
        _obj_keys(hosted)
        ids: list[str] = []
        if "search" in hosted:
            _check_search(hosted["search"], ids)
        _check_entries(hosted, ids)
        if len(set(ids)) != len(ids):
            raise _HostedScriptError(
                "result ids must be unique across search, file_search and url_context"
            )
        tokens = hosted.get("tool_use_tokens", 0)
        if type(tokens) is not int or not 0 <= tokens < _MAX_TOKENS:
            raise _HostedScriptError("tool_use_tokens is an int >= 0")
        if type(hosted.get("queries_first", False)) is not bool:
            raise _HostedScriptError("queries_first is a bool")
        _supports(respond, ids)
    except _HostedScriptError as exc:
        return f"hosted: {exc}"
    return None


def _obj_keys(hosted: Any) -> None:
    if not isinstance(hosted, dict):
        raise _HostedScriptError("hosted must be an object")
    extra = sorted(set(hosted) - _KEYS)
    if extra:
        raise _HostedScriptError(f"unknown key(s) {extra} (allowed: {sorted(_KEYS)})")


def _supports(
    respond: Mapping[str, Any], ids: list[str]
) -> tuple[str, list[tuple[int, int, str, list[int]]]]:
    """(the answer text without markers, [(start, end, segment text, chunk indices)])."""
    text = respond.get("text", "")
    if not isinstance(text, str):
        return "", []
    pieces: list[str] = []
    supports = []
    done, byte_at = 0, 0
    for match in _MARKER.finditer(text):
        before = text[done : match.start()]
        pieces.append(before)
        stripped = before.lstrip()
        start = byte_at + len(before[: len(before) - len(stripped)].encode())
        byte_at += len(before.encode())
        if not stripped:
            raise _HostedScriptError(f"marker {match.group(0)} cites no text")
        names = match.group(1).split(",")
        unknown = [name for name in names if name not in ids]
        if unknown:
            raise _HostedScriptError(f"marker {match.group(0)} names unknown result(s) {unknown}")
        supports.append((start, byte_at, stripped, [ids.index(name) for name in names]))
        done = match.end()
    pieces.append(text[done:])
    return "".join(pieces), supports


def answer_text(respond: Mapping[str, Any]) -> str:
    """``respond.text`` as sent: markers removed when ``hosted`` is scripted."""
    text = respond.get("text", "")
    if "hosted" not in respond or not isinstance(text, str):
        return text if isinstance(text, str) else ""
    return _supports(respond, _ids(_hosted(respond)))[0]


def _ids(hosted: dict[str, Any]) -> list[str]:
    ids = [r["id"] for r in hosted.get("search", {}).get("results", [])]
    ids += [c["id"] for c in hosted.get("file_search", [])]
    return ids + [u["id"] for u in hosted.get("url_context", []) if "id" in u]


def code_parts(respond: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The room renderer's scripted parts for ``hosted.code``: code, then its result."""
    parts: list[dict[str, Any]] = []
    for spec in _hosted(respond).get("code", []):
        code: dict[str, Any] = {"language": "PYTHON", "code": spec["code"]}
        result: dict[str, Any] = {"outcome": spec.get("outcome", "OUTCOME_OK")}
        if "output" in spec:
            result["output"] = spec["output"]
        if "id" in spec:
            code["id"] = result["id"] = spec["id"]
        parts += [{"raw": {"executableCode": code}}, {"raw": {"codeExecutionResult": result}}]
    return parts


def _chunks(hosted: dict[str, Any]) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = []
    for result in hosted.get("search", {}).get("results", []):
        web = {"uri": result["uri"]}
        title = result.get("title", result.get("domain"))
        if title is not None:
            web["title"] = title
        chunks.append({"web": web})
    for spec in hosted.get("file_search", []):
        context = {"uri": spec["uri"]} if "uri" in spec else {}
        context.update(title=spec["document"], text=spec["text"], fileSearchStore=spec["store"])
        chunks.append({"retrievedContext": context})
    for spec in hosted.get("url_context", []):
        if "id" in spec:
            web = {"uri": spec["url"], **({"title": spec["title"]} if "title" in spec else {})}
            chunks.append({"web": web})
    return chunks


def _entry_point(search: dict[str, Any]) -> dict[str, Any]:
    given = search.get("entry_point")
    if given is None:
        chips = "".join(f'<a class="chip">{html.escape(q)}</a>' for q in search.get("queries", []))
        given = f'<div class="callgate-search-entry">{chips}</div>'
    return {"renderedContent": given}


def metadata(respond: Mapping[str, Any], part_index: int) -> dict[str, Any]:
    """The candidate's ``groundingMetadata`` / ``urlContextMetadata`` (``part_index``: the
    answer text's position among the body's parts)."""
    hosted = _hosted(respond)
    out: dict[str, Any] = {}
    grounding: dict[str, Any] = {}
    search = hosted.get("search")
    if search is not None:
        if search.get("queries"):
            grounding["webSearchQueries"] = list(search["queries"])
        grounding["searchEntryPoint"] = _entry_point(search)
    chunks = _chunks(hosted)
    if chunks:
        grounding["groundingChunks"] = chunks
    supports = _supports(respond, _ids(hosted))[1] if hosted else []
    if supports:
        grounding["groundingSupports"] = [
            {
                "segment": {
                    "partIndex": part_index,
                    "startIndex": start,
                    "endIndex": end,
                    "text": text,
                },
                "groundingChunkIndices": indices,
            }
            for start, end, text, indices in supports
        ]
    if grounding:
        out["groundingMetadata"] = grounding
    urls = hosted.get("url_context")
    if urls:
        out["urlContextMetadata"] = {
            "urlMetadata": [
                {
                    "retrievedUrl": spec["url"],
                    "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_" + spec.get("status", "SUCCESS"),
                }
                for spec in urls
            ]
        }
    return out


def first_chunk(respond: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the first chunk of a stream carries early (``queries_first``), else ``None``."""
    hosted = _hosted(respond)
    queries = hosted.get("search", {}).get("queries")
    if hosted.get("queries_first") and queries:
        return {"groundingMetadata": {"webSearchQueries": list(queries)}}
    return None


def tool_tokens(respond: Mapping[str, Any]) -> int | None:
    """``toolUsePromptTokenCount`` of a hosted turn (``None``: not a hosted turn)."""
    if "hosted" not in respond:
        return None
    tokens: int = _hosted(respond).get("tool_use_tokens", 0)
    return tokens
