"""The sans-IO streamGenerateContent parser: SSE bytes or decoded chunk dicts -> Turn.

Bytes are framed by :class:`callgate.sse.DataFramer` (the strict ``data:``-only dialect
google-genai reads, ``contracts/gemini-generate-content.md`` §5.1). Each chunk is
classified into its wire type (``_events.KINDS``) and looked up in the current state's row
of ``_state.TRANSITIONS``; the parser is a :class:`callgate._feed.Boundary`, so the input
mode, event counting, the event copy and the one failure path are the kernel's: every
exception a handler raises on hostile input — a :class:`~callgate.CallgateError`, or a
stray ``KeyError``/``TypeError``/``ValueError`` converted once by
:func:`callgate._errors.at_boundary` — fails the parser, which then re-raises that same
error object from every later call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import JSONError, SchemaError, SequenceError, TruncatedStreamError, UsageError
from .._feed import BYTES, CAUGHT, EVENTS, Boundary, copy_event, feed_whole, wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import DataFramer
from ._events import PROVIDER
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

#: Fields google-genai adds to a ``GenerateContentResponse`` that no wire carries (the HTTP
#: response's headers, the SDK's function-calling history, parsed structured output): an
#: SDK object fed as it is loses them (google-genai 3.6.1 and 2.12.1 ``types.py``).
SDK_ONLY = ("sdkHttpResponse", "automaticFunctionCallingHistory", "parsed")


def check_candidate_index(candidate_index: Any) -> None:
    if candidate_index is not None and (type(candidate_index) is not int or candidate_index < 0):
        raise UsageError(f"candidate_index must be None or an int >= 0, got {candidate_index!r}")


class Parser(Boundary[State]):
    """Incremental parser of one ``streamGenerateContent?alt=sse`` response.

    Feed either raw SSE bytes (:meth:`feed_bytes`, any chunking) or decoded chunks
    (:meth:`feed_event`: dicts, or the SDK's chunk objects as they are) — not both — then
    call :meth:`finish`. ``baseline`` is a contract
    revision (:data:`callgate.contracts.REVISIONS`): it decides the known finish reasons,
    candidate fields and part modifiers. ``candidate_index`` selects one candidate of a
    ``candidateCount > 1`` response; without it more than one candidate fails closed.

    Any ProtocolError leaves the parser failed: every later feed_*/finish call re-raises
    that same error, whose `turn` is the partial turn (nothing released). The error also
    carries ``provider="google"``, the 0-based ``event_index`` and ``wire_type`` (the chunk
    kind). Misuse (mixing the two feeds, a non-bytes chunk, a non-mapping event, feeding
    after ``finish``) raises :class:`~callgate.UsageError` and leaves the parser as it was.
    ``finish`` after success returns the same Turn.
    """

    __slots__ = ("_classify", "_framer", "_handlers")
    PROVIDER = PROVIDER

    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        baseline: str = CURRENT_REVISION,
        candidate_index: int | None = None,
    ) -> None:
        check_limits_and_baseline(limits, baseline, REVISIONS)
        check_candidate_index(candidate_index)
        handlers = self._handlers = Handlers(limits, baseline, candidate_index)
        self._classify = handlers.classify
        self._bind(limits, TRANSITIONS, handlers, State)
        self._framer: DataFramer | None = None

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._mode = BYTES
        framer = self._framer
        if framer is None:
            framer = self._framer = DataFramer(self._limits)
        try:
            limits, route = self._limits, self._route
            for payload in framer.feed(bytes(chunk)):
                self._events += 1  # the framer bounds the count
                self._wire_type = None
                route(loads_strict(payload, limits=limits))
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded chunk: a ``GenerateContentResponse`` JSON object, or the SDK's
        ``GenerateContentResponse`` as it is (converted once, see :data:`SDK_ONLY`). It is
        copied; later mutation by the caller has no effect. Another type is a UsageError;
        a value that is not JSON is a JSONError. Raises like :meth:`feed_bytes`."""
        self._check_usable(EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()", sdk_only=SDK_ONLY)
        self._mode = EVENTS
        try:
            self._wire_type = None
            self._count_event()
            self._route(copy_event(obj, self._limits)[0])
        except CAUGHT as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when no
        ``finishReason`` arrived, the refusal or error that failed the parser earlier.
        Returns the same Turn when called again."""
        if self._turn is not None:
            return self._turn  # type: ignore[no-any-return]
        self._check_usable(None)
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
            if self._state is not State.DONE:
                self._wire_type = None
                origin = self._handlers.origin
                raise TruncatedStreamError(f"the {origin} ended before a finishReason")
            turn = self._handlers.final_turn()
        except CAUGHT as exc:
            self._fail(exc)
        self._turn = turn
        return turn

    # -- routing ----------------------------------------------------------------------

    def _route(self, chunk: Any) -> None:
        if type(chunk) is not dict:
            raise SchemaError("a generateContent chunk must be a JSON object")
        kind = self._wire_type = self._classify(chunk)
        entry = self._row.get(kind)
        if entry is None:
            raise SequenceError(f"a {kind} chunk is illegal in state {self._state.value}")
        handler, nxt, row = entry
        handler(chunk)
        self._state, self._row = nxt, row

    def _partial_turn(self) -> Turn | None:
        return self._handlers.partial_turn()


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
    feed_whole(parser.feed_bytes, data)
    return parser.finish()
