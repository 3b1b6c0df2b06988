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
- All of it is telemetry (docs/required-fields.md): nothing about a hosted step or a
  citation refuses a turn. Pairing problems (a duplicate call id, a result before or
  without its call, a second result, a result of another tool's type) and payload fields of
  another type than the SDK declares are ``turn.warnings`` entries; the steps stay raw.
  (The continuation builder checks a caller's prior steps with the same functions, where
  the same problems are errors: there they are the caller's history.)
- Citations are the ``annotations`` of a ``model_output`` text block (streamed as
  ``text_annotation_delta``). ``start_index``/``end_index`` are UTF-8 **byte** offsets into
  that block's ``text``, end exclusive; they are kept exactly (``Citation.start``/``end``)
  when they lie inside the text, else both are ``None`` and a warning says so.
  ``url_citation``, ``file_citation`` and ``place_citation`` become citations (``source``:
  the ``url``; the ``document_uri``, else ``file_name``, else ``source``; the ``url``, else
  ``place_id``). The 2026-11 baseline's ``speech_metadata`` and ``word_info`` annotations
  describe speech, not a source, and an annotation type callgate does not know may not be
  a citation at all: they stay in the step and are not citations.

Streamed completeness (what lets the stateless builder replay a streamed hosted step): the
payload of a hosted step comes either in ``step.start`` or in one delta of the step's own
type. A delta field is *pinned* when the step model declares a field of the same name
(:data:`PINNED`); merging pinned fields reproduces the step exactly. A delta field without
a place on the step (``file_search_result.result``: the step declares no ``result``), an
undeclared field, a field of another type than the delta model declares, two deltas
setting one field differently, a delta that renames the step's id or contradicts a
non-empty start value leave the step *opaque* with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._errors import SchemaError, SequenceError
from .._hosted import Citation, HostedCall
from ._events import HOSTED_STEPS

__all__ = [
    "DELTA_FIELDS",
    "PAIRS",
    "PINNED",
    "STEP_FIELDS",
    "Pairing",
    "check_hosted_fields",
    "merge_delta",
    "project",
    "report",
    "tool_of",
]


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


def tool_of(call_kind: str) -> str:
    """The ``HostedCall.tool`` of a hosted call step type."""
    return call_kind[: -len("_call")]


# -- field checks ---------------------------------------------------------------------


def _problem(kind: str, key: str, value: Any) -> str | None:
    """What is wrong with a hosted payload field's type, or ``None``."""
    expected = _SCALARS.get(key)
    if expected is not None:
        return None if type(value) is expected else f"{kind} {key!r} is not a {expected.__name__}"
    if key == "arguments" and type(value) is not dict:
        return f"{kind} 'arguments' is not a JSON object"
    if key == "result":
        if kind in _LIST_RESULTS and type(value) is not list:
            return f"{kind} 'result' is not a list"
        # 2.12.1 types it str; 3.6.1 str | list[Content] (contracts/gemini.md §10.6).
        if kind == "code_execution_result" and type(value) not in (str, list):
            return f"{kind} 'result' is neither a string nor a list of content"
    return None


def report(problem: str, warnings: list[str] | None, kind: str) -> None:
    """``problem`` appended to ``warnings``; with ``warnings=None`` (the continuation
    builder checking a caller's history) raised as a :class:`SchemaError`."""
    if warnings is None:
        raise SchemaError(problem, wire_type=kind)
    warnings.append(problem)


def check_hosted_fields(step: dict[str, Any], kind: str, warnings: list[str] | None) -> None:
    """Type-check a hosted step's payload fields (those of a step model of the SDK):
    each problem goes to ``warnings`` (see :func:`report`)."""
    for key in _STEP_FIELDS.get(kind, ()):
        value = step.get(key)
        if value is not None or (key == "result" and kind == "file_search_result" and key in step):
            problem = _problem(kind, key, value)
            if problem is not None:
                report(problem, warnings, kind)


# -- streamed deltas ------------------------------------------------------------------


def merge_delta(
    step: dict[str, Any], kind: str, delta: dict[str, Any], merged: set[str]
) -> str | None:
    """Merge one hosted delta of the step's own type into ``step`` (in place).

    ``merged`` is the set of fields earlier deltas set (updated). Returns why the step is
    no longer provably complete, or ``None`` (hosted steps are telemetry: never raises)."""
    why: str | None = None
    pinned = PINNED[kind]
    # Sorted: the first reason must not depend on key order (feed_event's copy sorts keys).
    for key in sorted(delta):
        value = delta[key]
        if key == "type":
            continue
        if key in ("id", "call_id"):
            if value != step.get(key):
                why = why or f"a {kind} delta names another {key} {value!r:.80}"
            continue
        problem = _problem(kind, key, value) if key in DELTA_FIELDS[kind] else None
        if problem is not None:
            why = why or problem
        if key not in pinned:
            why = why or f"{kind} delta field {key!r} has no pinned place on the step"
        elif key in merged:
            if step.get(key) != value:
                why = why or f"two {kind} deltas set {key!r}: how they combine is not pinned"
            if type(value) is list and type(step.get(key)) is list:
                value = step[key] + value  # nothing lost; the step is opaque anyway
        elif step.get(key) not in _EMPTY and step.get(key) != value:
            why = why or f"{kind} has {key!r} in step.start and a different one in a delta"
        step[key] = value
        merged.add(key)
    return why


# -- pairing --------------------------------------------------------------------------


class Pairing:
    """Hosted call ids seen so far, and which have their result (one turn or history).
    A broken pair goes to ``warnings``; with ``warnings=None`` (a caller's history in the
    continuation builder) it is a :class:`SequenceError`."""

    __slots__ = ("answered", "calls", "warnings")

    def __init__(self, warnings: list[str] | None = None) -> None:
        self.calls: dict[str, str] = {}
        self.answered: set[str] = set()
        self.warnings = warnings

    def _broken(self, message: str, kind: str) -> None:
        if self.warnings is None:
            raise SequenceError(message, wire_type=kind)
        self.warnings.append(message)

    def see(self, step: dict[str, Any], kind: str) -> None:
        """Record one validated step (any type)."""
        if kind in PAIRS:
            call_id = step.get("id")
            if type(call_id) is not str:
                return  # check_step reported the missing id
            if call_id in self.calls:
                self._broken(f"duplicate hosted call id {call_id!r}", kind)
            else:
                self.calls[call_id] = kind
            return
        call = _CALL_OF.get(kind)
        if call is None:
            return
        call_id = step.get("call_id")
        seen = self.calls.get(call_id) if type(call_id) is str else None
        if seen is None or type(call_id) is not str:
            self._broken(f"{kind} {call_id!r} answers no earlier {call} step", kind)
        elif seen != call:
            self._broken(f"{kind} {call_id!r} answers a {seen} step (another tool)", kind)
        elif call_id in self.answered:
            self._broken(f"a second {kind} for {call_id!r}", kind)
        else:
            self.answered.add(call_id)


# -- projection -----------------------------------------------------------------------


def project(
    steps: tuple[dict[str, Any], ...],
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...], tuple[str, ...]]:
    """The hosted calls, citations and citation warnings of ``steps`` (never raises: a
    partial turn's steps are projected as far as they go)."""
    results: dict[str, dict[str, Any]] = {}
    for step in steps:
        call_id = step.get("call_id")
        if step.get("type") in _CALL_OF and type(call_id) is str:
            results.setdefault(call_id, step)
    calls: list[HostedCall] = []
    citations: list[Citation] = []
    warnings: list[str] = []
    for position, step in enumerate(steps):
        kind = step.get("type")
        if type(kind) is not str:
            continue
        if kind in PAIRS:
            ident = step.get("id")
            result = results.get(ident) if type(ident) is str else None
            if result is not None and result.get("type") != PAIRS[kind]:
                result = None
            status = None
            if result is not None:
                status = "failed" if result.get("is_error") is True else "completed"
            calls.append(
                HostedCall(
                    tool=tool_of(kind),
                    id=ident if type(ident) is str else None,
                    status=status,
                    raw={"call": step, "result": result},
                )
            )
        elif kind == "model_output" and type(step.get("content")) is list:
            for n, block in enumerate(step["content"]):
                if type(block) is dict and block.get("type") == "text":
                    where = f"step {position} content {n}"
                    citations.extend(_citations(block, where, warnings))
    return tuple(calls), tuple(citations), tuple(warnings)


def _citations(block: dict[str, Any], where: str, warnings: list[str]) -> list[Citation]:
    annotations = block.get("annotations")
    if annotations is None:
        return []
    if type(annotations) is not list:
        warnings.append(f"{where} 'annotations' is not a list")
        return []
    text = block.get("text")
    size = len(text.encode("utf-8", "surrogatepass")) if type(text) is str else None
    found: list[Citation] = []
    for k, annotation in enumerate(annotations):
        kind = annotation.get("type") if type(annotation) is dict else None
        if type(kind) is not str:
            warnings.append(f"{where} annotation {k} is not an object with a string 'type'")
            continue
        keys = _CITATION_SOURCE.get(kind)
        if keys is None:
            continue  # speech metadata, or a type that may not be a citation at all
        source = next((annotation[key] for key in keys if type(annotation.get(key)) is str), None)
        for key in keys:
            if annotation.get(key) is not None and type(annotation[key]) is not str:
                warnings.append(f"{where} annotation {k} ({kind}) {key!r} is not a string")
        start, end = annotation.get("start_index"), annotation.get("end_index")
        low = 0 if start is None else start
        high = size if end is None else end
        if not (
            type(low) is int and type(high) is int and size is not None and 0 <= low <= high <= size
        ):
            warnings.append(
                f"{where} annotation {k} ({kind}) byte range [{start!r}, {end!r}) is not inside "
                f"its text: no offsets"
            )
            start = end = None
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
