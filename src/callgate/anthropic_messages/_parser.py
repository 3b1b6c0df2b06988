"""The sans-IO Anthropic Messages stream parser.

Bytes go through :class:`callgate.sse.SSEDecoder`; each event's ``event:`` name must equal
its JSON ``type``. Decoded objects (``feed_event``) skip the envelope check. Every event is
looked up by its key (``_events.table_key``: the wire type, or the complete
``message_start``'s own key) in the current state's row of ``TRANSITIONS`` and handed to the
bound handler of a :class:`~._handlers.Handlers` (composed, not inherited); block content
accumulates in the :class:`~._assembly.Assembly`. The parser is a
:class:`callgate._feed.Boundary`: the input mode, event counting, the event copy and the one
failure path (``at_boundary``, then ``State.FAILED``) are the kernel's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import (
    FramingError,
    ProtocolError,
    ProviderError,
    SchemaError,
    TruncatedStreamError,
    UsageError,
)
from .._feed import BYTES, CAUGHT, EVENTS, Boundary, copy_event, feed_whole, wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from . import _events as ev
from ._assembly import Assembly
from ._handlers import Handlers
from ._state import TRANSITIONS, State, illegal
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_MESSAGE_START = ev.MESSAGE_START
_table_key = ev.table_key


class Parser(Boundary[State]):
    """Incremental parser for one Messages stream: ``feed_bytes`` or ``feed_event``, then
    ``finish``.

    ``baseline`` is a contract revision from ``callgate.contracts.REVISIONS``; a bad
    ``baseline`` or ``limits`` is a :class:`UsageError` at construction.

    Use one input mode per parser: mixing them is a :class:`UsageError` that leaves the
    parser usable in its first mode, and so is a chunk or event of the wrong type. Feeding
    raises the first protocol violation as a :class:`~callgate.ProtocolError` subclass
    carrying ``provider``, ``event_index``, ``wire_type`` and the partial ``turn``
    (``calls == ()``). Any ProtocolError leaves the parser failed: every later
    feed_*/finish call re-raises that same error, whose `turn` is the partial turn
    (nothing released). After a successful ``finish``, ``finish`` returns the same Turn
    and feeding is a :class:`UsageError`. ``state`` is the current :class:`State`.
    """

    __slots__ = ("_assembly", "_decoder")
    PROVIDER = ev.PROVIDER

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION):
        check_limits_and_baseline(limits, baseline, REVISIONS)
        self._assembly = Assembly(limits, baseline)
        self._bind(limits, TRANSITIONS, Handlers(self._assembly), State)
        self._decoder: SSEDecoder | None = None

    # -- public ------------------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes in any chunking. Raises a ``ProtocolError`` subclass on the
        first violation (the parser is then failed), and :class:`UsageError` for a
        non-bytes chunk or after ``feed_event`` (the parser stays usable) or after a
        successful ``finish``."""
        self._check_usable(BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, got {type(chunk).__name__}")
        self._mode = BYTES
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        loads, limits = loads_strict, self._limits
        try:
            events = decoder.feed(bytes(chunk))
            if not events:
                return
            row = self._row
            for sse in events:
                self._events += 1  # the decoder bounds the count
                name = self._wire_type = sse.event
                if name is None:
                    raise FramingError("SSE event without an event: name")
                if name == ev.ERROR:
                    obj = self._error_frame(sse.data)
                else:
                    obj = loads(sse.data, limits=limits)
                    if type(obj) is not dict:
                        raise SchemaError("event data is not a JSON object")
                t = obj.get("type")
                if t != name:
                    raise FramingError(f"SSE event name {name!r} does not match data type {t!r}")
                entry = row.get(_table_key(t, obj) if t == _MESSAGE_START else t)
                if entry is None:
                    illegal(self._state, t)
                entry[0](obj)
                self._state = entry[1]
                row = self._row = entry[2]
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded wire event: an SDK event object as it is (converted once,
        ``to_dict(mode="json")``) or a mapping (a plain ``to_dict()`` keeps
        ``container.expires_at`` as a ``datetime``, which is refused). No SSE envelope is
        checked. Raises like :meth:`feed_bytes`; any other type is a :class:`UsageError`
        (the parser stays usable) and a non-JSON value inside a mapping a
        :class:`~callgate.JSONError` whose message names the fix. Non-delta events are
        copied, so later changes to ``obj`` do not reach the turn."""
        self._check_usable(EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()")
        self._mode = EVENTS
        try:
            self._count_event()
            event: dict[str, Any] = obj if type(obj) is dict else dict(obj)
            t = event.get("type")
            if type(t) is not str:
                raise SchemaError("event has no string `type`")
            self._wire_type = t
            if t != ev.BLOCK_DELTA:  # a delta's handler keeps only checked strings
                event = copy_event(event, self._limits)[0]
            entry = self._row.get(_table_key(t, event) if t == _MESSAGE_START else t)
            if entry is None:
                illegal(self._state, t)
            entry[0](event)
            self._state, self._row = entry[1], entry[2]
        except CAUGHT as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input: return the :class:`Turn` (the same object on every later call).

        Raises :class:`~callgate.TruncatedStreamError` (with the partial ``turn``) when the
        stream ended before ``message_stop`` or mid-event; a failed parser re-raises its
        error.
        """
        if self._turn is not None:
            return self._turn  # type: ignore[no-any-return]
        self._check_usable(None)
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state is not State.DONE:
                raise TruncatedStreamError(
                    f"stream ended in state {self._state.name} before message_stop"
                )
            turn = self._assembly.turn()
        except CAUGHT as exc:
            self._fail(exc)
        self._turn = turn
        return turn

    # -- plumbing ----------------------------------------------------------------------

    def _partial_turn(self) -> Turn | None:
        return self._assembly.partial_turn(self._state is State.IN_BLOCK)

    def _error_frame(self, data: str) -> dict[str, Any]:
        # Whatever an error frame holds, it is the provider's failure: never a schema error.
        try:
            obj = loads_strict(data, limits=self._limits)
        except ProtocolError:
            raise ProviderError(
                "provider sent an error event", provider_message=data[:2000]
            ) from None
        if type(obj) is not dict or obj.get("type") != ev.ERROR:
            raise ProviderError("provider sent an error event", provider_message=data[:2000])
        return obj


def parse_stream(
    data: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse a whole SSE stream (bytes, or an iterable of byte chunks) into a :class:`Turn`.

    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise; a ``str`` is a
    :class:`UsageError`, and so is a bad ``limits`` or ``baseline``.
    """
    parser = Parser(limits=limits, baseline=baseline)  # checks limits and baseline first
    feed_whole(parser.feed_bytes, data)
    return parser.finish()
