"""The sans-IO Interactions stream parser: SSE bytes or decoded event dicts -> Turn.

The parser frames and decodes events, drops event-id re-deliveries (:mod:`._event_ids`),
routes each event by ``(state, event_type)`` through :data:`._state.TRANSITIONS` to the
composed :class:`._handlers.Handlers`, and is a :class:`callgate._feed.Boundary`: the input
mode, event counting, the event copy and the one failure path are the kernel's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import (
    CallgateError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from .._feed import BYTES, CAUGHT, EVENTS, Boundary, copy_event, feed_whole, wire_mapping
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


class Parser(Boundary[State]):
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

    __slots__ = ("_decoder", "_handlers", "_ids", "_stream_bytes")
    PROVIDER = PROVIDER

    def __init__(
        self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION
    ) -> None:
        check_limits_and_baseline(limits, baseline, REVISIONS)
        handlers = self._handlers = Handlers(limits, baseline)
        self._bind(limits, TRANSITIONS, handlers, State)
        self._decoder: SSEDecoder | None = None
        self._stream_bytes = 0
        self._ids = EventIds()

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._mode = BYTES
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        try:
            limits = self._limits
            for event in decoder.feed(chunk):
                self._events += 1  # the decoder bounds the count
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
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded wire event: a JSON object (a mapping, or an SDK event object
        as it is, converted once with ``to_dict(mode="json")``) or the string
        ``"[DONE]"``. The object is copied; later mutation by the caller has no effect.
        Anything else is a UsageError (the parser stays usable); a value inside a mapping
        that is not JSON is a JSONError. Otherwise raises like :meth:`feed_bytes`."""
        self._check_usable(EVENTS)
        done = type(obj) is str and obj == DONE
        if not done and type(obj) is not dict:
            if isinstance(obj, str):
                raise UsageError(f"feed_event() takes a JSON object or {DONE!r}, not a str")
            obj = wire_mapping(obj, "feed_event()")
        self._mode = EVENTS
        try:
            self._count_event()
            if done:
                self._route(DONE, None, None)
                return
            copied, encoded = copy_event(obj, self._limits)
            self._stream_bytes += len(encoded)
            if self._stream_bytes > self._limits.max_stream_bytes:
                raise LimitExceededError(
                    "stream is too large",
                    limit="max_stream_bytes",
                    bound=self._limits.max_stream_bytes,
                    observed=self._stream_bytes,
                )
            self._route(copied.get("event_type"), copied, encoded)
        except CAUGHT as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when no
        ``interaction.completed`` was seen (or SSE framing ended mid-event), or the error
        that failed the parser earlier. Idempotent after success."""
        if self._turn is not None:
            return self._turn  # type: ignore[no-any-return]
        self._check_usable(None)
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state is not State.DONE and self._state is not State.CLOSED:
                raise TruncatedStreamError("the stream ended before interaction.completed")
            turn = self._handlers.result
            if turn is None:  # pragma: no cover - _on_completed always sets it
                raise TruncatedStreamError("the terminal left no turn")
        except CAUGHT as exc:
            self._wire_type = None
            self._fail(exc)
        self._turn = turn
        return turn

    # -- routing ----------------------------------------------------------------------

    def _route(self, event_type: Any, obj: dict[str, Any] | None, canonical: bytes | None) -> None:
        """Route one event; ``canonical`` is its canonical JSON when already computed."""
        self._wire_type = event_type if type(event_type) is str else None
        if self._state is State.CLOSED:
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
        entry = self._row.get(event_type)
        if entry is None:
            if event_type not in EVENT_TYPES and event_type != DONE:
                raise UnsupportedProviderState(
                    f"unknown event type {event_type!r}", wire_type=self._wire_type
                )
            raise SequenceError(f"{event_type} is illegal in state {self._state.value}")
        handler, nxt, row = entry
        handler(obj)
        self._state, self._row = nxt, row

    def _partial_turn(self) -> Turn | None:
        try:
            return self._handlers.turn(())
        except CallgateError:
            return None


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
    feed_whole(parser.feed_bytes, data)
    return parser.finish()
