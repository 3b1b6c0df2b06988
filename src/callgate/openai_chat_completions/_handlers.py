"""Chunk handlers: one ``_on_<kind>`` per row of ``_state.TRANSITIONS``, and the body path
(``take_body``) that shares them (the choice selection is ``_assembly.pick_choice``).

:class:`Handlers` holds what one stream (or body) has contributed to the turn. The parser
owns the state, the decoding and the error boundary; a handler raises the typed error it
means and never chooses the next state.
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from .._limits import Limits
from ._assembly import Assembly, inert_delta, keyed_entry, merge_extra, pick_choice
from ._events import (
    CHUNK_OBJECT,
    COMPLETION_OBJECT,
    DELTA_KEYS,
    K_DELTA,
    K_EMPTY,
    K_ERROR,
    K_FINISH,
    MESSAGE_KEYS,
    STOP,
)
from ._hosted import project
from ._profiles import Profile
from ._turn import ToolCall, Turn, error_of, make_turn, release_calls

__all__ = ["Handlers"]

_OWN_TOP = ("choices", "usage", "id", "model", "object", "error")
_OWN_CHOICE = frozenset({"index", "delta", "message", "finish_reason", "logprobs"})
_LEGACY = (
    "the legacy functions/function_call API is not gated by callgate (it fails closed); "
    "declare tools instead"
)


class Handlers:
    """Per-stream state and the handlers named in ``_state.TRANSITIONS``."""

    __slots__ = (
        "_assembly",
        "_baseline",
        "_calls",
        "_choice_extra",
        "_chunks",
        "_completion_id",
        "_current",
        "_delta_keys",
        "_entries",
        "_finish_reason",
        "_forced",
        "_limits",
        "_message_extra",
        "_model",
        "_profile",
        "_response",
        "_select",
        "_unknown",
        "_usage",
        "_warnings",
        "add_tool_calls",
        "origin",
    )

    def __init__(
        self,
        limits: Limits,
        baseline: str,
        choice_index: int | None,
        forced_function: str | None,
        profile: Profile,
    ) -> None:
        self._limits = limits
        self._baseline = baseline
        self._select = choice_index
        self._forced = forced_function
        self._profile = profile
        self.origin = "stream"
        self._delta_keys = DELTA_KEYS[baseline]
        self._assembly = Assembly(limits, profile)
        #: what :meth:`hot_delta` returned goes here: the assembly's own method
        self.add_tool_calls = self._assembly.add_tool_calls
        self._calls: tuple[ToolCall, ...] = ()
        self._entries: tuple[dict[str, Any], ...] | None = None
        self._current: dict[str, Any] | None = None
        self._completion_id: str | None = None
        self._model: str | None = None
        self._usage: dict[str, Any] | None = None
        self._finish_reason: str | None = None
        self._response: dict[str, Any] = {}
        self._message_extra: dict[str, Any] = {}
        self._choice_extra: dict[str, Any] = {}
        self._unknown: set[str] = set()
        self._chunks = 0
        self._warnings: list[str] = []

    # -- classification -------------------------------------------------------------------

    def classify(self, chunk: dict[str, Any]) -> str:
        """The chunk's kind; remembers the selected choice for the handler."""
        kind = chunk.get("object")
        if kind != CHUNK_OBJECT or "error" in chunk:
            if chunk.get("error") or kind == "error":
                return K_ERROR
            if kind == "":  # Azure's asynchronous content-filter annotations: no message
                self._current = None
                return K_EMPTY
            if kind is not None and kind != CHUNK_OBJECT:
                raise UnsupportedProviderState(f"a streamed chunk with object {kind!r}")
        choice = self._current = pick_choice(chunk.get("choices"), self._select)
        if choice is None:
            return K_EMPTY
        if choice.get("finish_reason") is not None:
            return K_FINISH
        if self._finish_reason is not None and inert_delta(choice.get("delta")):
            # OpenRouter's usage trailer repeats the finished choice with an empty delta
            # (role, content ""): it adds nothing to the message, so it is a trailer.
            self._current = None
            return K_EMPTY
        return K_DELTA

    # -- what every chunk contributes -------------------------------------------------------

    def _top(self, chunk: dict[str, Any]) -> None:
        self._chunks += 1
        completion_id = chunk.get("id")
        if completion_id != self._completion_id and completion_id is not None:
            if type(completion_id) is not str:
                raise SchemaError("chunk 'id' must be a string")
            if self._completion_id is not None:
                raise SequenceError(f"the chunk id changed mid-stream to {completion_id!r}")
            self._completion_id = completion_id
        model = chunk.get("model")
        if model != self._model and model is not None:
            if type(model) is not str:
                raise SchemaError("chunk 'model' must be a string")
            self._model = model
        usage = chunk.get("usage")
        if usage is not None:
            if type(usage) is dict:
                self._usage = usage  # the last non-null one wins
            else:  # telemetry: never a refusal
                self._warnings.append("usage is not an object: ignored")
        self._response.update(chunk)

    def _choice(self, choice: dict[str, Any], key: str) -> None:
        """One choice's ``delta`` (stream) or ``message`` (body) and its other fields."""
        if choice.keys() <= _OWN_CHOICE:  # the common case: nothing to keep apart
            logprobs = choice.get("logprobs")
            if logprobs is not None:
                self._logprobs(logprobs)
        else:
            for name, value in choice.items():
                if name not in _OWN_CHOICE:
                    self._choice_extra[name] = value
                elif name == "logprobs" and value is not None:
                    self._logprobs(value)
        message = choice.get(key)
        if message is None:
            return
        if type(message) is not dict:
            raise SchemaError(f"choice '{key}' must be an object")
        assembly = self._assembly
        if len(message) == 1 and "tool_calls" in message:  # the argument-delta hot path
            tool_calls = message["tool_calls"]
            if tool_calls is not None:
                assembly.add_tool_calls(tool_calls)
            return
        for name, value in message.items():
            if name == "tool_calls":
                if value is not None:
                    assembly.add_tool_calls(value)
            elif name == "content":
                assembly.add_text(value)
            elif name == "refusal":
                assembly.add_text(value, refusal=True)
            elif name == "role":
                if value is not None and type(value) is not str:
                    raise SchemaError("message 'role' must be a string")
            elif name == "function_call":
                if value is not None:
                    raise UnsupportedProviderState(f"a function_call in the {key}: {_LEGACY}")
            else:
                if name not in self._delta_keys:
                    self._unknown.add(name)
                merge_extra(self._message_extra, name, value)

    def _logprobs(self, value: Any) -> None:
        if type(value) is not dict:
            self._warnings.append("choice 'logprobs' is not an object: ignored")
            return
        held = self._choice_extra.setdefault("logprobs", {})
        for name, part in value.items():
            merge_extra(held, name, part)

    # -- handlers (named in _state.TRANSITIONS) ---------------------------------------------

    def _on_delta(self, chunk: dict[str, Any]) -> None:
        self._top(chunk)
        choice = self._current
        if choice is not None:
            self._choice(choice, "delta")

    def hot_delta(self, chunk: dict[str, Any]) -> list[Any] | None:
        """The ``tool_calls`` of a chunk in the argument-delta stream's one shape (the id
        and model seen before, no usage, one choice at index 0 whose delta is only
        ``tool_calls``: no finish reason, logprobs or other field), its top-level fields
        taken as :meth:`_on_delta` takes them; ``None``, nothing taken, for any other
        chunk. Only in the OPEN state, where such a chunk classifies as a delta."""
        get = chunk.get
        choices = get("choices")
        if (
            type(choices) is not list
            or len(choices) != 1
            or get("object") != CHUNK_OBJECT
            or "error" in chunk
            or get("id") != self._completion_id
            or get("model") != self._model
            or get("usage") is not None
            or self._select is not None
        ):
            return None
        choice = choices[0]
        if type(choice) is not dict or not choice.keys() <= _OWN_CHOICE:
            return None
        index, delta = choice.get("index"), choice.get("delta")
        if (
            type(index) is not int
            or index != 0
            or choice.get("finish_reason") is not None
            or choice.get("logprobs") is not None
            or type(delta) is not dict
            or len(delta) != 1
        ):
            return None
        tool_calls = delta.get("tool_calls")
        if type(tool_calls) is not list:
            return None
        self._chunks += 1
        self._response.update(chunk)
        return tool_calls

    def _on_empty(self, chunk: dict[str, Any]) -> None:
        if chunk.get("object") == "":
            self._chunks += 1  # Azure's filter annotations: counted, not merged
            return
        self._top(chunk)

    def _on_finish(self, chunk: dict[str, Any]) -> None:
        self._on_delta(chunk)
        choice = self._current
        if choice is None:  # pragma: no cover - K_FINISH implies a choice
            raise SequenceError("finish without a choice")
        self._gate(choice.get("finish_reason"))

    def _on_error(self, chunk: dict[str, Any]) -> None:
        raise error_of(chunk)

    def _on_early_done(self, marker: Any) -> None:
        raise TruncatedStreamError(
            f"the {self.origin} ended ([DONE]) before the choice's finish_reason: "
            "nothing is released"
        )

    def _on_done_marker(self, marker: Any) -> None:
        """``[DONE]`` after the finish: the gate already ran; the turn may be built."""

    # -- the gate ----------------------------------------------------------------------------

    def _gate(self, reason: Any) -> None:
        if reason is not None and type(reason) is not str:
            raise SchemaError("'finish_reason' must be a string")
        self._finish_reason = reason
        if reason == "eos" and self._profile.allows("eos_is_stop"):
            reason = STOP
        self._entries = self._assembly.entries()  # the calls' raw entries are these
        self._calls = release_calls(
            reason,
            self._entries,
            baseline=self._baseline,
            forced_function=self._forced,
            profile=self._profile,
            refusal=self._assembly.refusal,
            limits=self._limits,
        )

    def take_body(self, body: dict[str, Any]) -> None:
        """One ``chat.completion`` body through the same checks and gate."""
        self.origin = "body"
        if body.get("error") or body.get("object") == "error":
            raise error_of(body)
        kind = body.get("object")
        if kind != COMPLETION_OBJECT and kind is not None:
            raise UnsupportedProviderState(f"a body with object {kind!r} is not a chat.completion")
        choice = pick_choice(body.get("choices"), self._select)
        self._top(body)
        if choice is None:
            raise SequenceError("the body holds no choice: nothing is released")
        message = choice.get("message")
        if type(message) is dict:
            tool_calls = message.get("tool_calls")
            if type(tool_calls) is list:  # whole entries: keyed by their position
                message = dict(message)
                message["tool_calls"] = [
                    keyed_entry(entry, i) for i, entry in enumerate(tool_calls)
                ]
        self._delta_keys = MESSAGE_KEYS[self._baseline]
        self._choice({**choice, "message": message}, "message")
        self._gate(choice.get("finish_reason"))

    # -- the turn ------------------------------------------------------------------------------

    def final_turn(self) -> Turn:
        """The finished turn, with the calls the gate released."""
        return self._turn(self._calls)

    def partial_turn(self) -> Turn | None:
        """What was assembled so far, nothing released (``None`` if it cannot be sealed)."""
        try:
            return self._turn(())
        except (CallgateError, *STRAY_ERRORS):
            return None

    def _turn(self, calls: tuple[ToolCall, ...]) -> Turn:
        assembly = self._assembly
        extra = self._message_extra
        hosted, citations, found = project(extra)
        warnings = [*self._warnings, *found]
        if self._unknown:
            warnings.append(
                f"field(s) {sorted(self._unknown)} unknown to contract revision "
                f"{self._baseline}: kept in message_extra"
            )
        try:
            return make_turn(
                completion_id=self._completion_id,
                model=self._model,
                content=assembly.content,
                refusal=assembly.refusal,
                tool_calls=assembly.entries() if self._entries is None else self._entries,
                calls=calls,
                finish_reason=self._finish_reason,
                usage=self._usage,
                message_extra=extra,
                choice_extra=self._choice_extra,
                response={k: v for k, v in self._response.items() if k not in _OWN_TOP},
                choice_index=self._select,
                forced_function=self._forced,
                profile=None if not self._profile.relaxes else self._profile.name,
                chunks=self._chunks,
                origin=self.origin,
                baseline=self._baseline,
                hosted_calls=hosted,
                citations=citations,
                warnings=tuple(warnings),
            )
        except UsageError as exc:  # a value the digest refuses came off the wire: hostile
            raise SchemaError(f"turn cannot be sealed: {exc.message}") from None
