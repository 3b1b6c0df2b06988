"""The sans-IO Anthropic Messages stream parser.

Bytes go through :class:`callgate.sse.SSEDecoder`; each event's ``event:`` name must equal
its JSON ``type``. Decoded objects (``feed_event``) skip the envelope check. Every event is
looked up in the current state's row of ``TRANSITIONS`` and handed to the bound handler of
a :class:`~._handlers.Handlers` (composed, not inherited); block content accumulates in the
:class:`~._assembly.Assembly`. Every failure passes the one boundary (``at_boundary``) and
leaves the parser in ``State.FAILED``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    FramingError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    SchemaError,
    TruncatedStreamError,
    UsageError,
    at_boundary,
)
from .._feed import wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from . import _events as ev
from ._assembly import Assembly, copy_event_value
from ._handlers import Handlers
from ._state import TRANSITIONS, State, illegal
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_BYTES = "bytes"
_EVENTS = "events"
_SLICE_BYTES = 1 << 16
_CAUGHT = (CallgateError, *STRAY_ERRORS)

# A bound row entry: (handler, next state, the next state's row). Rows are keyed by wire
# type only, so the hot path hashes a str, never a State.
_Entry = tuple[Callable[[dict[str, Any]], State | None], State, dict[str, Any]]
_Rows = dict[State, dict[str, _Entry]]


def _bind(handlers: Handlers) -> _Rows:
    rows: _Rows = {state: {} for state in State}
    for (state, kind), (name, nxt) in TRANSITIONS.items():
        rows[state][kind] = (getattr(handlers, name), nxt, rows[nxt])
    return rows


class Parser:
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

    __slots__ = (
        "_assembly",
        "_decoder",
        "_failed",
        "_limits",
        "_mode",
        "_row",
        "_rows",
        "_seen",
        "_state",
        "_turn",
        "_wire_type",
    )

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION):
        check_limits_and_baseline(limits, baseline, REVISIONS)
        self._limits = limits
        self._assembly = Assembly(limits, baseline)
        self._rows = _bind(Handlers(self._assembly))
        self._state = State.START
        self._row = self._rows[State.START]
        self._decoder: SSEDecoder | None = None
        self._mode: str | None = None
        self._failed: CallgateError | None = None
        self._turn: Turn | None = None
        self._seen = 0
        self._wire_type: str | None = None

    @property
    def state(self) -> State:
        """Where the parser is (``State.FAILED`` after any error)."""
        return self._state

    # -- public ------------------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes in any chunking. Raises a ``ProtocolError`` subclass on the
        first violation (the parser is then failed), and :class:`UsageError` for a
        non-bytes chunk or after ``feed_event`` (the parser stays usable) or after a
        successful ``finish``."""
        self._check_usable(_BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, got {type(chunk).__name__}")
        self._mode = _BYTES
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        try:
            events = decoder.feed(bytes(chunk))
        except _CAUGHT as exc:
            err = self._fail(exc, self._seen)
            raise err from err.__cause__
        if not events:
            return
        loads, limits, row = loads_strict, self._limits, self._row
        try:
            for sse in events:
                self._seen += 1
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
                entry = row.get(t)
                if entry is None:
                    illegal(self._state, t)
                nxt = entry[0](obj)
                if nxt is None:
                    self._state = entry[1]
                    row = self._row = entry[2]
                else:
                    self._state = nxt
                    row = self._row = self._rows[nxt]
        except _CAUGHT as exc:
            err = self._fail(exc, self._seen - 1)
            raise err from err.__cause__

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded wire event: an SDK event object as it is (converted once,
        ``to_dict(mode="json")``) or a mapping (a plain ``to_dict()`` keeps
        ``container.expires_at`` as a ``datetime``, which is refused). No SSE envelope is
        checked. Raises like :meth:`feed_bytes`; any other type is a :class:`UsageError`
        (the parser stays usable) and a non-JSON value inside a mapping a
        :class:`~callgate.JSONError` whose message names the fix. Non-delta events are
        copied, so later changes to ``obj`` do not reach the turn."""
        self._check_usable(_EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()")
        self._mode = _EVENTS
        self._seen += 1
        try:
            if self._seen > self._limits.max_events_per_stream:
                raise LimitExceededError(
                    "more events than max_events_per_stream",
                    limit="max_events_per_stream",
                    bound=self._limits.max_events_per_stream,
                    observed=self._seen,
                )
            event: dict[str, Any] = obj if type(obj) is dict else dict(obj)
            t = event.get("type")
            if type(t) is not str:
                raise SchemaError("event has no string `type`")
            self._wire_type = t
            if t != ev.BLOCK_DELTA:
                event = copy_event_value(event, self._limits)
            entry = self._row.get(t)
            if entry is None:
                illegal(self._state, t)
            nxt = entry[0](event)
            if nxt is None:
                self._state, self._row = entry[1], entry[2]
            else:
                self._state, self._row = nxt, self._rows[nxt]
        except _CAUGHT as exc:
            err = self._fail(exc, self._seen - 1)
            raise err from err.__cause__

    def finish(self) -> Turn:
        """End of input: return the :class:`Turn` (the same object on every later call).

        Raises :class:`~callgate.TruncatedStreamError` (with the partial ``turn``) when the
        stream ended before ``message_stop`` or mid-event; a failed parser re-raises its
        error.
        """
        if self._turn is not None:
            return self._turn
        self._check_usable(None)
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state is not State.DONE:
                raise TruncatedStreamError(
                    f"stream ended in state {self._state.name} before message_stop"
                )
            turn = self._assembly.turn()
        except _CAUGHT as exc:
            err = self._fail(exc, self._seen)
            raise err from err.__cause__
        self._turn = turn
        return turn

    # -- plumbing ----------------------------------------------------------------------

    def _check_usable(self, mode: str | None) -> None:
        """Raise unless the parser can take input in ``mode`` (``None``: any)."""
        if self._failed is not None:
            raise self._failed
        if self._turn is not None:
            raise UsageError("the parser was already finished")
        if mode is not None and self._mode is not None and mode != self._mode:
            raise UsageError("feed_bytes() and feed_event() cannot be mixed on one parser")

    def _fail(self, exc: BaseException, index: int) -> CallgateError:
        """Convert ``exc`` once, at the boundary, and enter ``FAILED``."""
        err = at_boundary(
            exc,
            provider=ev.PROVIDER,
            event_index=index,
            wire_type=self._wire_type,
            partial_turn=self._partial_turn,
        )
        self._failed = err
        self._state = State.FAILED
        self._row = self._rows[State.FAILED]
        return err

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
    given: object = data  # a str is iterable too; refuse it explicitly
    if isinstance(data, bytes | bytearray | memoryview):
        # Slices keep the decoder's per-call event list (and memory) bounded on big bodies.
        view = memoryview(bytes(data))
        for start in range(0, len(view), _SLICE_BYTES):
            parser.feed_bytes(view[start : start + _SLICE_BYTES])
    elif isinstance(given, str):
        raise UsageError("parse_stream() takes bytes or an iterable of bytes, not str")
    else:
        for chunk in data:
            parser.feed_bytes(chunk)
    return parser.finish()
