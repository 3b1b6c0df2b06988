"""The sans-IO Anthropic Messages stream parser.

Bytes go through :class:`callgate.sse.SSEDecoder`; each event's ``event:`` name must equal
its JSON ``type``. Decoded objects (``feed_event``) skip the envelope check. Every event is
looked up in ``TRANSITIONS``; block content accumulates in one list of fragments for the
single open block and is joined once at ``content_block_stop`` (tool input is parsed there
with ``loads_strict``, once). Any error leaves the parser failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._errors import (
    CallgateError,
    FramingError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    SchemaError,
    TruncatedStreamError,
    UsageError,
)
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from . import _events as ev
from ._accumulator import Accumulator
from ._state import DONE, STATE_NAMES
from ._turn import Turn, build_turn

__all__ = ["Parser", "parse_response", "parse_stream"]

_BYTES = "bytes"
_EVENTS = "events"
_SLICE_BYTES = 1 << 16


class Parser(Accumulator):
    """Incremental parser for one Messages stream: ``feed_bytes`` or ``feed_event``, then
    ``finish``.

    ``baseline`` is a contract revision from ``callgate.contracts.REVISIONS``; a bad
    ``baseline`` or ``limits`` is a :class:`UsageError` at construction.

    Use one input mode per parser (mixing them is a :class:`UsageError`). Feeding raises the
    first protocol violation as a :class:`~callgate.ProtocolError` subclass carrying
    ``provider``, ``event_index``, ``wire_type`` and the partial ``turn`` (``calls == ()``).
    After any error the parser is failed: every later ``feed_*``/``finish`` raises
    :class:`UsageError` chained to the original error. After a successful ``finish`` it is
    closed the same way.
    """

    __slots__ = ("_decoder", "_failed", "_finished", "_mode", "_seen", "_wire_type")

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION):
        if not isinstance(limits, Limits):
            raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
        if baseline not in REVISIONS:
            raise UsageError(f"baseline must be one of {REVISIONS}, got {baseline!r}")
        super().__init__(limits, baseline)
        self._decoder: SSEDecoder | None = None
        self._mode: str | None = None
        self._failed: CallgateError | None = None
        self._finished = False
        self._seen = 0
        self._wire_type: str | None = None

    # -- public ------------------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes in any chunking. Raises a ``ProtocolError`` subclass on the
        first violation (the parser is then failed) and :class:`UsageError` for a non-bytes
        chunk (the parser stays usable) or a failed/finished parser."""
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, got {type(chunk).__name__}")
        self._enter(_BYTES)
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        try:
            events = decoder.feed(bytes(chunk))
        except CallgateError as exc:
            raise self._fail(exc, self._seen) from None
        if not events:
            return
        loads, limits, table = loads_strict, self._limits, self._table
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
                entry = table.get((self._state, t))
                if entry is None:
                    self._illegal(t)
                nxt = entry[0](obj)
                self._state = entry[1] if nxt is None else nxt
        except CallgateError as exc:
            raise self._fail(exc, self._seen - 1) from None

    def feed_event(self, obj: Mapping[str, Any]) -> None:
        """Feed one decoded wire event: an SDK event's ``to_dict(mode="json")`` (plain
        ``to_dict()`` keeps ``container.expires_at`` as a ``datetime``, which is refused).
        No SSE envelope is checked. Raises like :meth:`feed_bytes`; a non-mapping or
        non-JSON value is a :class:`~callgate.SchemaError` whose message names that fix.
        Non-delta events are copied, so later changes to ``obj`` do not reach the turn."""
        self._enter(_EVENTS)
        self._seen += 1
        try:
            if self._seen > self._limits.max_events_per_stream:
                raise LimitExceededError(
                    "more events than max_events_per_stream",
                    limit="max_events_per_stream",
                    bound=self._limits.max_events_per_stream,
                    observed=self._seen,
                )
            if not isinstance(obj, Mapping):
                raise SchemaError(f"event is a {type(obj).__name__}, not a JSON object")
            event: dict[str, Any] = obj if type(obj) is dict else dict(obj)
            t = event.get("type")
            if type(t) is not str:
                raise SchemaError("event has no string `type`")
            self._wire_type = t
            if t != ev.BLOCK_DELTA:
                event = self._copy(event)
            entry = self._table.get((self._state, t))
            if entry is None:
                self._illegal(t)
            nxt = entry[0](event)
            self._state = entry[1] if nxt is None else nxt
        except CallgateError as exc:
            raise self._fail(exc, self._seen - 1) from None

    def finish(self) -> Turn:
        """End of input: return the :class:`Turn`.

        Raises :class:`~callgate.TruncatedStreamError` (with the partial ``turn``) when the
        stream ended before ``message_stop`` or mid-event, and :class:`UsageError` when the
        parser failed earlier or was already finished. The parser is closed afterwards.
        """
        self._enter(self._mode)
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state != DONE:
                raise TruncatedStreamError(
                    f"stream ended in state {STATE_NAMES[self._state]} before message_stop"
                )
            assert self._message is not None  # DONE implies message_start was handled
            turn = build_turn(
                self._message,
                self._content,
                self._tool_info,
                self._telemetry,
                complete=True,
                baseline=self._baseline,
            )
        except CallgateError as exc:
            raise self._fail(exc, self._seen) from None
        self._finished = True
        return turn

    # -- plumbing ----------------------------------------------------------------------

    def _enter(self, mode: str | None) -> None:
        if self._failed is not None:
            raise UsageError("the parser failed earlier and cannot be used") from self._failed
        if self._finished:
            raise UsageError("the parser was already finished")
        if self._mode is None:
            self._mode = mode
        elif mode != self._mode:
            raise UsageError("feed_bytes() and feed_event() cannot be mixed on one parser")

    def _fail(self, exc: CallgateError, index: int) -> CallgateError:
        """Record the failure and attach context; the caller re-raises ``exc``."""
        self._failed = exc
        if exc.provider is None:
            exc.provider = ev.PROVIDER
        if exc.event_index is None:
            exc.event_index = index
        if exc.wire_type is None and type(self._wire_type) is str:
            exc.wire_type = self._wire_type
        if exc.turn is None:
            exc.turn = self._partial_turn()
        return exc

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
    :class:`UsageError`.
    """
    parser = Parser(limits=limits, baseline=baseline)
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


def parse_response(
    obj: Mapping[str, Any] | bytes | str,
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse a non-streaming Message body: a mapping (an SDK message's
    ``to_dict(mode="json")``; plain ``to_dict()`` keeps datetimes), or its JSON bytes/text.

    The body is checked with the same rules as a stream (it is replayed as the events a
    stream of it would carry), so stream and body give the same turn. Raises
    :class:`~callgate.SchemaError` for a malformed body and the stream errors otherwise.
    """
    parser = Parser(limits=limits, baseline=baseline)
    try:
        if isinstance(obj, bytes | bytearray | str):
            obj = loads_strict(obj, limits=limits)
        if not isinstance(obj, Mapping):
            raise SchemaError("a Message body must be a JSON object")
        body = parser._copy(dict(obj))
        content = body.pop("content", None)
        if type(content) is not list:
            raise SchemaError("Message.content is not a list")
    except CallgateError as exc:
        exc.provider = ev.PROVIDER
        raise
    start = dict(body, content=[], stop_reason=None, stop_sequence=None)
    parser.feed_event({"type": ev.MESSAGE_START, "message": start})
    for index, block in enumerate(content):
        parser.feed_event({"type": ev.BLOCK_START, "index": index, "content_block": block})
        parser.feed_event({"type": ev.BLOCK_STOP, "index": index})
    delta = {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")}
    usage = body.get("usage")
    parser.feed_event({"type": ev.MESSAGE_DELTA, "delta": delta, "usage": usage})
    parser.feed_event({"type": ev.MESSAGE_STOP})
    return parser.finish()
