"""The sans-IO streamGenerateContent parser: SSE bytes or decoded chunk dicts -> Turn.

One error boundary: every exception a handler raises on hostile input — a
:class:`~callgate.CallgateError`, or a stray ``KeyError``/``TypeError``/``ValueError``
converted here, once, to :class:`~callgate.SchemaError` — fails the parser, which then
re-raises that same error object from every later call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from .._digest import canonical_bytes
from .._errors import (
    CallgateError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UsageError,
)
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ._checks import PROVIDER, check_limits_and_baseline
from ._framing import DataFramer
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_BYTES, _EVENTS = "bytes", "events"
_STRAY = (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError)
_BOUNDARY = (CallgateError, *_STRAY)


def check_candidate_index(candidate_index: Any) -> None:
    if candidate_index is not None and (type(candidate_index) is not int or candidate_index < 0):
        raise UsageError(f"candidate_index must be None or an int >= 0, got {candidate_index!r}")


class Parser(Handlers):
    """Incremental parser of one ``streamGenerateContent?alt=sse`` response.

    Feed either raw SSE bytes (:meth:`feed_bytes`, any chunking) or decoded chunk dicts
    (:meth:`feed_event`, e.g. an SDK chunk's ``model_dump(mode="json", by_alias=True,
    exclude_none=True)``) — not both — then call :meth:`finish`. ``baseline`` is a contract
    revision (:data:`callgate.contracts.REVISIONS`): it decides the known finish reasons,
    candidate fields and part modifiers. ``candidate_index`` selects one candidate of a
    ``candidateCount > 1`` response; without it more than one candidate fails closed.

    Any :class:`~callgate.ProtocolError` raised by ``feed_*`` or ``finish`` leaves the parser
    failed: every later ``feed_*`` or ``finish`` call re-raises that same error object. The
    error carries ``provider="google"``, the 0-based ``event_index``, ``wire_type`` (the
    chunk kind) and ``turn``: a partial :class:`Turn` with ``calls == ()``. Misuse
    (mixing the two feeds, a non-bytes chunk, a non-mapping event, feeding after
    ``finish``) raises :class:`~callgate.UsageError` and leaves the parser as it was.
    ``finish`` after success returns the same Turn.
    """

    __slots__ = ("_error", "_events", "_framer", "_mode", "_result", "_row", "_rows", "_wire_type")

    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        baseline: str = CURRENT_REVISION,
        candidate_index: int | None = None,
    ) -> None:
        check_limits_and_baseline(limits, baseline)
        check_candidate_index(candidate_index)
        super().__init__(limits, baseline, candidate_index, "stream")
        # One row per state, so the hot path probes a str-keyed dict and hashes no enum.
        rows: dict[State, dict[str, tuple[Callable[[dict[str, Any]], None], State]]]
        rows = {state: {} for state in State}
        for (state, kind), (name, target) in TRANSITIONS.items():
            rows[state][kind] = (getattr(self, name), target)
        self._rows = rows
        self._row = rows[self._state]
        self._framer: DataFramer | None = None
        self._mode: str | None = None
        self._error: CallgateError | None = None
        self._result: Turn | None = None
        self._events = 0
        self._wire_type: str | None = None

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(_BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        framer = self._framer
        if framer is None:
            framer = self._framer = DataFramer(self._limits)
        try:
            limits, route = self._limits, self._route
            for payload in framer.feed(bytes(chunk)):
                self._events += 1
                self._wire_type = None
                route(loads_strict(payload, limits=limits))
        except _BOUNDARY as exc:
            self._fail(exc)

    def feed_event(self, obj: Mapping[str, Any]) -> None:
        """Feed one decoded chunk (a ``GenerateContentResponse`` JSON object). It is copied;
        later mutation by the caller has no effect. A non-mapping is a UsageError; a value
        that is not JSON is a JSONError. Raises like :meth:`feed_bytes`."""
        self._check_usable(_EVENTS)
        if not isinstance(obj, Mapping):
            raise UsageError(f"feed_event() takes a mapping, not {type(obj).__name__}")
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
            try:
                encoded = canonical_bytes(dict(obj))
            except UsageError as exc:
                raise JSONError(f"chunk is not a JSON value: {exc.message}") from None
            # Re-decoding copies the caller's dict and applies every JSON bound.
            self._route(loads_strict(encoded, limits=limits))
        except _BOUNDARY as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when no
        ``finishReason`` arrived, the refusal or error that failed the parser earlier.
        Returns the same Turn when called again."""
        if self._error is not None:
            raise self._error
        if self._result is not None:
            return self._result
        try:
            if self._framer is not None:
                for payload in self._framer.finish():
                    self._events += 1
                    self._wire_type = None
                    try:
                        chunk = loads_strict(payload, limits=self._limits)
                    except JSONError as exc:
                        # An event cut off by EOF (no blank line after it) is a truncation.
                        raise TruncatedStreamError("the stream ended inside an event") from exc
                    self._route(chunk)
            if self._state is not State.FINISHED:
                self._wire_type = None
                raise TruncatedStreamError(f"the {self._origin} ended before a finishReason")
            self._assembly.close()
            self._result = self._turn(self._calls, tuple(self._assembly.parts))
        except _BOUNDARY as exc:
            self._fail(exc)
        return self._result

    # -- routing ----------------------------------------------------------------------

    def _check_usable(self, mode: str) -> None:
        if self._error is not None:
            raise self._error
        if self._result is not None:
            raise UsageError("the parser was finished; create a new Parser per stream")
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise UsageError("feed_bytes() and feed_event() cannot be mixed on one parser")

    def _route(self, chunk: Any) -> None:
        if type(chunk) is not dict:
            raise SchemaError("a generateContent chunk must be a JSON object")
        self._wire_type = None
        kind = self._wire_type = self._classify(chunk)
        entry = self._row.get(kind)
        if entry is None:
            raise SequenceError(f"a {kind} chunk is illegal in state {self._state.value}")
        handler, target = entry
        handler(chunk)
        if target is not self._state:
            self._state = target
            self._row = self._rows[target]

    def _fail(self, exc: BaseException) -> NoReturn:
        if isinstance(exc, UsageError):  # a value our own sealing refused: hostile data
            err: CallgateError = SchemaError(f"turn cannot be sealed: {exc.message}")
        elif isinstance(exc, CallgateError):
            err = exc
        elif isinstance(exc, _STRAY):
            err = SchemaError(f"malformed chunk ({type(exc).__name__}: {exc})")
        else:  # pragma: no cover - _BOUNDARY holds nothing else
            raise exc
        if err.provider is None:
            err.provider = PROVIDER
        if err.event_index is None and self._events:
            err.event_index = self._events - 1
        if err.wire_type is None:
            err.wire_type = self._wire_type
        if err.turn is None:
            try:
                err.turn = self._turn((), self._assembly.snapshot())
            except _BOUNDARY:  # a partial turn is best effort
                err.turn = None
        self._error = err
        self._state = State.FAILED
        self._row = self._rows[State.FAILED]
        self._result = None
        if err is exc:
            raise err
        raise err from exc


def parse_stream(
    data: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    candidate_index: int | None = None,
) -> Turn:
    """Parse one whole SSE stream (bytes, or an iterable of byte chunks) into a Turn.

    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise; a ``str`` or
    ``dict`` is a :class:`~callgate.UsageError`.
    """
    parser = Parser(limits=limits, baseline=baseline, candidate_index=candidate_index)
    if isinstance(data, bytes | bytearray | memoryview):
        parser.feed_bytes(data)
    elif isinstance(data, str | Mapping):
        raise UsageError(f"parse_stream() takes bytes, not {type(data).__name__}")
    else:
        for chunk in data:
            parser.feed_bytes(chunk)
    return parser.finish()
