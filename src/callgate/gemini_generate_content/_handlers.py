"""Chunk handlers: one ``_on_<kind>`` per row of ``_state.TRANSITIONS``, plus the candidate
selection and the chunk-level field rules they share.

:class:`Handlers` holds what one stream has contributed to the turn. The parser holds one
and dispatches to its bound ``_on_<kind>`` methods through its table; the parser owns the
state, the decoding and the error boundary. A handler raises the typed error it means.
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    ProviderError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
)
from .._limits import Limits
from ._assembly import Assembly
from ._events import (
    CANDIDATE_KEYS,
    CONTINUATION,
    FINISH_REASONS,
    K_BLOCKED,
    K_CONTENT,
    K_EMPTY,
    K_ERROR,
    K_FINISH,
    SNAKE_ALIASES,
    TOP_KEYS,
)
from ._hosted import METADATA_KEYS, merge_metadata, project
from ._turn import FunctionCall, Turn, check_block_reason, make_turn, release_calls

__all__ = ["Handlers"]

_OWN_TOP = ("candidates", "usageMetadata")
_OWN_CANDIDATE = ("content", "finishReason", "continuationToken")


class Handlers:
    """Per-stream state and the handlers named in ``_state.TRANSITIONS``."""

    __slots__ = (
        "_assembly",
        "_baseline",
        "_calls",
        "_candidate",
        "_candidate_keys",
        "_chunks",
        "_current",
        "_finish_reason",
        "_limits",
        "_metadata",
        "_reasons",
        "_response",
        "_response_id",
        "_select",
        "_token",
        "_usage",
        "_warnings",
        "origin",
    )

    def __init__(self, limits: Limits, baseline: str, candidate_index: int | None) -> None:
        self._limits = limits
        self._baseline = baseline
        self._select = candidate_index
        self.origin = "stream"  # "body" when _body feeds one whole response
        self._candidate_keys = CANDIDATE_KEYS[baseline]
        self._reasons = FINISH_REASONS[baseline]
        self._assembly = Assembly(limits, baseline)
        self._calls: tuple[FunctionCall, ...] = ()
        self._candidate: dict[str, Any] = {}
        self._response: dict[str, Any] = {}
        self._response_id: str | None = None
        self._usage: dict[str, Any] | None = None
        self._finish_reason: str | None = None
        self._token: str | None = None
        self._current: dict[str, Any] | None = None
        self._chunks = 0
        self._metadata: dict[str, dict[str, Any]] = {}  # grounding / URL context, merged
        self._warnings: list[str] = []  # telemetry the stream got wrong (usage, grounding)

    # -- classification -------------------------------------------------------------

    def classify(self, chunk: dict[str, Any]) -> str:
        """The chunk's kind; remembers the selected candidate for the handler."""
        if "error" in chunk:
            return K_ERROR
        if not chunk.keys() <= TOP_KEYS:  # one C-level subset test per chunk
            for key in chunk:
                if key in SNAKE_ALIASES:
                    raise SchemaError(f"chunk key {key!r} is snake_case (the SDK would drop it)")
        feedback = chunk.get("promptFeedback")
        if feedback is not None:
            if type(feedback) is not dict:
                raise SchemaError("'promptFeedback' must be an object")
            if feedback.get("blockReason") is not None:
                return K_BLOCKED
        candidates = chunk.get("candidates")
        if type(candidates) is list and len(candidates) == 1 and self._select is None:
            candidate = candidates[0]  # the common case: one candidate, index 0 or absent
            if type(candidate) is not dict:
                raise SchemaError("a candidate must be an object")
            index = candidate.get("index")
            if index is not None and (type(index) is not int or index != 0):
                raise UnsupportedProviderState(
                    f"candidate index {index!r} without candidate_index="
                )
        else:
            candidate = self._pick(candidates)
        self._current = candidate
        if candidate is None:
            return K_EMPTY
        return K_CONTENT if candidate.get("finishReason") is None else K_FINISH

    def _pick(self, candidates: Any) -> dict[str, Any] | None:
        if candidates is None:
            return None
        if type(candidates) is not list:
            raise SchemaError("'candidates' must be a list")
        select = self._select
        if select is None:
            if not candidates:
                return None
            if len(candidates) > 1:
                raise UnsupportedProviderState(
                    f"{len(candidates)} candidates in one response: select one with "
                    "candidate_index="
                )
            candidate = candidates[0]
            if type(candidate) is not dict:
                raise SchemaError("a candidate must be an object")
            index = candidate.get("index")
            if index is not None and index != 0:
                raise UnsupportedProviderState(
                    f"candidate index {index!r} without candidate_index="
                )
            return candidate
        found = None
        seen: set[int] = set()
        for position, candidate in enumerate(candidates):
            if type(candidate) is not dict:
                raise SchemaError("a candidate must be an object")
            index = candidate.get("index", position)
            if type(index) is not int:
                raise SchemaError("candidate 'index' must be an integer")
            if index in seen:
                raise SequenceError(f"candidate index {index} twice in one chunk")
            seen.add(index)
            if index == select:
                found = candidate
        return found

    # -- what every chunk contributes ----------------------------------------------

    def _on_content(self, chunk: dict[str, Any]) -> None:
        """What every chunk contributes (``classify`` chose ``self._current``).

        The hot path: a handful of dict probes and two C-level updates per chunk; the
        fields a turn does not keep apart are filtered once, in _turn.
        """
        self._chunks += 1
        response_id = chunk.get("responseId")
        if response_id is not None and response_id != self._response_id:
            if type(response_id) is not str:
                raise SchemaError("response 'responseId' must be a string")
            if self._response_id is not None:
                raise SequenceError(f"responseId changed mid-stream to {response_id!r}")
            self._response_id = response_id
        usage = chunk.get("usageMetadata")
        if usage is not None:
            if type(usage) is dict:
                self._usage = usage  # a running total: the last one wins
            else:  # telemetry: never a refusal
                self._warnings.append("usageMetadata is not an object: ignored")
        self._response.update(chunk)
        candidate = self._current
        if candidate is None:
            return
        if not candidate.keys() <= self._candidate_keys:
            self._unknown_candidate_keys(candidate)
        self._candidate.update(candidate)
        for key in METADATA_KEYS:
            if key in candidate:  # the pinned streaming rule (_hosted), not last-wins
                earlier = self._metadata.get(key)
                merged = merge_metadata(key, earlier, candidate[key], self._warnings)
                if merged is not None:
                    self._candidate[key] = self._metadata[key] = merged
        token = candidate.get("continuationToken")
        if token is not None:
            if type(token) is not str:
                raise SchemaError("candidate 'continuationToken' must be a string")
            self._token = token
        content = candidate.get("content")
        if content is not None:
            if type(content) is not dict:
                raise SchemaError("candidate 'content' must be an object")
            role = content.get("role")
            if role != "model" and role is not None:
                raise SequenceError(f"a candidate's content has role {role!r}, not 'model'")
            parts = content.get("parts")
            if parts is not None:
                self._assembly.add(parts)

    def _unknown_candidate_keys(self, candidate: dict[str, Any]) -> None:
        """Unknown candidate keys are kept, except drift that could hide semantics."""
        for key in candidate:
            if key in self._candidate_keys:
                continue
            if key in SNAKE_ALIASES:
                raise SchemaError(f"candidate key {key!r} is snake_case (the SDK drops it)")
            if key == "continuationToken":
                raise UnsupportedProviderState(
                    f"continuationToken is unknown to contract revision {self._baseline}"
                )

    # -- handlers (named in _state.TRANSITIONS) -------------------------------------

    #: An empty chunk contributes its metadata the same way (``self._current`` is None).
    _on_empty = _on_content

    def _on_finish(self, chunk: dict[str, Any]) -> None:
        candidate = self._current
        self._on_content(chunk)
        if candidate is None:  # pragma: no cover - K_FINISH implies a candidate
            raise SequenceError("finish without a candidate")
        reason = candidate["finishReason"]
        if type(reason) is not str:
            raise SchemaError("'finishReason' must be a string")
        self._finish_reason = reason
        self._assembly.close()
        if reason == CONTINUATION and self._token is None and CONTINUATION in self._reasons:
            raise SchemaError("finishReason CONTINUATION without a continuationToken")
        pending = self._assembly.pending(self._response_id)
        self._calls = release_calls(reason, pending, self._baseline, candidate.get("finishMessage"))

    def _on_blocked(self, chunk: dict[str, Any]) -> None:
        self._current = None
        self._on_content(chunk)
        check_block_reason(chunk["promptFeedback"]["blockReason"], self._baseline)

    def _on_error(self, chunk: dict[str, Any]) -> None:
        error = chunk.get("error")
        code = status = message = None
        if type(error) is dict:
            code, status, message = error.get("code"), error.get("status"), error.get("message")
        raise ProviderError(
            "the provider sent an error chunk",
            error_type=status if type(status) is str else None,
            error_code=str(code) if type(code) is int else None,
            provider_message=message if type(message) is str else None,
        )

    # -- the turn ---------------------------------------------------------------------

    def final_turn(self) -> Turn:
        """The finished turn, with the calls the gate released."""
        self._assembly.close()
        return self._turn(self._calls, tuple(self._assembly.parts))

    def partial_turn(self) -> Turn | None:
        """What was assembled so far, nothing released (best effort: ``None`` if even that
        cannot be sealed)."""
        try:
            return self._turn((), self._assembly.snapshot())
        except (CallgateError, *STRAY_ERRORS):
            return None

    def _turn(self, calls: tuple[FunctionCall, ...], parts: tuple[dict[str, Any], ...]) -> Turn:
        candidate = {k: v for k, v in self._candidate.items() if k not in _OWN_CANDIDATE}
        hosted, citations, found = project(parts, candidate, self._limits)
        try:
            return make_turn(
                parts=parts,
                calls=calls,
                finish_reason=self._finish_reason,
                continuation_token=self._token,
                usage=self._usage,
                candidate=candidate,
                response={k: v for k, v in self._response.items() if k not in _OWN_TOP},
                candidate_index=self._select,
                chunks=self._chunks,
                origin=self.origin,
                baseline=self._baseline,
                hosted_calls=hosted,
                citations=citations,
                warnings=(*self._warnings, *found),
            )
        except UsageError as exc:  # a value the digest refuses came off the wire: hostile
            raise SchemaError(f"turn cannot be sealed: {exc.message}") from None
