"""Message accumulation: the transition handlers and the per-block accumulators.

:class:`Accumulator` holds everything one Message stream builds up: the message fields, the
finished blocks, and the single open block with its fragment list. Its ``_on_*`` methods are
the handlers named in ``_state.TRANSITIONS``; the ``_d_*`` methods are the per-delta hot
path (a type check, a bound check, an append). It knows nothing of bytes or SSE: the
:class:`~callgate.anthropic_messages.Parser` subclass feeds it decoded objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from .._digest import canonical_bytes
from .._errors import (
    CallgateError,
    JSONError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
)
from .._json import loads_strict
from .._limits import Limits
from . import _events as ev
from ._checks import (
    DELTA_FIELDS,
    SDK_HINT,
    check_caller,
    check_delta_field,
    check_opt_str,
    need_str,
    unknown_block,
)
from ._deltas import DeltaAccumulators
from ._state import COMPLETE, DONE, IN_BLOCK, START, STATE_NAMES, TRANSITIONS
from ._turn import REASON_INVALID_JSON, REASON_LIMIT, REASON_NON_OBJECT, Turn, build_turn

__all__ = ["Accumulator"]

# A handler may return the next state to override the table's (only message_start does).
Handler = Callable[[dict[str, Any]], int | None]
# Message fields a message_delta.delta may not carry (usage comes from the event's `usage`).
_PROTECTED = frozenset({"id", "role", "model", "content", "usage"})
_EVENT_KEYS = frozenset({"type", "delta", "usage"})
_USAGE_COUNTERS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class Accumulator(DeltaAccumulators):
    """The state of one Message being assembled (see the module docstring). Not public."""

    __slots__ = (
        "_baseline",
        "_content",
        "_deltas_by_kind",
        "_limits",
        "_message",
        "_n_calls",
        "_open_deltas",
        "_open_index",
        "_open_kind",
        "_state",
        "_table",
        "_telemetry",
        "_tool_ids",
        "_tool_info",
    )

    def __init__(self, limits: Limits, baseline: str) -> None:
        self._limits = limits
        self._baseline = baseline
        self._state = START
        self._message: dict[str, Any] | None = None
        self._content: list[dict[str, Any]] = []
        self._tool_info: dict[int, tuple[str, str | None, str]] = {}
        self._tool_ids: set[str] = set()
        self._telemetry: dict[str, Any] = {}
        self._n_calls = 0
        self._open_index = -1
        self._open_block: dict[str, Any] = {}
        self._open_kind = ""
        self._parts: list[str] = []
        self._part_size = 0
        self._table: dict[tuple[int, str], tuple[Handler, int]] = {
            key: (getattr(self, name), nxt) for key, (name, nxt) in TRANSITIONS.items()
        }
        self._deltas_by_kind: dict[str, dict[str, Handler]] = {
            ev.TEXT: {"text_delta": self._d_text, "citations_delta": self._d_citation},
            ev.THINKING: {"thinking_delta": self._d_thinking, "signature_delta": self._d_signature},
            ev.TOOL_INPUT: {"input_json_delta": self._d_json},
            ev.WHOLE: {},
        }
        self._open_deltas: dict[str, Handler] = {}

    def _partial_turn(self) -> Turn | None:
        if self._message is None:
            return None
        content = list(self._content)
        if self._state == IN_BLOCK:
            content.append(self._open_block)
        try:
            return build_turn(
                self._message,
                content,
                {},
                self._telemetry,
                complete=False,
                baseline=self._baseline,
            )
        except CallgateError:
            return None

    def _copy(self, value: Any) -> Any:
        """A validated deep copy of a caller-supplied JSON value (SchemaError otherwise)."""
        try:
            return loads_strict(canonical_bytes(value), limits=self._limits)
        except UsageError as exc:
            raise SchemaError(
                f"event holds a value that is not JSON: {exc.message}; {SDK_HINT}"
            ) from None

    def _illegal(self, t: object) -> NoReturn:
        if type(t) is not str:
            raise SchemaError("event has no string `type`")
        if t not in ev.EVENT_TYPES:
            raise UnsupportedProviderState(f"unknown event type {t[:80]!r}")
        if self._state == DONE:
            raise SequenceError(f"{t} after message_stop")
        if self._state == COMPLETE:
            raise SequenceError(
                f"{t} after a message_start that carried the complete message "
                "(only message_stop may follow it)"
            )
        raise SequenceError(f"{t} is not legal in state {STATE_NAMES[self._state]}")

    # -- transitions (names are in _state.TRANSITIONS) ----------------------------------

    def _on_ping(self, obj: dict[str, Any]) -> None:
        pass

    def _on_error(self, obj: dict[str, Any]) -> None:
        error = obj.get("error")
        error = error if type(error) is dict else {}
        etype, message = error.get("type"), error.get("message")
        details = error.get("details")
        code = details.get("error_code") if type(details) is dict else None
        etype = etype if type(etype) is str else None
        message = message if type(message) is str else None
        raise ProviderError(
            f"provider error in stream: {etype}: {message}",
            error_type=etype,
            error_code=code if type(code) is str else None,
            provider_message=message,
        )

    def _on_message_start(self, obj: dict[str, Any]) -> int | None:
        m = obj.get("message")
        if type(m) is not dict:
            raise SchemaError("message_start.message is not an object")
        need_str(m, "id", "message")
        need_str(m, "model", "message")
        if m.get("type") != "message" or m.get("role") != "assistant":
            raise SchemaError("message_start.message must have type 'message', role 'assistant'")
        content = m.get("content")
        if type(content) is not list:
            raise SchemaError("message_start.message.content is not a list")
        for key in ("stop_reason", "stop_sequence", "stop_details", "container"):
            check_delta_field(m, key, "message_start.message")
        usage = m.get("usage")
        if type(usage) is not dict:
            raise SchemaError("message_start.message.usage is not an object")
        for key in ("input_tokens", "output_tokens"):
            if type(usage.get(key)) is not int:
                raise SchemaError(f"message_start usage.{key} is not an int")
        message = {k: v for k, v in m.items() if k != "content"}
        message.setdefault("stop_reason", None)
        message.setdefault("stop_sequence", None)
        self._message = message
        if not content and message["stop_reason"] is None:
            return None
        return self._start_complete(content, message["stop_reason"])

    def _start_complete(self, content: list[Any], reason: str | None) -> int:
        """A message_start that carries the finished message (the follow-up responses of a
        programmatic tool-calling loop): accept it only when it is self-consistent."""
        if reason is None:
            raise SchemaError("message_start.message holds content blocks but no stop_reason")
        if reason not in ev.STOP_REASONS[self._baseline]:
            raise UnsupportedProviderState(
                f"message_start carries a complete message with unknown stop_reason {reason!r:.80}"
            )
        # Each block goes through the same checks as a streamed block without deltas.
        for index, block in enumerate(content):
            self._on_block_start({"index": index, "content_block": block})
            self._on_block_stop({"index": index})
        return COMPLETE

    def _on_block_start(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        expected = len(self._content)
        if type(index) is not int or index != expected:
            raise SequenceError(f"content_block_start index {index!r}; expected {expected}")
        limits = self._limits
        if expected >= limits.max_items_per_turn:
            raise LimitExceededError(
                "too many content blocks",
                limit="max_items_per_turn",
                bound=limits.max_items_per_turn,
                observed=expected + 1,
            )
        block = obj.get("content_block")
        if type(block) is not dict:
            raise SchemaError("content_block_start.content_block is not an object")
        btype = block.get("type")
        if type(btype) is not str:
            raise SchemaError("content block has no string `type`")
        spec = ev.BLOCKS.get(btype)
        if spec is None:
            unknown_block(btype)
        for field, kind in spec.required:
            if field not in block or (kind is not object and type(block[field]) is not kind):
                raise SchemaError(f"{btype} block: `{field}` is missing or not a {kind.__name__}")
        if spec.kind == ev.TOOL_INPUT:
            self._check_tool_block(block, btype)
        elif spec.kind == ev.THINKING:
            check_opt_str(block, "signature", "thinking block")
        elif spec.kind == ev.TEXT and type(block.get("citations", [])) not in (list, type(None)):
            raise SchemaError("text block: `citations` is not a list")
        self._open_index = index
        self._open_block = block
        self._open_kind = spec.kind
        self._open_deltas = self._deltas_by_kind[spec.kind]
        self._parts = []
        text = block.get("text") if spec.kind == ev.TEXT else block.get("thinking")
        self._part_size = len(text) if type(text) is str else 0

    def _check_tool_block(self, block: dict[str, Any], btype: str) -> None:
        if not block["id"] or not block["name"]:
            raise SchemaError(f"{btype} block: `id` and `name` must be non-empty")
        if block["id"] in self._tool_ids:
            raise SequenceError(f"{btype} id {block['id'][:80]!r} is used twice in the turn")
        self._tool_ids.add(block["id"])
        if btype == ev.CLIENT_TOOL_BLOCK:
            check_caller(block)
            bound = self._limits.max_calls_per_turn
            if self._n_calls >= bound:
                raise LimitExceededError(
                    "too many tool_use blocks",
                    limit="max_calls_per_turn",
                    bound=bound,
                    observed=self._n_calls + 1,
                )
            self._n_calls += 1

    def _on_block_delta(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        if type(index) is not int or index != self._open_index:
            raise SequenceError(
                f"content_block_delta for index {index!r}; the open block is {self._open_index}"
            )
        delta = obj.get("delta")
        if type(delta) is not dict:
            raise SchemaError("content_block_delta.delta is not an object")
        dtype = delta.get("type")
        handler = self._open_deltas.get(dtype) if type(dtype) is str else None
        if handler is None:
            self._bad_delta(dtype)
        handler(delta)

    def _bad_delta(self, dtype: object) -> NoReturn:
        btype = self._open_block.get("type")
        if type(dtype) is not str:
            raise SchemaError("delta has no string `type`")
        if dtype in ev.KNOWN_UNSUPPORTED_DELTAS:
            raise UnsupportedProviderState(f"delta type {dtype!r} is not supported")
        if dtype in ev.ALL_DELTAS:
            raise SequenceError(f"{dtype} does not fit a {btype} block")
        raise UnsupportedProviderState(f"unknown delta type {dtype[:80]!r}")

    def _on_block_stop(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        if type(index) is not int or index != self._open_index:
            raise SequenceError(
                f"content_block_stop for index {index!r}; the open block is {self._open_index}"
            )
        block, kind, parts = self._open_block, self._open_kind, self._parts
        if kind == ev.TEXT:
            if parts:
                block["text"] += "".join(parts)
        elif kind == ev.THINKING:
            if parts:
                block["thinking"] += "".join(parts)
            signature = block.get("signature")
            if type(signature) is not str or not signature:
                raise SchemaError("thinking block closed without a signature")
        elif kind == ev.TOOL_INPUT:
            self._finish_tool_input(block, index)
        self._content.append(block)
        self._open_index = -1
        self._open_block = {}
        self._parts = []

    def _finish_tool_input(self, block: dict[str, Any], index: int) -> None:
        text = "".join(self._parts)
        failure: str | None = None
        detail = ""
        # No fragments, or only empty ones: the start's input (a zero-argument `{}`) stands.
        if text:
            if block["input"]:
                raise SchemaError("tool input given both in content_block_start and as deltas")
            try:
                value = loads_strict(text, limits=self._limits)
            except LimitExceededError as exc:
                failure, detail = REASON_LIMIT, str(exc)
            except JSONError as exc:
                failure, detail = REASON_INVALID_JSON, str(exc)
            else:
                if type(value) is dict:
                    block["input"] = value
                else:
                    failure = REASON_NON_OBJECT
                    detail = f"tool input is a JSON {type(value).__name__}, not an object"
        if block["type"] != ev.CLIENT_TOOL_BLOCK:
            if failure is not None:
                # A provider-side call with broken input cannot be replayed faithfully.
                raise SchemaError(f"{block['type']} input is not a strict JSON object: {detail}")
            return
        self._tool_info[index] = (text, failure, detail)

    def _on_message_delta(self, obj: dict[str, Any]) -> None:
        """Message fields come from ``delta`` only, usage from ``usage`` only; every other
        key (top level, or unknown inside ``delta``) is kept in the turn's telemetry and
        never reaches the message, so it cannot change what the gate decides."""
        delta, usage = obj.get("delta"), obj.get("usage")
        if type(delta) is not dict:
            raise SchemaError("message_delta.delta is not an object")
        if type(usage) is not dict:
            raise SchemaError("message_delta.usage is not an object")
        message = self._message
        assert message is not None  # the table only reaches here after message_start
        current = message["usage"]
        out = usage.get("output_tokens")
        if type(out) is not int:
            raise SchemaError("message_delta usage.output_tokens is not an int")
        if out < current["output_tokens"]:
            raise SequenceError(
                f"usage.output_tokens went down from {current['output_tokens']} to {out}"
            )
        for key in _USAGE_COUNTERS:
            value = usage.get(key)
            if value is not None and type(value) is not int:
                raise SchemaError(f"message_delta usage.{key} is not an int")
        if not _PROTECTED.isdisjoint(delta):
            raise SchemaError("message_delta may not change the message's identity or content")
        for key in DELTA_FIELDS:
            check_delta_field(delta, key, "message_delta.delta")
        reason = delta.get("stop_reason")
        earlier = message["stop_reason"]
        if reason is not None and earlier is not None and earlier != reason:
            raise SequenceError(f"stop_reason changed from {earlier!r} to {reason!r:.80}")
        # Cumulative values overwrite; a null never erases what an earlier event set.
        unknown: dict[str, Any] = {}
        for key, value in delta.items():
            if value is None or key == "type":
                continue
            if key in DELTA_FIELDS:
                message[key] = value
            else:
                unknown[key] = value
        for key, value in usage.items():
            if value is not None:
                current[key] = value
        telemetry = self._telemetry
        if unknown:
            telemetry.setdefault("delta", {}).update(unknown)
        for key, value in obj.items():
            if key not in _EVENT_KEYS and value is not None:
                telemetry[key] = value

    def _on_message_stop(self, obj: dict[str, Any]) -> None:
        # Like the SDK, message_stop carries nothing; its other keys are not read.
        assert self._message is not None  # the table only reaches here after message_start
        if self._message["stop_reason"] is None:
            raise SequenceError("message_stop before any stop_reason")
