"""Hosted-tool projection of a generateContent turn: ``turn.hosted_calls`` and ``turn.citations``.

The Developer API runs ``googleSearch``, ``fileSearch``, ``codeExecution`` and
``urlContext`` itself, inside one request (``contracts/gemini-generate-content.md`` §9). Their
traces, and what callgate makes of them (never an executable call):

- ``executableCode`` part -> ``HostedCall(tool="codeExecution", id=<part id>, status=<the
  matching codeExecutionResult's outcome, None if none followed>, raw=(code_part,
  result_part | None))``. A result pairs with the unanswered code part of the same ``id``
  (the SDK: the result's ``id`` is "only populated if the corresponding ExecutableCode has
  an id"); a result that answers no earlier code part, or that could answer two, is a
  :class:`~callgate.SequenceError`.
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

A support whose ``partIndex`` is not a text part of the turn, whose byte range falls outside
that text or off a UTF-8 boundary, whose ``segment.text`` differs from the bytes it names, or
whose chunk index is outside ``groundingChunks`` is a :class:`~callgate.SchemaError`.

The streaming rule (:func:`merge_metadata`, pinned here because neither the SDK nor the
docs pin it): ``groundingMetadata`` and ``urlContextMetadata`` may arrive on any chunk; each
field re-sent on a later chunk must *extend* what came before (a list must start with the
earlier list, anything else must be equal), so the turn holds the accumulated value, as the
server resends it (langchainjs#11456), whether it arrives once on the last chunk (the
common case, pipecat#1030), early (vercel/ai#13123) or field by field (promptfoo#9436). A
re-sent field that does not extend the earlier one would be incremental delivery, whose
index semantics nobody pins: :class:`~callgate.UnsupportedProviderState`. ``partIndex``
counts the turn's parts as :class:`Turn` coalesces them, so a stream and the body of the
same turn give equal projections (the SDK treats indices as relative to the Content they
arrive with, and shifts them when it concatenates Contents:
``_extra_utils._shift_candidate_grounding_supports``).
"""

from __future__ import annotations

from typing import Any

from .._errors import SchemaError, SequenceError, UnsupportedProviderState
from .._fields import need_str, opt, opt_str
from .._hosted import Citation, HostedCall
from .._limits import Limits, room_for_one_more

__all__ = ["METADATA_KEYS", "merge_metadata", "project"]

GROUNDING = "groundingMetadata"
URL_CONTEXT = "urlContextMetadata"
METADATA_KEYS = (GROUNDING, URL_CONTEXT)

_LANGUAGES = frozenset({"LANGUAGE_UNSPECIFIED", "PYTHON"})  # types.Language, both baselines
_OUTCOMES = frozenset(
    {"OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"}
)
_TOOL_TYPES_OLD = (
    "TOOL_TYPE_UNSPECIFIED",
    "GOOGLE_SEARCH_WEB",
    "GOOGLE_SEARCH_IMAGE",
    "URL_CONTEXT",
    "GOOGLE_MAPS",
    "FILE_SEARCH",
)
TOOL_TYPES = {
    "2026-07-21": frozenset(_TOOL_TYPES_OLD),
    "2026-11": frozenset((*_TOOL_TYPES_OLD, "MEDIA_PROCESSING")),
}
_URL_STATUSES = frozenset(
    f"URL_RETRIEVAL_STATUS_{s}" for s in ("UNSPECIFIED", "SUCCESS", "ERROR", "PAYWALL", "UNSAFE")
)
#: groundingChunk kind -> the field holding its URI.
_CHUNK_KINDS = {"web": "uri", "retrievedContext": "uri", "image": "sourceUri", "maps": "uri"}


# -- the streaming rule -----------------------------------------------------------------


def merge_metadata(key: str, earlier: dict[str, Any] | None, value: Any) -> dict[str, Any]:
    """``value`` (one chunk's ``groundingMetadata``/``urlContextMetadata``) merged into what
    earlier chunks sent, under the module's cumulative rule."""
    if type(value) is not dict:
        raise SchemaError(f"candidate {key!r} must be an object")
    if earlier is None:
        return value
    merged = dict(earlier)
    for field, new in value.items():
        old = merged.get(field)
        if old is None or old == new:  # absent or null before: this chunk brings it
            merged[field] = new
        elif new is None or new == []:
            continue  # a chunk that re-sends nothing keeps what came before
        elif type(old) is list and type(new) is list:
            if new[: len(old)] != old:
                raise UnsupportedProviderState(
                    f"{key}.{field} re-sent with a value that does not extend the earlier "
                    "one: only cumulative re-sending is pinned"
                )
            merged[field] = new
        else:
            raise UnsupportedProviderState(
                f"{key}.{field} re-sent with a different value: only cumulative re-sending "
                "is pinned"
            )
    return merged


# -- parts: code execution and server-side tool invocations ------------------------------


