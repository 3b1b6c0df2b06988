"""The Responses stream parser: SSE bytes or decoded events in, a gated :class:`Turn` out.

The parser decodes, checks each event's frame (``type``, ``sequence_number``, the event
budget), looks the (state, type) pair up once in its rows of ``_state.TRANSITIONS`` and
calls the bound handler of its :class:`~._handlers.Handlers`. Every handler raises the typed
error it means; the parser is a :class:`callgate._feed.Boundary`, so the input mode, event
counting, the event copy and the one failure path (through
:func:`callgate._errors.at_boundary`) are the kernel's. On the hot path (argument deltas)
an event costs one row lookup, a few dict reads and one list append.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .._errors import (
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
from ..contracts import CURRENT_REVISION
from ..sse import SSEDecoder
from ._events import BASELINE_EVENTS, PROVIDER, EventSpec, Fields, Kind
from ._handlers import Handlers
from ._hosted import request_copy
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_DONE_MARKER: Final = "[DONE]"


def _extras(specs: Mapping[str, EventSpec]) -> Callable[[str], tuple[EventSpec, Fields] | None]:
    """Per wire type, what a row adds after (handler, next state, next row): the spec and
    the fields the dispatcher checks (argument deltas check their own, inline: the hot
    path); a type the baseline lacks has no row."""

    def extras(name: str) -> tuple[EventSpec, Fields] | None:
        spec = specs.get(name)
        if spec is None:
            return None
        return spec, () if spec.handler == "args_delta" else spec.fields

    return extras


class Parser(Boundary[State]):
    """Incremental, sans-IO parser of one OpenAI Responses stream.

    Feed raw SSE bytes with :meth:`feed_bytes` (any chunking) or decoded wire objects with
    :meth:`feed_event` (mappings, or the SDK's event objects as they are), then call
    :meth:`finish`;
    one parser takes one of the two (mixing them is a :class:`~callgate.UsageError` that
    leaves the parser usable in its first mode). ``baseline`` is a contract revision from
    :data:`callgate.contracts.REVISIONS`. ``request`` (optional) is the request body that
    opened the stream: a hosted item that none of its ``tools`` can produce is then a
    :class:`~callgate.SequenceError`.

    Any ProtocolError leaves the parser failed: every later feed_*/finish call re-raises
    that same error, whose `turn` is the partial turn (nothing released). After a
    successful :meth:`finish`, feeding raises :class:`~callgate.UsageError` and ``finish``
    returns the same turn again.
    """

    __slots__ = ("_decoder", "_done_marker", "_handlers", "_last_seq", "_socket", "_specs")
    PROVIDER = PROVIDER

    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        baseline: str = CURRENT_REVISION,
        request: Mapping[str, Any] | None = None,
    ):
        check_limits_and_baseline(limits, baseline, BASELINE_EVENTS)
        self._handlers = handlers = Handlers(limits, baseline, request_copy(request))
        self._specs = specs = BASELINE_EVENTS[baseline]
        # Row entries: (bound handler, next state, next state's row, spec, fields to check).
        self._bind(limits, TRANSITIONS, handlers, State, _extras(specs))
        self._decoder = SSEDecoder(limits=limits)
        self._last_seq = -1
        self._done_marker = False
        self._socket = False  # set by a Connection: its own response, fed frame by frame

    # -- public ----------------------------------------------------------------------

    def feed_bytes(self, chunk: bytes) -> None:
        """Feed raw SSE bytes (any split). Raises a :class:`~callgate.ProtocolError`
        subclass on the first violation; the parser then stays failed. A chunk that is
        not bytes-like, or a parser fed with :meth:`feed_event`, is a
        :class:`~callgate.UsageError` and leaves the parser usable."""
        self._check_usable(BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._mode = BYTES
        limits = self._limits
        apply = self._apply
        try:
            for event in self._decoder.feed(chunk):
                self._events += 1  # the decoder bounds the count
                data = event.data
                if data == _DONE_MARKER:
                    self._on_done_marker()
                    continue
                apply(loads_strict(data, limits=limits), event.event)
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded wire event: a mapping, or an SDK event object as it is
        (converted once, ``to_dict(mode="json")``). It is validated as strict JSON and
        copied, so later changes to ``obj`` do not reach the parser. Raises like
        :meth:`feed_bytes` (a non-JSON value inside a mapping is a
        :class:`~callgate.JSONError`); any other ``obj``, or a parser fed with
        :meth:`feed_bytes`, is a :class:`~callgate.UsageError` and leaves the parser
        usable."""
        self._check_usable(EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()")
        self._mode = EVENTS
        try:
            self._wire_type = None
            self._count_event()
            self._apply(copy_event(obj, self._limits)[0], None)
        except CAUGHT as exc:
            self._fail(exc)

    def _feed_decoded(self, obj: dict[str, Any]) -> None:
        """Feed one event that a :class:`~._connection.Connection` already decoded as
        strict JSON and owns (a WebSocket frame is one event): no second copy. Raises like
        :meth:`feed_event`."""
        self._check_usable(EVENTS)
        self._mode = EVENTS
        try:
            self._wire_type = None
            self._count_event()
            self._apply(obj, None)
        except CAUGHT as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End the stream and return the turn.

        Raises :class:`~callgate.TruncatedStreamError` if no terminal arrived,
        :class:`~callgate.ProviderError` for an ``error`` event, ``response.failed`` or
        ``response.incomplete`` (``err.turn`` holds what was parsed, with no calls), and
        re-raises an earlier error. Idempotent after success.
        """
        if self._turn is not None:
            return self._turn  # type: ignore[no-any-return]
        self._check_usable(None)
        try:
            self._decoder.finish()
            turn = self._handlers.final_turn(self._state)
        except CAUGHT as exc:
            self._fail(exc)
        self._turn = turn
        return turn

    # -- internals -------------------------------------------------------------------

    def _apply(self, obj: Any, sse_name: str | None) -> None:
        if type(obj) is not dict:
            raise SchemaError(f"event is a JSON {type(obj).__name__}, not an object")
        etype = obj.get("type")
        if type(etype) is not str:
            self._wire_type = None
            raise SchemaError("event has no string 'type'")
        self._wire_type = etype
        entry = self._row.get(etype)
        if entry is None and etype not in self._specs:
            raise UnsupportedProviderState(f"unknown event type {etype[:100]!r}")
        if sse_name is not None and sse_name != etype:
            raise SchemaError(f"SSE event name {sse_name[:100]!r} differs from the JSON type")
        seq = obj.get("sequence_number")
        if type(seq) is not int:
            # A WebSocket error event may omit it ("sequence_number?": only an error the
            # response stream emitted has one); every other event, and SSE, must carry it.
            if not (self._socket and etype == "error" and "sequence_number" not in obj):
                raise SchemaError("event lacks an integer sequence_number")
        elif seq <= self._last_seq:
            raise SequenceError(f"sequence_number {seq} does not increase past {self._last_seq}")
        else:
            self._last_seq = seq
        if entry is None:
            raise SequenceError(f"{etype} is not allowed in state {self._state.value}")
        handler, nxt, row, spec, fields = entry
        # The SDK raises APIError on any event with a truthy top-level `error`.
        if obj.get("error") and spec.kind != Kind.ERROR:
            self._handlers.refuse_error(obj, spec)
        for name, kinds in fields:
            if type(obj.get(name)) not in kinds:
                raise SchemaError(_field_problem(obj, name))
        handler(obj, spec)
        self._state = nxt
        self._row = row

    def _on_done_marker(self) -> None:
        self._wire_type = _DONE_MARKER
        if self._state is not State.DONE:
            raise TruncatedStreamError("[DONE] arrived before the terminal event")
        if self._done_marker:
            raise SequenceError("a second [DONE]")
        self._done_marker = True

    def _partial_turn(self) -> Turn | None:
        return self._handlers.partial_turn()


def _field_problem(obj: dict[str, Any], name: str) -> str:
    if name not in obj:
        return f"event lacks required field {name!r}"
    return f"event field {name!r} has type {type(obj[name]).__name__}"


def parse_stream(
    data: bytes | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    request: Mapping[str, Any] | None = None,
) -> Turn:
    """Parse a whole stream (bytes, or an iterable of byte chunks) into a turn
    (``request`` as for :class:`Parser`).

    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise;
    :class:`~callgate.UsageError` if ``data`` is a ``str`` or not iterable.
    """
    parser = Parser(limits=limits, baseline=baseline, request=request)
    feed_whole(parser.feed_bytes, data)
    return parser.finish()
