"""The sans-IO streamGenerateContent parser: SSE bytes or decoded chunk dicts -> Turn.

Framing is the SSE dialect google-genai reads (``_api_client._iter_response_stream``),
strictly. Lines end at LF, CR or CRLF. A line starting with exactly ``data: `` is data;
consecutive data lines join with ``\\n``; a blank line ends the event; at EOF a pending
event is still dispatched (the SDK flushes it too). Every other non-blank line —
``event:``, ``id:``, ``retry:``, a ``:`` comment, ``data:`` without its space, a byte order
mark — sends the SDK down a brace-balancing path meant for raw error bodies; callgate
refuses it as a :class:`~callgate.FramingError` instead of guessing
(``contracts/gemini-generate-content.md`` §5.1). Bytes stay bytes until one event is
complete; the JSON layer decodes UTF-8 strictly.

One error boundary: every exception a handler raises on hostile input — a
:class:`~callgate.CallgateError`, or a stray ``KeyError``/``TypeError``/``ValueError``
converted once by :func:`callgate._errors.at_boundary` — fails the parser, which then
re-raises that same error object from every later call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from .._errors import (
    STRAY_ERRORS,
    CallgateError,
    FramingError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UsageError,
    at_boundary,
)
from .._feed import wire_mapping
from .._fields import check_limits_and_baseline
from .._json import json_copy, loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ._events import PROVIDER
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "parse_stream"]

_BYTES, _EVENTS = "bytes", "events"
#: Fields google-genai adds to a ``GenerateContentResponse`` that no wire carries (the HTTP
#: response's headers, the SDK's function-calling history, parsed structured output): an
#: SDK object fed as it is loses them (google-genai 3.6.1 and 2.12.1 ``types.py``).
SDK_ONLY = ("sdkHttpResponse", "automaticFunctionCallingHistory", "parsed")
_BOUNDARY = (CallgateError, *STRAY_ERRORS)


def check_candidate_index(candidate_index: Any) -> None:
    if candidate_index is not None and (type(candidate_index) is not int or candidate_index < 0):
        raise UsageError(f"candidate_index must be None or an int >= 0, got {candidate_index!r}")


class Parser:
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

    __slots__ = (
        "_classify",
        "_error",
        "_events",
        "_framer",
        "_handlers",
        "_limits",
        "_mode",
        "_result",
        "_row",
        "_rows",
        "_state",
        "_wire_type",
    )

    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        baseline: str = CURRENT_REVISION,
        candidate_index: int | None = None,
    ) -> None:
        check_limits_and_baseline(limits, baseline, REVISIONS)
        check_candidate_index(candidate_index)
        self._limits = limits
        handlers = self._handlers = Handlers(limits, baseline, candidate_index)
        self._classify = handlers.classify
        # One row per state, so the hot path probes a str-keyed dict and hashes no enum.
        rows: dict[State, dict[str, tuple[Callable[[dict[str, Any]], None], State]]]
        rows = {state: {} for state in State}
        for (state, kind), (name, target) in TRANSITIONS.items():
            rows[state][kind] = (getattr(handlers, name), target)
        self._rows = rows
        self._state = State.START
        self._row = rows[State.START]
        self._framer: DataFramer | None = None
        self._mode: str | None = None
        self._error: CallgateError | None = None
        self._result: Turn | None = None
        self._events = 0
        self._wire_type: str | None = None

    @property
    def state(self) -> State:
        """Where the stream is (``State.FAILED`` after a protocol error)."""
        return self._state

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(_BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._mode = _BYTES
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

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded chunk: a ``GenerateContentResponse`` JSON object, or the SDK's
        ``GenerateContentResponse`` as it is (converted once, see :data:`SDK_ONLY`). It is
        copied; later mutation by the caller has no effect. Another type is a UsageError;
        a value that is not JSON is a JSONError. Raises like :meth:`feed_bytes`."""
        self._check_usable(_EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()", sdk_only=SDK_ONLY)
        self._mode = _EVENTS
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
                # The copy also applies every JSON bound of ``limits``.
                copied = json_copy(dict(obj), limits=limits, what="chunk")
            except UsageError as exc:
                raise JSONError(exc.message) from None
            self._route(copied)
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
                origin = self._handlers.origin
                raise TruncatedStreamError(f"the {origin} ended before a finishReason")
            self._result = self._handlers.final_turn()
        except _BOUNDARY as exc:
            self._fail(exc)
        return self._result

    # -- routing and the boundary -----------------------------------------------------

    def _check_usable(self, mode: str) -> None:
        if self._error is not None:
            raise self._error
        if self._result is not None:
            raise UsageError("the parser was finished; create a new Parser per stream")
        if self._mode is not None and self._mode != mode:
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
        err = at_boundary(
            exc,
            provider=PROVIDER,
            event_index=self._events - 1,
            wire_type=self._wire_type,
            partial_turn=self._handlers.partial_turn,
        )
        self._error = err
        self._state = State.FAILED
        self._row = self._rows[State.FAILED]
        self._result = None
        raise err


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


# -- the data:-only SSE dialect ---------------------------------------------------------

_PREFIX = b"data: "


def _too_long(message: str, limit: str, limits: Limits, observed: int) -> LimitExceededError:
    return LimitExceededError(message, limit=limit, bound=getattr(limits, limit), observed=observed)


class DataFramer:
    """Incremental ``data:``-only framing (the dialect of the module docstring): feed
    bytes, get complete event payloads."""

    __slots__ = ("_data", "_data_len", "_events", "_fed", "_limits", "_pending", "_pending_len")

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._pending: list[bytes] = []  # the current, unterminated line
        self._pending_len = 0
        self._data: list[bytes] = []  # data lines of the current event
        self._data_len = 0
        self._fed = 0
        self._events = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events ``chunk`` completes (FramingError/LimitExceededError)."""
        limits = self._limits
        self._fed += len(chunk)
        if self._fed > limits.max_stream_bytes:
            raise LimitExceededError(
                "stream is too large",
                limit="max_stream_bytes",
                bound=limits.max_stream_bytes,
                observed=self._fed,
            )
        if b"\n" not in chunk and b"\r" not in chunk:
            self._hold(chunk)
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending, self._pending_len = [], 0
        if b"\r" in chunk or self._data:
            return self._by_lines(chunk)
        return self._by_events(chunk)

    def _by_events(self, chunk: bytes) -> list[bytes]:
        """The fast path for LF-only input between events: one split per feed. When every
        complete event is one ``data: `` line (counted in C: two newlines and one prefix
        per event), the payloads are sliced in one comprehension."""
        limits = self._limits
        blocks = chunk.split(b"\n\n")
        rest = blocks.pop()
        end = len(chunk) - len(rest)
        if (
            blocks
            and chunk.count(b"\n", 0, end) == 2 * len(blocks)
            and chunk.startswith(_PREFIX) + chunk.count(b"\n\ndata: ", 0, end) == len(blocks)
        ):
            longest = max(map(len, blocks))
            if longest > limits.max_line_bytes:
                raise _too_long("SSE line is too long", "max_line_bytes", limits, longest)
            if longest - 6 > limits.max_event_bytes:
                raise _too_long("SSE event is too large", "max_event_bytes", limits, longest)
            self._count(len(blocks))
            out = [block[6:] for block in blocks]
        else:
            out = []
            for block in blocks:
                if block:  # an empty block is extra blank lines: nothing to dispatch
                    # the line path: several lines, or one the SDK would not read as data
                    out.extend(self._lines([*block.split(b"\n"), b""]))
        if b"\n" in rest:
            lines = rest.split(b"\n")
            rest = lines.pop()
            out.extend(self._lines(lines))
        if rest:
            self._hold(rest)
        return out

    def _count(self, events: int) -> None:
        self._events += events
        if self._events > self._limits.max_events_per_stream:
            raise _too_long(
                "too many events in one stream", "max_events_per_stream", self._limits, self._events
            )

    def _by_lines(self, chunk: bytes) -> list[bytes]:
        # A trailing CR may be the first half of CRLF: keep it with the unfinished line.
        held = b""
        if chunk.endswith(b"\r"):
            chunk, held = chunk[:-1], b"\r"
            if not chunk:
                self._hold(held)
                return []
        lines = chunk.splitlines()  # bytes.splitlines breaks at \r, \n and \r\n only
        if not chunk.endswith((b"\n", b"\r")):
            self._hold(lines.pop() + held)
        elif held:
            self._hold(held)
        return self._lines(lines)

    def finish(self) -> list[bytes]:
        """End of input: the last line and event, if any are pending."""
        lines = []
        if self._pending:
            tail = b"".join(self._pending)
            self._pending, self._pending_len = [], 0
            lines = tail.splitlines() or [b""]
        out = self._lines(lines)
        if self._data:
            out.append(self._dispatch())
        return out

    def _hold(self, piece: bytes) -> None:
        self._pending_len += len(piece)
        if self._pending_len > self._limits.max_line_bytes:
            raise LimitExceededError(
                "SSE line is too long",
                limit="max_line_bytes",
                bound=self._limits.max_line_bytes,
                observed=self._pending_len,
            )
        if piece:
            self._pending.append(piece)

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        limits = self._limits
        for line in lines:
            if not line:
                if self._data:
                    out.append(self._dispatch())
                continue
            if not line.startswith(_PREFIX):
                raise FramingError(
                    f"line {line[:24]!r} is not a 'data: ' line (generateContent streams "
                    "carry data lines only)",
                    byte_offset=self._fed,
                )
            if len(line) > limits.max_line_bytes:
                raise LimitExceededError(
                    "SSE line is too long",
                    limit="max_line_bytes",
                    bound=limits.max_line_bytes,
                    observed=len(line),
                )
            self._data_len += len(line) - 5  # the payload plus its joining newline
            if self._data_len > limits.max_event_bytes:
                raise LimitExceededError(
                    "SSE event is too large",
                    limit="max_event_bytes",
                    bound=limits.max_event_bytes,
                    observed=self._data_len,
                )
            self._data.append(line[6:])
        return out

    def _dispatch(self) -> bytes:
        data = self._data
        self._data, self._data_len = [], 0
        self._count(1)
        return data[0] if len(data) == 1 else b"\n".join(data)