def _opt_id(obj: dict[str, Any], where: str) -> str | None:
    value = opt_str(obj, "id", where)
    if value == "":
        raise SchemaError(f"{where} 'id' must not be empty")
    return value


def _code(part: dict[str, Any]) -> str | None:
    code = part["executableCode"]
    need_str(code, "code", "executableCode")
    language = need_str(code, "language", "executableCode")
    if language not in _LANGUAGES:
        raise UnsupportedProviderState(f"executableCode language {language!r} is unknown")
    return _opt_id(code, "executableCode")


def _result(part: dict[str, Any]) -> tuple[str | None, str]:
    result = part["codeExecutionResult"]
    outcome = need_str(result, "outcome", "codeExecutionResult")
    if outcome not in _OUTCOMES:
        raise UnsupportedProviderState(f"codeExecutionResult outcome {outcome!r} is unknown")
    opt_str(result, "output", "codeExecutionResult")
    return _opt_id(result, "codeExecutionResult"), outcome


def _tool_type(obj: dict[str, Any], where: str, baseline: str) -> str | None:
    kind = opt_str(obj, "toolType", where)
    if kind is not None and kind not in TOOL_TYPES[baseline]:
        raise UnsupportedProviderState(f"{where} toolType {kind!r} is unknown to {baseline}")
    return kind


class _Pairs:
    """Hosted calls found in the parts, each waiting for its result part."""

    __slots__ = ("_open", "calls")

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []  # [tool, id, status, call_part, result_part]
        self._open: dict[tuple[str, str | None], list[list[Any]]] = {}

    def call(self, family: str, tool: str, call_id: str | None, part: dict[str, Any]) -> None:
        waiting = self._open.setdefault((family, call_id), [])
        if call_id is not None and waiting:
            raise SequenceError(f"two unanswered {family} parts with the id {call_id!r}")
        entry = [tool, call_id, None, part, None]
        self.calls.append(entry)
        waiting.append(entry)

    def result(
        self, family: str, call_id: str | None, status: str | None, part: dict[str, Any]
    ) -> list[Any]:
        waiting = self._open.get((family, call_id), [])
        named = "without an id" if call_id is None else f"with id {call_id!r}"
        if not waiting:
            raise SequenceError(f"a {family} result {named} answers no earlier call")
        if len(waiting) > 1:  # only id-less calls can wait together
            raise SequenceError(
                f"a {family} result {named} could answer {len(waiting)} earlier calls"
            )
        entry = waiting.pop()
        entry[2], entry[4] = status, part
        return entry


def _parts_calls(parts: tuple[dict[str, Any], ...], baseline: str) -> list[HostedCall]:
    pairs = _Pairs()
    for part in parts:
        if "executableCode" in part:
            pairs.call("executableCode", "codeExecution", _code(part), part)
        elif "codeExecutionResult" in part:
            result_id, outcome = _result(part)
            pairs.result("executableCode", result_id, outcome, part)
        elif "toolCall" in part:
            call = part["toolCall"]
            call_id = _opt_id(call, "toolCall")
            opt(call, "args", (dict,), "toolCall")
            tool = _tool_type(call, "toolCall", baseline) or "toolCall"
            pairs.call("toolCall", tool, call_id, part)
        elif "toolResponse" in part:
            response = part["toolResponse"]
            opt(response, "response", (dict,), "toolResponse")
            kind = _tool_type(response, "toolResponse", baseline)
            entry = pairs.result("toolCall", _opt_id(response, "toolResponse"), None, part)
            if kind is not None and entry[0] not in (kind, "toolCall"):
                raise SequenceError(f"toolResponse {kind} answers a {entry[0]} toolCall")
    return [
        HostedCall(tool=tool, id=call_id, status=status, raw=(call, result))
        for tool, call_id, status, call, result in pairs.calls
    ]


# -- candidate metadata: grounding and URL context ---------------------------------------


def _list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    value = opt(obj, key, (list,), where)
    return value if value is not None else []


def _chunk_kind(chunk: Any, position: int) -> tuple[str, str | None]:
    where = f"groundingChunks[{position}]"
    if type(chunk) is not dict:
        raise SchemaError(f"{where} must be an object")
    kinds = [k for k in chunk if k in _CHUNK_KINDS]
    if len(kinds) != 1:
        unknown = sorted(chunk)
        if not kinds:
            raise UnsupportedProviderState(f"{where} has no known kind (fields {unknown})")
        raise SchemaError(f"{where} holds {len(kinds)} kinds {kinds}")
    kind = kinds[0]
    body = chunk[kind]
    if type(body) is not dict:
        raise SchemaError(f"{where}.{kind} must be an object")
    return kind, opt_str(body, _CHUNK_KINDS[kind], f"{where}.{kind}")


def _index(segment: dict[str, Any], key: str) -> int:
    value = segment.get(key, 0)  # proto3 JSON omits zero
    if type(value) is not int or value < 0:
        raise SchemaError(f"grounding segment {key!r} must be an integer >= 0")
    return value


