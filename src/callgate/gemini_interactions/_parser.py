"""The sans-IO Interactions stream parser: SSE bytes or decoded event dicts -> Turn.

The parser frames and decodes events, drops event-id re-deliveries, routes each event by
``(state, event_type)`` through :data:`._state.TRANSITIONS` to the composed
:class:`._handlers.Handlers`, and is the one boundary where a failure is converted
(:func:`callgate._errors.at_boundary`) and remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._digest import canonical_bytes
from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
    at_boundary,
)
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from ._event_ids import EventIds
from ._events import DONE, EVENT_TYPES, PROVIDER
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_BYTES, _EVENTS = "bytes", "events"
# What the boundary converts: our own errors, and what a handler's bug could raise.
_CAUGHT = (CallgateError, *STRAY_ERRORS)
_Handler = Callable[[Any], None]


class Parser:
    """Incremental parser of one streamed Interaction (``interactions.create(stream=True)``).

    Feed either raw SSE bytes (:meth:`feed_bytes`, any chunking) or decoded wire event
    dicts (:meth:`feed_event`, e.g. an SDK event's JSON dump) — not both — then call
    :meth:`finish`. ``baseline`` is a contract revision from
    :data:`callgate.contracts.REVISIONS`; it decides which step and delta types are known.

    Any ProtocolError leaves the parser failed: every later feed_*/finish call re-raises
    that same error, whose `turn` is the partial turn (nothing released). Each error
    carries ``provider="google"`` and the 0-based ``event_index`` and ``wire_type`` where
    known; :attr:`state` is then ``State.FAILED``. A :class:`~callgate.UsageError` for a
    wrong argument (a non-bytes chunk, a non-mapping event, mixing the two feeds) leaves
    the parser as it was. Feeding after a successful ``finish`` raises UsageError;
    ``finish`` then returns the same Turn. Constructor arguments of the wrong type raise
    :class:`~callgate.UsageError`.
    """

    __slots__ = (
        "_decoder",
        "_error",
        "_events",
        "_finished",
        "_handlers",
        "_ids",
        "_limits",
        "_mode",
        "_state",
        "_stream_bytes",
        "_table",
        "_wire_type",
    )

    def __init__(
        self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION
    ) -> None:
        check_limits_and_baseline(limits, baseline, REVISIONS)
        self._limits = limits
        handlers = self._handlers = Handlers(limits, baseline)
        table: dict[State, dict[str, tuple[_Handler, State]]] = {state: {} for state in State}
        for (state, event_type), (name, target) in TRANSITIONS.items():
            table[state][event_type] = (getattr(handlers, name), target)
        self._table = table
        self._state = State.START
        self._decoder: SSEDecoder | None = None
        self._mode: str | None = None
        self._error: CallgateError | None = None
        self._finished = False
        self._events = 0
        self._stream_bytes = 0
        self._wire_type: str | None = None
        self._ids = EventIds()

    @property
    def state(self) -> State:
        """Where the stream is (``State.FAILED`` after a protocol error)."""
        return self._state

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable()
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._enter(_BYTES)
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        try:
            limits = self._limits
            for event in decoder.feed(chunk):
                self._events += 1
                text = event.data
                if text == DONE:
                    self._route(DONE, None, None)
                    continue
                obj = loads_strict(text, limits=limits)
                if type(obj) is not dict:
                    raise SchemaError("an Interactions SSE event must be a JSON object")
                event_type = obj.get("event_type")
                if event.event is not None and event.event != event_type:
                    raise SchemaError(
                        f"SSE event name {event.event!r} disagrees with event_type {event_type!r}"
                    )
                self._route(event_type, obj, None)
        except _CAUGHT as exc:
            raise self._fail(exc)  # noqa: B904 - at_boundary sets the cause it means

    def feed_event(self, obj: Mapping[str, Any] | str) -> None:
        """Feed one decoded wire event: a JSON object (e.g. an SDK event's
        ``model_dump(mode="json", by_alias=True, exclude_none=True)``) or the string
        ``"[DONE]"``. The object is copied; later mutation by the caller has no effect.
        Anything but a Mapping or ``"[DONE]"`` is a UsageError (the parser stays usable);
        a value inside the object that is not JSON is a JSONError. Otherwise raises like
        :meth:`feed_bytes`."""
        self._check_usable()
        done = type(obj) is str and obj == DONE
        if not done and not isinstance(obj, Mapping):
            raise UsageError(
                f"feed_event() takes a JSON object or {DONE!r}, not {type(obj).__name__}"
            )
        self._enter(_EVENTS)
        try:
            self._events += 1
            limits = self._limits
            if self._events > limits.max_events_per_stream:
                raise LimitExceededError(
                    "too many events in one stream",
                    limit="max_events_per_stream",
                    bound=limits.max_events_per_stream,
                    observed=self._events,
                )
            if done:
                self._route(DONE, None, None)
                return
            try:
                encoded = canonical_bytes(obj if type(obj) is dict else dict(obj))  # type: ignore[arg-type]
            except UsageError as exc:
                raise JSONError(
                    f"event is not a JSON value: {exc.message} (feed an SDK event as "
                    'model_dump(mode="json"))'
                ) from None
            self._stream_bytes += len(encoded)
            if self._stream_bytes > limits.max_stream_bytes:
                raise LimitExceededError(
                    "stream is too large",
                    limit="max_stream_bytes",
                    bound=limits.max_stream_bytes,
                    observed=self._stream_bytes,
                )
            # Re-decoding the canonical text both copies the caller's dict and applies
            # every JSON bound, exactly as for wire bytes.
            copied = loads_strict(encoded.decode("utf-8"), limits=limits)
            self._route(copied.get("event_type"), copied, encoded)
        except _CAUGHT as exc:
            raise self._fail(exc)  # noqa: B904 - at_boundary sets the cause it means

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when no
        ``interaction.completed`` was seen (or SSE framing ended mid-event), or the error
        that failed the parser earlier. Idempotent after success."""
        if self._error is not None:
            raise self._error
        result = self._handlers.result
        if self._finished and result is not None:
            return result
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state is State.START or self._state is State.OPEN:
                raise TruncatedStreamError("the stream ended before interaction.completed")
        except _CAUGHT as exc:
            self._wire_type = None
            raise self._fail(exc)  # noqa: B904 - at_boundary sets the cause it means
        result = self._handlers.result
        if result is None:  # pragma: no cover - TERMINAL always sets it
            raise UsageError("parser reached its terminal without a turn")
        self._finished = True
        return result

    # -- routing ----------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error
        if self._finished:
            raise UsageError("the parser was finished; create a new Parser per stream")

    def _enter(self, mode: str) -> None:
        """Fix the input mode on first use; the other mode is then a UsageError."""
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise UsageError("feed_bytes() and feed_event() cannot be mixed on one parser")

    def _route(self, event_type: Any, obj: dict[str, Any] | None, canonical: bytes | None) -> None:
        """Route one event; ``canonical`` is its canonical JSON when already computed."""
        self._wire_type = event_type if type(event_type) is str else None
        state = self._state
        if state is State.DONE:
            raise SequenceError("an event arrived after data: [DONE]")
        if obj is not None:
            if type(event_type) is not str:
                raise SchemaError("event has no string 'event_type'")
            event_id = obj.get("event_id")
            if event_id is not None:
                if type(event_id) is not str:
                    raise SchemaError("'event_id' must be a string")
                if self._ids.is_replay(event_id, obj, canonical):
                    return  # idempotent re-delivery (e.g. after a resume)
        entry = self._table[state].get(event_type)
        if entry is None:
            if event_type not in EVENT_TYPES and event_type != DONE:
                raise UnsupportedProviderState(
                    f"unknown event type {event_type!r}", wire_type=self._wire_type
                )
            raise SequenceError(f"{event_type} is illegal in state {state.value}")
        handler, target = entry
        handler(obj)
        self._state = target

    # -- failure ----------------------------------------------------------------------

    def _partial_turn(self) -> Turn | None:
        try:
            return self._handlers.turn(())
        except CallgateError:
            return None

    def _fail(self, exc: BaseException) -> CallgateError:
        """Convert ``exc`` once, remember it, and enter FAILED; the caller raises it."""
        error = at_boundary(
            exc,
            provider=PROVIDER,
            event_index=self._events - 1,
            wire_type=self._wire_type,
            partial_turn=self._partial_turn,
        )
        self._error = error
        self._state = State.FAILED
        self._handlers.result = None
        return error


def parse_stream(
    data: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse one whole SSE stream (bytes, or an iterable of byte chunks) into a Turn.

    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise.
    """
    parser = Parser(limits=limits, baseline=baseline)
    if isinstance(data, bytes | bytearray | memoryview):
        parser.feed_bytes(data)
    elif isinstance(data, str | dict):  # iterable, but certainly not of byte chunks
        raise UsageError(f"parse_stream() takes bytes, not {type(data).__name__}")
    else:
        for chunk in data:
            parser.feed_bytes(chunk)
    return parser.finish()
