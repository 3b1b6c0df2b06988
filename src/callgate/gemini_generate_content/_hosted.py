"""Hosted-tool projection of a generateContent turn: ``turn.hosted_calls`` and ``turn.citations``.

The Developer API runs ``googleSearch``, ``fileSearch``, ``codeExecution`` and
``urlContext`` itself, inside one request (``contracts/gemini-generate-content.md`` §9). Their
traces, and what callgate makes of them (never an executable call):

- ``executableCode`` part -> ``HostedCall(tool="codeExecution", id=<part id>, status=<the
  matching codeExecutionResult's outcome, None if none followed>, raw=(code_part,
  result_part | None))``. A result pairs with the unanswered code part of the same ``id``
  (the SDK: the result's ``id`` is "only populated if the corresponding ExecutableCode has
  an id"), else the earliest unanswered id-less one.
- ``toolCall`` part (``includeServerSideToolInvocations``) -> ``HostedCall(tool=<toolType
  or "toolCall">, id=<id>, status=None, raw=(call_part, response_part | None))``, paired
  with the ``toolResponse`` of the same ``id``.
- ``groundingMetadata.webSearchQueries`` -> one ``HostedCall(tool="googleSearch",
  raw=<query>)`` per query (Gemini 3 bills per executed query); ``retrievedContext``
  grounding chunks -> one ``HostedCall(tool="fileSearch", raw=<tuple of those chunks>)``.
- ``urlContextMetadata.urlMetadata`` -> one ``HostedCall(tool="urlContext",
  status=<urlRetrievalStatus>, raw=<entry>)`` per URL.
- ``groundingSupports`` -> one ``Citation`` per support and per ``groundingChunkIndices``
  entry, in order: ``kind`` the chunk's kind (``web``, ``retrievedContext``, ``image``,
  ``maps``), ``source`` the chunk's URI (``sourceUri`` for an image), ``start``/``end`` the
  segment's UTF-8 byte offsets into ``turn.parts[partIndex]["text"]`` (end exclusive; an
  omitted offset or ``partIndex`` is proto3's zero), ``raw`` the support.

All of it is telemetry (docs/required-fields.md): nothing here refuses a turn. What the
projection cannot read consistently is a short ``turn.warnings`` entry and, where a value
is missing, ``None`` in the projection:

- a support's segment is resolved to a text part: ``partIndex`` when it names a text part
  whose bytes hold the range (and ``segment.text``, if sent); otherwise the one other text
  part whose bytes ``[start, end)`` are exactly ``segment.text`` (the API omits a
  ``partIndex`` of 1 when a thought part comes first, python-genai#961, and file search
  names a part that is no text part); ``start``/``end`` are then offsets into that part and
  a warning names it. A segment that resolves to no part, or to several, keeps its source
  with ``start``/``end`` ``None``, and a warning;
- a chunk index outside ``groundingChunks`` drops that citation, with a warning; a chunk of
  a kind callgate does not know is cited with the chunk's own key as ``kind``, no source;
- a code or server-side tool result that answers no earlier call is a hosted call of its
  own (``raw=(None, result)``), with a warning; one that could answer several id-less
  calls answers the earliest, with a warning; unknown languages, outcomes, tool types and
  URL statuses are kept raw as they are;
- citations beyond ``max_items_per_turn`` are not projected (a warning says so).

The streaming rule (:func:`merge_metadata`, pinned here because neither the SDK nor the
docs pin it): ``groundingMetadata`` and ``urlContextMetadata`` may arrive on any chunk; each
field re-sent on a later chunk must *extend* what came before (a list must start with the
earlier list, anything else must be equal), so the turn holds the accumulated value, as the
server resends it (langchainjs#11456), whether it arrives once on the last chunk (the
common case, pipecat#1030), early (vercel/ai#13123) or field by field (promptfoo#9436). A
re-sent field that does not extend the earlier one (incremental delivery, whose index
semantics nobody pins) replaces it, with a warning. ``partIndex`` counts the turn's parts
as :class:`Turn` coalesces them, so a stream and the body of the same turn give equal
projections (the SDK treats indices as relative to the Content they arrive with, and
shifts them when it concatenates Contents:
``_extra_utils._shift_candidate_grounding_supports``).
"""

from __future__ import annotations

from typing import Any

from .._hosted import Citation, HostedCall
from .._limits import Limits

__all__ = ["METADATA_KEYS", "merge_metadata", "project"]

GROUNDING = "groundingMetadata"
URL_CONTEXT = "urlContextMetadata"
METADATA_KEYS = (GROUNDING, URL_CONTEXT)

#: groundingChunk kind -> the field holding its URI.
_CHUNK_KINDS = {"web": "uri", "retrievedContext": "uri", "image": "sourceUri", "maps": "uri"}

Warnings = list[str]


# -- the streaming rule -----------------------------------------------------------------


