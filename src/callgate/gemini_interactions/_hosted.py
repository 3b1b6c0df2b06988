"""Hosted (server-run) steps and text annotations -> ``turn.hosted_calls`` / ``turn.citations``.

Facts (``contracts/gemini.md`` §10, the ``_gaos/types/interactions`` models of google-genai
3.6.1 and 2.12.1):

- A hosted tool runs as a call step and a result step (``google_search_call`` then
  ``google_search_result``...), linked by the result's ``call_id`` == the call's ``id``. The
  server runs them; they never put the Interaction into ``requires_action`` and are never
  answered by the client. One :class:`~callgate.HostedCall` per call step: ``tool`` is the
  call type without ``_call`` (``google_search``, ``code_execution``, ``url_context``,
  ``file_search``, ``google_maps``, ``mcp_server_tool``, ``retrieval``, ``tool_search``,
  ``processing``), ``id`` the call's ``id``, ``status`` derived from the wire only
  (``"completed"`` once its result step arrived, ``"failed"`` when that result says
  ``is_error: true``, ``None`` when the turn holds no result), ``raw`` ``{"call": <call
  step>, "result": <result step or None>}`` with both steps exactly as received.
- Pairing is strict: a duplicate call id, a result before (or without) its call, a second
  result, or a result of another tool's type is a :class:`~callgate.SequenceError`.
- Citations are the ``annotations`` of a ``model_output`` text block (streamed as
  ``text_annotation_delta``). ``start_index``/``end_index`` are UTF-8 **byte** offsets into
  that block's ``text``, end exclusive; they are kept exactly (``Citation.start``/``end``)
  and must lie inside the text (else :class:`~callgate.SchemaError`). ``url_citation``,
  ``file_citation`` and ``place_citation`` become citations (``source``: the ``url``; the
  ``document_uri``, else ``file_name``, else ``source``; the ``url``, else ``place_id``).
  The 2026-11 baseline's ``speech_metadata`` and ``word_info`` annotations describe speech,
  not a source: they stay in the step and are not citations. An annotation type unknown to
  the baseline is :class:`~callgate.UnsupportedProviderState`.

Streamed completeness (what lets the stateless builder replay a streamed hosted step): the
payload of a hosted step comes either in ``step.start`` or in one delta of the step's own
type. A delta field is *pinned* when the step model declares a field of the same name
(:data:`PINNED`); merging pinned fields reproduces the step exactly. A delta field without
a place on the step (``file_search_result.result``: the step declares no ``result``), an
undeclared field, or two deltas setting one field differently leave the step *opaque*
with the reason; a delta that renames the step's id, or a non-empty start value
contradicted by a delta, is a SequenceError.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._errors import SchemaError, SequenceError, UnsupportedProviderState
from .._hosted import Citation, HostedCall
from ..contracts import REVISIONS
from ._events import HOSTED_STEPS

__all__ = [
    "DELTA_FIELDS",
    "PAIRS",
    "PINNED",
    "STEP_FIELDS",
    "Pairing",
    "check_annotations",
    "check_hosted_fields",
    "merge_delta",
    "project",
    "tool_of",
]

_OLD, _CURRENT = REVISIONS

#: Hosted call step type -> its result step type.
PAIRS: Mapping[str, str] = MappingProxyType(
    {call: call[: -len("_call")] + "_result" for call in HOSTED_STEPS if call.endswith("_call")}
)
_CALL_OF: Mapping[str, str] = MappingProxyType({result: call for call, result in PAIRS.items()})

_SIG = ("signature",)
# Payload fields the SDK's step models declare (identity keys excluded) ...
_STEP_FIELDS: dict[str, tuple[str, ...]] = {
    "code_execution_call": ("arguments", *_SIG),
    "code_execution_result": ("result", "is_error", *_SIG),
    "url_context_call": ("arguments", *_SIG),
    "url_context_result": ("result", "is_error", *_SIG),
    "google_search_call": ("arguments", "search_type", *_SIG),
    "google_search_result": ("result", "is_error", *_SIG),
    "file_search_call": _SIG,
    "file_search_result": _SIG,
    "google_maps_call": ("arguments", *_SIG),
    "google_maps_result": ("result", *_SIG),
    "mcp_server_tool_call": ("name", "server_name", "arguments"),
    "mcp_server_tool_result": ("result", "name", "server_name"),
    "retrieval_call": ("arguments", "retrieval_type", *_SIG),
    "retrieval_result": ("is_error", *_SIG),
    "tool_search_call": ("arguments", *_SIG),
    "tool_search_result": ("result", *_SIG),
    "processing_call": _SIG,
    "processing_result": _SIG,
}
# ... and the fields their delta models declare (``StepDeltaData`` variants).
_DELTA_FIELDS: dict[str, tuple[str, ...]] = {
    **_STEP_FIELDS,
    "google_search_call": ("arguments", *_SIG),
    "file_search_result": ("result", *_SIG),
}
#: The SDK-declared fields of each step and delta model (tests compare them with the SDK).
STEP_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {k: frozenset(v) for k, v in _STEP_FIELDS.items()}
)
DELTA_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {k: frozenset(v) for k, v in _DELTA_FIELDS.items()}
)
#: Delta fields with a place on the step: merging them reproduces the step exactly.
PINNED: Mapping[str, frozenset[str]] = MappingProxyType(
    {k: DELTA_FIELDS[k] & STEP_FIELDS[k] for k in _STEP_FIELDS}
)

_SCALARS: dict[str, type] = {
    "signature": str,
    "is_error": bool,
    "name": str,
    "server_name": str,
    "search_type": str,
    "retrieval_type": str,
}
_LIST_RESULTS = frozenset(
    {
        "google_search_result",
        "url_context_result",
        "google_maps_result",
        "tool_search_result",
        "file_search_result",
    }
)
_EMPTY: tuple[Any, ...] = (None, {}, [], "")

_CITATION_SOURCE: dict[str, tuple[str, ...]] = {
    "url_citation": ("url",),
    "file_citation": ("document_uri", "file_name", "source"),
    "place_citation": ("url", "place_id"),
}
_ANNOTATIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        _OLD: frozenset(_CITATION_SOURCE),
        _CURRENT: frozenset(_CITATION_SOURCE) | {"speech_metadata", "word_info"},
    }
)


def tool_of(call_kind: str) -> str:
    """The ``HostedCall.tool`` of a hosted call step type."""
    return call_kind[: -len("_call")]


# -- field checks ---------------------------------------------------------------------


def _check_value(kind: str, key: str, value: Any, baseline: str) -> None:
    expected = _SCALARS.get(key)
    if expected is not None:
        if type(value) is not expected:
            raise SchemaError(f"{kind} {key!r} must be a {expected.__name__}", wire_type=kind)
    elif key == "arguments":
        if type(value) is not dict:
            raise SchemaError(f"{kind} 'arguments' must be a JSON object", wire_type=kind)
        if kind == "code_execution_call":
            _check_language(value.get("language"), baseline)
    elif key == "result":
        if kind in _LIST_RESULTS and type(value) is not list:
            raise SchemaError(f"{kind} 'result' must be a list", wire_type=kind)
        # 2.12.1 types it str; 3.6.1 str | list[Content] (contracts/gemini.md §10.6).
        if (
            kind == "code_execution_result"
            and type(value) is not str
            and (baseline == _OLD or type(value) is not list)
        ):
            raise SchemaError(
                f"code_execution_result 'result' must be a string under {baseline}"
                + ("" if baseline == _OLD else " or a list of content"),
                wire_type=kind,
            )


def _check_language(language: Any, baseline: str) -> None:
    if language is None:
        return
    if type(language) is not str:
        raise SchemaError("code_execution_call language must be a string")
    if baseline == _OLD and language != "python":
        raise UnsupportedProviderState(
            f"code_execution_call language {language!r} is unknown to contract revision "
            f"{baseline} (its SDK types it 'python' only)",
            wire_type="code_execution_call",
        )


def check_hosted_fields(step: dict[str, Any], kind: str, baseline: str) -> None:
    """Type-check a hosted step's payload fields and a ``model_output``'s annotations.

    Raises SchemaError / UnsupportedProviderState as described in the module docstring.
    """
    if kind in _STEP_FIELDS:
        for key in _STEP_FIELDS[kind]:
            value = step.get(key)
            if value is not None:
                _check_value(kind, key, value, baseline)
        if kind == "file_search_result" and "result" in step:
            _check_value(kind, "result", step["result"], baseline)
    elif kind == "model_output":
        content = step.get("content")
        if type(content) is not list:
            return
        for block in content:
            if type(block) is dict and block.get("type") == "text" and "annotations" in block:
                text = block.get("text")
                if type(text) is not str:
                    raise SchemaError("an annotated text block needs a string 'text'")
                check_annotations(block["annotations"], text, baseline, with_offsets=True)


def check_annotations(annotations: Any, text: str, baseline: str, *, with_offsets: bool) -> None:
    """Check annotation objects (types, sources) and, ``with_offsets``, their byte offsets
    against ``text`` (they must satisfy ``0 <= start <= end <= len(utf8(text))``)."""
    if type(annotations) is not list:
        raise SchemaError("text 'annotations' must be a list")
    size = len(text.encode("utf-8", "surrogatepass")) if with_offsets else 0
    known = _ANNOTATIONS[baseline]
    for annotation in annotations:
        if type(annotation) is not dict or type(annotation.get("type")) is not str:
            raise SchemaError("an annotation must be an object with a string 'type'")
        kind = annotation["type"]
        if kind not in known:
            raise UnsupportedProviderState(
                f"annotation type {kind!r} is unknown to contract revision {baseline}",
                wire_type=kind,
            )
        for key in _CITATION_SOURCE.get(kind, ()):
            if key in annotation and type(annotation[key]) is not str:
                raise SchemaError(f"{kind} {key!r} must be a string", wire_type=kind)
        start, end = annotation.get("start_index"), annotation.get("end_index")
        for name, value in (("start_index", start), ("end_index", end)):
            if value is not None and type(value) is not int:
                raise SchemaError(f"{kind} {name!r} must be an integer", wire_type=kind)
        if not with_offsets:
            continue
        low = 0 if start is None else start
        high = size if end is None else end
        if not 0 <= low <= high <= size:
            raise SchemaError(
                f"{kind} byte range [{start}, {end}) lies outside its text of {size} bytes",
                wire_type=kind,
            )


# -- streamed deltas ------------------------------------------------------------------


def merge_delta(
    step: dict[str, Any], kind: str, delta: dict[str, Any], merged: set[str], baseline: str
) -> str | None:
    """Merge one hosted delta of the step's own type into ``step`` (in place).

    ``merged`` is the set of fields earlier deltas set (updated). Returns why the step is
    no longer provably complete, or ``None``. Raises SchemaError for a field of the wrong
    type, SequenceError for a renamed id or a contradicted ``step.start`` value.
    """
    why: str | None = None
    pinned = PINNED[kind]
    for key, value in delta.items():
        if key == "type":
            continue
        if key in ("id", "call_id"):
            if value != step.get(key):
                raise SequenceError(f"a {kind} delta names another {key} {value!r}")
            continue
        if key in DELTA_FIELDS[kind]:
            _check_value(kind, key, value, baseline)
        if key not in pinned:
            why = why or f"{kind} delta field {key!r} has no pinned place on the step"
        elif key in merged:
            if step.get(key) != value:
                why = why or f"two {kind} deltas set {key!r}: how they combine is not pinned"
            if type(value) is list and type(step.get(key)) is list:
                value = step[key] + value  # nothing lost; the step is opaque anyway
        elif step.get(key) not in _EMPTY and step.get(key) != value:
            raise SequenceError(
                f"{kind} has {key!r} in step.start and a different one in a delta: conflict",
                wire_type=kind,
            )
        step[key] = value
        merged.add(key)
    return why


# -- pairing --------------------------------------------------------------------------


class Pairing:
    """Hosted call ids seen so far, and which have their result (one turn or history)."""

    __slots__ = ("answered", "calls")

    def __init__(self) -> None:
        self.calls: dict[str, str] = {}
        self.answered: set[str] = set()

    def see(self, step: dict[str, Any], kind: str) -> None:
        """Record one validated step (any type); raises SequenceError on a broken pair."""
        if kind in PAIRS:
            call_id = step["id"]
            if call_id in self.calls:
                raise SequenceError(f"duplicate hosted call id {call_id!r}", wire_type=kind)
            self.calls[call_id] = kind
            return
        call = _CALL_OF.get(kind)
        if call is None:
            return
        call_id = step["call_id"]
        seen = self.calls.get(call_id)
        if seen is None:
            raise SequenceError(
                f"{kind} {call_id!r} answers no earlier {call} step", wire_type=kind
            )
        if seen != call:
            raise SequenceError(
                f"{kind} {call_id!r} answers a {seen} step (another tool)", wire_type=kind
            )
        if call_id in self.answered:
            raise SequenceError(f"a second {kind} for {call_id!r}", wire_type=kind)
        self.answered.add(call_id)


# -- projection -----------------------------------------------------------------------


def project(
    steps: tuple[dict[str, Any], ...],
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...]]:
    """The hosted calls and citations of validated ``steps`` (never raises: a partial
    turn's steps are projected as far as they go)."""
    results: dict[Any, dict[str, Any]] = {}
    for step in steps:
        if step.get("type") in _CALL_OF:
            results.setdefault(step.get("call_id"), step)
    calls: list[HostedCall] = []
    citations: list[Citation] = []
    for step in steps:
        kind = step.get("type")
        if type(kind) is not str:
            continue
        if kind in PAIRS:
            result = results.get(step.get("id"))
            if result is not None and result.get("type") != PAIRS[kind]:
                result = None
            status = None
            if result is not None:
                status = "failed" if result.get("is_error") is True else "completed"
            ident = step.get("id")
            calls.append(
                HostedCall(
                    tool=tool_of(kind),
                    id=ident if type(ident) is str else None,
                    status=status,
                    raw={"call": step, "result": result},
                )
            )
        elif kind == "model_output":
            citations.extend(_citations(step.get("content")))
    return tuple(calls), tuple(citations)


def _citations(content: Any) -> list[Citation]:
    found: list[Citation] = []
    if type(content) is not list:
        return found
    for block in content:
        if type(block) is not dict or block.get("type") != "text":
            continue
        annotations = block.get("annotations")
        if type(annotations) is not list:
            continue
        for annotation in annotations:
            kind = annotation.get("type") if type(annotation) is dict else None
            if type(kind) is not str or kind not in _CITATION_SOURCE:
                continue
            keys = _CITATION_SOURCE[kind]
            source = next((annotation[k] for k in keys if type(annotation.get(k)) is str), None)
            start, end = annotation.get("start_index"), annotation.get("end_index")
            found.append(
                Citation(
                    kind=kind,
                    source=source,
                    start=start if type(start) is int else None,
                    end=end if type(end) is int else None,
                    raw=annotation,
                )
            )
    return found