def _segment(support: dict[str, Any], parts: tuple[dict[str, Any], ...]) -> tuple[int, int]:
    segment = support.get("segment")
    if type(segment) is not dict:
        raise SchemaError("a groundingSupport lacks its 'segment' object")
    index, start = _index(segment, "partIndex"), _index(segment, "startIndex")
    if "endIndex" not in segment:
        raise SchemaError("a grounding segment lacks 'endIndex'")
    end = _index(segment, "endIndex")
    if index >= len(parts) or type(parts[index].get("text")) is not str:
        raise SchemaError(f"a grounding segment points at part {index}, which is no text part")
    data = parts[index]["text"].encode("utf-8")
    if not start <= end <= len(data):
        raise SchemaError(
            f"a grounding segment [{start}, {end}) lies outside part {index} ({len(data)} bytes)"
        )
    try:
        cited = data[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise SchemaError("a grounding segment does not fall on UTF-8 boundaries") from None
    text = opt_str(segment, "text", "grounding segment")
    if text is not None and text != cited:
        raise SchemaError(f"a grounding segment's text differs from bytes [{start}, {end})")
    return start, end


def _citations(
    grounding: dict[str, Any], parts: tuple[dict[str, Any], ...], limits: Limits
) -> tuple[list[tuple[str, str | None]], list[Citation]]:
    chunks = [
        _chunk_kind(c, n) for n, c in enumerate(_list(grounding, "groundingChunks", GROUNDING))
    ]
    citations: list[Citation] = []
    for support in _list(grounding, "groundingSupports", GROUNDING):
        if type(support) is not dict:
            raise SchemaError("a groundingSupport must be an object")
        start, end = _segment(support, parts)
        indices = _list(support, "groundingChunkIndices", "groundingSupport")
        scores = opt(support, "confidenceScores", (list,), "groundingSupport")
        if scores is not None and len(scores) != len(indices):
            raise SchemaError("confidenceScores and groundingChunkIndices differ in length")
        for index in indices:
            if type(index) is not int or not 0 <= index < len(chunks):
                raise SchemaError(
                    f"groundingChunkIndices entry {index!r} is outside the {len(chunks)} chunk(s)"
                )
            room_for_one_more(len(citations), limits, "citations in one turn")
            kind, source = chunks[index]
            citations.append(Citation(kind=kind, source=source, start=start, end=end, raw=support))
    return chunks, citations


def _grounding_calls(
    grounding: dict[str, Any], kinds: list[tuple[str, str | None]]
) -> list[HostedCall]:
    calls = []
    for query in _list(grounding, "webSearchQueries", GROUNDING):
        if type(query) is not str:
            raise SchemaError("webSearchQueries holds a non-string")
        calls.append(HostedCall(tool="googleSearch", id=None, status=None, raw=query))
    entry = opt(grounding, "searchEntryPoint", (dict,), GROUNDING)
    if entry is not None:
        opt_str(entry, "renderedContent", "searchEntryPoint")  # shown unmodified: kept raw
    chunks = _list(grounding, "groundingChunks", GROUNDING)
    retrieved = tuple(
        c for c, (kind, _) in zip(chunks, kinds, strict=True) if kind == "retrievedContext"
    )
    if retrieved:
        calls.append(HostedCall(tool="fileSearch", id=None, status=None, raw=retrieved))
    return calls


def _url_calls(metadata: Any) -> list[HostedCall]:
    if type(metadata) is not dict:
        raise SchemaError(f"candidate {URL_CONTEXT!r} must be an object")
    calls = []
    for entry in _list(metadata, "urlMetadata", URL_CONTEXT):
        if type(entry) is not dict:
            raise SchemaError("a urlMetadata entry must be an object")
        opt_str(entry, "retrievedUrl", "urlMetadata")
        status = opt_str(entry, "urlRetrievalStatus", "urlMetadata")
        if status is not None and status not in _URL_STATUSES:
            raise UnsupportedProviderState(f"urlRetrievalStatus {status!r} is unknown")
        calls.append(HostedCall(tool="urlContext", id=None, status=status, raw=entry))
    return calls


def project(
    parts: tuple[dict[str, Any], ...], candidate: dict[str, Any], baseline: str, limits: Limits
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...]]:
    """``(hosted_calls, citations)`` of a turn's parts and candidate fields (see the module
    docstring); raises SchemaError / SequenceError / UnsupportedProviderState."""
    calls = _parts_calls(parts, baseline)
    citations: list[Citation] = []
    grounding = candidate.get(GROUNDING)
    if grounding is not None:
        if type(grounding) is not dict:
            raise SchemaError(f"candidate {GROUNDING!r} must be an object")
        kinds, citations = _citations(grounding, parts, limits)
        calls += _grounding_calls(grounding, kinds)
    url_context = candidate.get(URL_CONTEXT)
    if url_context is not None:
        calls += _url_calls(url_context)
    return tuple(calls), tuple(citations)