def merge_metadata(
    key: str, earlier: dict[str, Any] | None, value: Any, warnings: Warnings
) -> dict[str, Any] | None:
    """``value`` (one chunk's ``groundingMetadata``/``urlContextMetadata``) merged into what
    earlier chunks sent, under the module's cumulative rule. A value that is no object is
    ignored, a re-sent field that does not extend the earlier one replaces it: each with a
    warning."""
    if type(value) is not dict:
        if value is not None:
            warnings.append(f"candidate {key!r} is not an object: ignored")
        return earlier
    if earlier is None:
        return value
    merged = dict(earlier)
    for field, new in value.items():
        old = merged.get(field)
        if old is None or old == new:  # absent or null before: this chunk brings it
            merged[field] = new
        elif new is None or new == []:
            continue  # a chunk that re-sends nothing keeps what came before
        else:
            if type(old) is not list or type(new) is not list or new[: len(old)] != old:
                warnings.append(
                    f"{key}.{field} re-sent with a value that does not extend the earlier "
                    "one: the later one is kept"
                )
            merged[field] = new
    return merged


# -- parts: code execution and server-side tool invocations ------------------------------


def _id(obj: Any) -> str | None:
    value = obj.get("id") if type(obj) is dict else None
    return value if type(value) is str and value else None


def _str(obj: Any, key: str) -> str | None:
    value = obj.get(key) if type(obj) is dict else None
    return value if type(value) is str else None


class _Pairs:
    """Hosted calls found in the parts, each waiting for its result part."""

    __slots__ = ("_open", "calls", "warnings")

    def __init__(self, warnings: Warnings) -> None:
        self.calls: list[list[Any]] = []  # [tool, id, status, call_part, result_part]
        self._open: dict[tuple[str, str | None], list[list[Any]]] = {}
        self.warnings = warnings

    def call(self, family: str, tool: str, call_id: str | None, part: dict[str, Any]) -> None:
        entry = [tool, call_id, None, part, None]
        self.calls.append(entry)
        self._open.setdefault((family, call_id), []).append(entry)

    def result(
        self, family: str, tool: str, call_id: str | None, status: str | None, part: dict[str, Any]
    ) -> list[Any]:
        waiting = self._open.get((family, call_id), [])
        named = "without an id" if call_id is None else f"with id {call_id!r}"
        if not waiting:
            self.warnings.append(f"a {family} result {named} answers no earlier call")
            entry = [tool, call_id, status, None, part]
            self.calls.append(entry)
            return entry
        if len(waiting) > 1:
            self.warnings.append(
                f"a {family} result {named} could answer {len(waiting)} earlier calls: "
                "it answers the first"
            )
        entry = waiting.pop(0)
        entry[2], entry[4] = status, part
        return entry


def _parts_calls(parts: tuple[dict[str, Any], ...], warnings: Warnings) -> list[HostedCall]:
    pairs = _Pairs(warnings)
    for part in parts:
        if "executableCode" in part:
            pairs.call("executableCode", "codeExecution", _id(part["executableCode"]), part)
        elif "codeExecutionResult" in part:
            result = part["codeExecutionResult"]
            outcome = _str(result, "outcome")
            pairs.result("executableCode", "codeExecution", _id(result), outcome, part)
        elif "toolCall" in part:
            call = part["toolCall"]
            tool = _str(call, "toolType") or "toolCall"
            pairs.call("toolCall", tool, _id(call), part)
        elif "toolResponse" in part:
            response = part["toolResponse"]
            kind = _str(response, "toolType")
            entry = pairs.result("toolCall", kind or "toolCall", _id(response), None, part)
            if kind is not None and entry[0] not in (kind, "toolCall"):
                warnings.append(f"toolResponse {kind} answers a {entry[0]} toolCall")
    return [
        HostedCall(tool=tool, id=call_id, status=status, raw=(call, result))
        for tool, call_id, status, call, result in pairs.calls
    ]


# -- candidate metadata: grounding and URL context ---------------------------------------


