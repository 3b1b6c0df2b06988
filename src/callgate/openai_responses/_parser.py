"""The Responses stream parser: SSE bytes or decoded events in, a gated :class:`Turn` out.

Every handler raises the typed error it means; :meth:`Parser._fail` is the one boundary
that attaches context (provider, event index, wire type, the partial turn) and makes the
parser sticky-failed. Handlers read the decoded JSON dict directly; the per-event work on
the hot path (argument deltas) is one registry lookup, a transition lookup, a few dict
reads and one list append.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._digest import canonical_bytes
from .._errors import (
    CallgateError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ..sse import SSEDecoder
from ._events import BASELINE_EVENTS, EventSpec
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_DONE_MARKER = "[DONE]"
_Handler = Callable[[dict[str, Any], EventSpec], None]
# Bugs a hostile document could still provoke in a handler; never let them escape bare.
_STRAY = (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError)


class Parser(Handlers):
    """Incremental, sans-IO parser of one OpenAI Responses stream.

    Feed raw SSE bytes with :meth:`feed_bytes` (any chunking) or decoded wire objects with
    :meth:`feed_event` (an SDK event's ``to_dict(mode="json")``), then call :meth:`finish`.
    ``baseline`` is a contract revision from :data:`callgate.contracts.REVISIONS`.

    Any :class:`~callgate.ProtocolError` leaves the parser failed: every later
    ``feed_*``/``finish`` call re-raises the same error. The error's ``turn`` is the
    partial turn (``calls == ()``). After a successful :meth:`finish`, feeding raises
    :class:`~callgate.UsageError` and ``finish`` returns the same turn again.
    """

    __slots__ = ("_decoder", "_dispatch", "_error", "_event_index", "_wire_type")

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION):
        if not isinstance(limits, Limits):
            raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
        if type(baseline) is not str or baseline not in BASELINE_EVENTS:
            raise UsageError(f"unknown baseline {baseline!r}; expected one of the REVISIONS")
        super().__init__(limits, baseline)
        self._decoder = SSEDecoder(limits=limits)
        self._error: CallgateError | None = None
        self._event_index = -1
        self._wire_type: str | None = None
        # type -> (spec, bound handler, fields the dispatcher checks). Argument deltas
        # check their own fields inline (the hot path).
        self._dispatch: dict[str, tuple[EventSpec, _Handler, tuple[Any, ...]]] = {
            name: (
                spec,
                getattr(self, "_on_" + spec.handler),
                () if spec.handler == "args_delta" else spec.fields,
            )
            for name, spec in BASELINE_EVENTS[baseline].items()
        }

    # -- public ----------------------------------------------------------------------

    def feed_bytes(self, chunk: bytes) -> None:
        """Feed raw SSE bytes (any split). Raises a :class:`~callgate.ProtocolError`
        subclass on the first violation; the parser then stays failed. A chunk that is
        not bytes-like is a :class:`~callgate.UsageError` and leaves the parser usable."""
        self._check_open()
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        limits = self._limits
        apply = self._apply
        try:
            for event in self._decoder.feed(chunk):
                data = event.data
                if data == _DONE_MARKER:
                    self._on_done_marker()
                    continue
                apply(loads_strict(data, limits=limits), event.event)
        except CallgateError as exc:
            raise self._fail(exc) from None
        except _STRAY as exc:
            raise self._fail(_stray(exc)) from exc

    def feed_event(self, obj: Mapping[str, Any]) -> None:
        """Feed one decoded wire event object. It is validated as strict JSON and copied,
        so later changes to ``obj`` do not reach the parser. Raises like
        :meth:`feed_bytes`; a non-mapping ``obj`` is a :class:`~callgate.UsageError`."""
        self._check_open()
        if not isinstance(obj, Mapping):
            raise UsageError(f"feed_event() takes a mapping, not {type(obj).__name__}")
        try:
            try:
                data = canonical_bytes(dict(obj))
            except UsageError as exc:
                raise JSONError(f"event is not a JSON value: {exc.message}") from None
            self._apply(loads_strict(data, limits=self._limits), None)
        except CallgateError as exc:
            raise self._fail(exc) from None
        except _STRAY as exc:
            raise self._fail(_stray(exc)) from exc

    def finish(self) -> Turn:
        """End the stream and return the turn.

        Raises :class:`~callgate.TruncatedStreamError` if no terminal arrived,
        :class:`~callgate.ProviderError` for an ``error`` event, ``response.failed`` or
        ``response.incomplete`` (``err.turn`` holds what was parsed, with no calls), and
        re-raises an earlier error. Idempotent after success.
        """
        if self._turn is not None:
            return self._turn
        if self._error is not None:
            raise self._error
        try:
            self._decoder.finish()
            self._turn = self._final_turn()
        except CallgateError as exc:
            raise self._fail(exc) from None
        return self._turn

    @property
    def state(self) -> State:
        """The stream-level state (see ``TRANSITIONS``)."""
        return self._state

    # -- internals -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._turn is not None:
            raise UsageError("Parser.finish() was already called")

    def _apply(self, obj: Any, sse_name: str | None) -> None:
        self._event_index += 1
        if type(obj) is not dict:
            raise SchemaError(f"event is a JSON {type(obj).__name__}, not an object")
        etype = obj.get("type")
        entry = self._dispatch.get(etype) if type(etype) is str else None
        self._wire_type = etype if type(etype) is str else None
        if entry is None:
            if type(etype) is not str:
                raise SchemaError("event has no string 'type'")
            raise UnsupportedProviderState(f"unknown event type {etype[:100]!r}")
        if sse_name is not None and sse_name != etype:
            raise SchemaError(f"SSE event name {sse_name[:100]!r} differs from the JSON type")
        seq = obj.get("sequence_number")
        if type(seq) is not int:
            raise SchemaError("event lacks an integer sequence_number")
        if seq <= self._last_seq:
            raise SequenceError(f"sequence_number {seq} does not increase past {self._last_seq}")
        self._last_seq = seq
        if self._event_index >= self._limits.max_events_per_stream:
            raise LimitExceededError(
                "too many events in one stream",
                limit="max_events_per_stream",
                bound=self._limits.max_events_per_stream,
            )
        spec, handler, fields = entry
        nxt = TRANSITIONS[self._state].get(spec.kind)
        if nxt is None:
            raise SequenceError(f"{etype} is not allowed in state {self._state.value}")
        for name, kinds in fields:
            if type(obj.get(name)) not in kinds:
                raise SchemaError(_field_problem(obj, name))
        handler(obj, spec)
        self._state = nxt

    def _on_done_marker(self) -> None:
        self._event_index += 1
        self._wire_type = _DONE_MARKER
        if self._state is not State.TERMINATED:
            raise TruncatedStreamError("[DONE] arrived before the terminal event")
        if self._done_marker:
            raise SequenceError("a second [DONE]")
        self._done_marker = True

    def _fail(self, exc: CallgateError) -> CallgateError:
        if exc.provider is None:
            exc.provider = "openai"
        if exc.event_index is None and self._event_index >= 0:
            exc.event_index = self._event_index
        if exc.wire_type is None:
            exc.wire_type = self._wire_type
        if exc.turn is None:
            exc.turn = self._partial_turn()
        self._state = State.FAILED
        self._error = exc
        return exc


def _field_problem(obj: dict[str, Any], name: str) -> str:
    if name not in obj:
        return f"event lacks required field {name!r}"
    return f"event field {name!r} has type {type(obj[name]).__name__}"


def _stray(exc: BaseException) -> SchemaError:
    return SchemaError(f"malformed event ({type(exc).__name__}: {str(exc)[:200]})")


def parse_stream(
    data: bytes | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse a whole stream (bytes, or an iterable of byte chunks) into a turn.

    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise;
    :class:`~callgate.UsageError` if ``data`` is a ``str`` or not iterable.
    """
    parser = Parser(limits=limits, baseline=baseline)
    if isinstance(data, bytes | bytearray | memoryview):
        parser.feed_bytes(bytes(data))
    elif isinstance(data, str) or not isinstance(data, Iterable):  # type: ignore[unreachable]
        raise UsageError("parse_stream() takes bytes or an iterable of bytes")
    else:
        for chunk in data:
            parser.feed_bytes(chunk)
    return parser.finish()