def _list(obj: dict[str, Any], key: str, warnings: Warnings, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if type(value) is not list:
        warnings.append(f"{where}.{key} is not a list: ignored")
        return []
    return value


def _chunk_kind(chunk: Any) -> tuple[str, str | None]:
    """(kind, source) of one grounding chunk: its known kind and URI, else its own key."""
    if type(chunk) is not dict:
        return "groundingChunk", None
    kinds = [k for k in chunk if k in _CHUNK_KINDS]
    if not kinds:
        return (next(iter(chunk)) if len(chunk) == 1 else "groundingChunk"), None
    kind = kinds[0]
    return kind, _str(chunk[kind], _CHUNK_KINDS[kind])


def _index(segment: dict[str, Any], key: str) -> int | None:
    value = segment.get(key, 0)  # proto3 JSON omits zero
    return value if type(value) is int and value >= 0 else None


def _cited(part: dict[str, Any], start: int, end: int) -> str | None:
    """The text ``part`` holds at UTF-8 bytes ``[start, end)``, or ``None``."""
    text = part.get("text")
    if type(text) is not str:
        return None
    data = text.encode("utf-8", "surrogatepass")
    if not start <= end <= len(data):
        return None
    try:
        return data[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _segment(
    support: dict[str, Any], n: int, parts: tuple[dict[str, Any], ...], warnings: Warnings
) -> tuple[int | None, int | None]:
    """The support's byte range in the text part it resolves to (see the module
    docstring), or ``(None, None)`` with a warning."""
    where = f"groundingSupports[{n}]"
    segment = support.get("segment")
    if type(segment) is not dict:
        warnings.append(f"{where} has no segment object: no offsets")
        return None, None
    index, start, end = _index(segment, "partIndex"), _index(segment, "startIndex"), None
    if "endIndex" in segment:
        end = _index(segment, "endIndex")
    if index is None or start is None or end is None:
        warnings.append(f"{where} segment lacks an integer partIndex/startIndex/endIndex >= 0")
        return None, None
    text = segment.get("text")
    want = text if type(text) is str else None
    named = _cited(parts[index], start, end) if index < len(parts) else None
    if named is not None and want in (None, named):
        return start, end
    others = (
        [p for p, part in enumerate(parts) if p != index and _cited(part, start, end) == want]
        if want is not None
        else []
    )
    if len(others) == 1:
        warnings.append(f"{where} names part {index}; its text is in part {others[0]}")
        return start, end
    if index >= len(parts) or type(parts[index].get("text")) is not str:
        problem = "is no text part"
    elif named is None:
        problem = f"holds no whole UTF-8 text at bytes [{start}, {end})"
    else:
        problem = "does not hold the segment's text"
    warnings.append(f"{where}: part {index} {problem}: no offsets")
    return None, None


def _citations(
    grounding: dict[str, Any], parts: tuple[dict[str, Any], ...], limits: Limits, warnings: Warnings
) -> tuple[list[tuple[str, str | None]], list[Citation]]:
    chunks = [_chunk_kind(c) for c in _list(grounding, "groundingChunks", warnings, GROUNDING)]
    citations: list[Citation] = []
    bound = limits.max_items_per_turn
    for n, support in enumerate(_list(grounding, "groundingSupports", warnings, GROUNDING)):
        if type(support) is not dict:
            warnings.append(f"groundingSupports[{n}] is not an object: skipped")
            continue
        start, end = _segment(support, n, parts, warnings)
        indices = _list(support, "groundingChunkIndices", warnings, f"groundingSupports[{n}]")
        scores = support.get("confidenceScores")
        if type(scores) is list and len(scores) != len(indices):
            warnings.append(f"groundingSupports[{n}]: confidenceScores and chunk indices differ")
        for index in indices:
            if type(index) is not int or not 0 <= index < len(chunks):
                warnings.append(
                    f"groundingSupports[{n}] names chunk {index!r} of {len(chunks)}: skipped"
                )
                continue
            if len(citations) >= bound:
                warnings.append(
                    f"more than {bound} citations (max_items_per_turn): the rest skipped"
                )
                return chunks, citations
            kind, source = chunks[index]
            citations.append(Citation(kind=kind, source=source, start=start, end=end, raw=support))
    return chunks, citations


def _grounding_calls(
    grounding: dict[str, Any], kinds: list[tuple[str, str | None]], warnings: Warnings
) -> list[HostedCall]:
    calls = []
    for query in _list(grounding, "webSearchQueries", warnings, GROUNDING):
        if type(query) is str:
            calls.append(HostedCall(tool="googleSearch", id=None, status=None, raw=query))
        else:
            warnings.append("webSearchQueries holds a non-string: skipped")
    chunks = _list(grounding, "groundingChunks", [], GROUNDING)  # warned by _citations
    retrieved = tuple(
        c for c, (kind, _) in zip(chunks, kinds, strict=True) if kind == "retrievedContext"
    )
    if retrieved:
        calls.append(HostedCall(tool="fileSearch", id=None, status=None, raw=retrieved))
    return calls


def _url_calls(metadata: dict[str, Any], warnings: Warnings) -> list[HostedCall]:
    calls = []
    for entry in _list(metadata, "urlMetadata", warnings, URL_CONTEXT):
        if type(entry) is not dict:
            warnings.append("a urlMetadata entry is not an object: skipped")
            continue
        status = _str(entry, "urlRetrievalStatus")
        calls.append(HostedCall(tool="urlContext", id=None, status=status, raw=entry))
    return calls


def project(
    parts: tuple[dict[str, Any], ...], candidate: dict[str, Any], limits: Limits
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...], tuple[str, ...]]:
    """``(hosted_calls, citations, warnings)`` of a turn's parts and candidate fields (see
    the module docstring). Never raises."""
    warnings: Warnings = []
    calls = _parts_calls(parts, warnings)
    citations: list[Citation] = []
    grounding = candidate.get(GROUNDING)
    if type(grounding) is dict:
        kinds, citations = _citations(grounding, parts, limits, warnings)
        calls += _grounding_calls(grounding, kinds, warnings)
    url_context = candidate.get(URL_CONTEXT)
    if type(url_context) is dict:
        calls += _url_calls(url_context, warnings)
    return tuple(calls), tuple(citations), tuple(warnings)
