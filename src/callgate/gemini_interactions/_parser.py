"""The sans-IO Interactions stream parser: SSE bytes or decoded event dicts -> Turn.

The parser frames and decodes events, drops event-id re-deliveries, routes each event by
``(state, event_type)`` through :data:`._state.TRANSITIONS` to the composed
:class:`._handlers.Handlers`, and is the one boundary where a failure is converted
(:func:`callgate._errors.at_boundary`) and remembered.

Event-id dedup (:class:`EventIds`): ``event_id`` is a resume token, so a client that
resumes may see an event twice. The same id with an equal decoded payload (key order and
spacing ignored) is skipped; with another payload it is a :class:`~callgate.SequenceError`.
Each seen id keeps the 16-byte BLAKE2b digest of its event's canonical JSON (the bytes of
:func:`callgate.canonical_bytes`), never the text; an id longer than
:data:`MAX_KEPT_ID_CHARS` is keyed by its own digest, so memory per id is constant. A
digest collision cannot release anything the stream did not carry: a false "same payload"
drops an event (which the sender could simply not have sent), a false "another payload"
fails closed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from hashlib import blake2b
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
from .._feed import wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from ._events import DONE, EVENT_TYPES, PROVIDER
from ._handlers import Handlers
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["MAX_KEPT_ID_CHARS", "EventIds", "Parser", "parse_stream"]

_BYTES, _EVENTS = "bytes", "events"
# What the boundary converts: our own errors, and what a handler's bug could raise.
_CAUGHT = (CallgateError, *STRAY_ERRORS)
_Handler = Callable[[Any], None]


# -- event-id dedup ------------------------------------------------------------------

MAX_KEPT_ID_CHARS = 64
_DIGEST_BYTES = 16
# The canonical encoder's settings (callgate._digest). A decoded event is already strict
# JSON (loads_strict checked its keys, numbers, strings and depth), so the canonical
# validation walk, most of canonical_bytes' cost on a small event, is not repeated.
_CANONICAL = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
)


def _unencodable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _make_encode() -> Callable[[Any], str]:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return _CANONICAL.encode
    # The accelerator JSONEncoder.encode builds on every call, made once (about a third
    # of the time of an encode of a small event). The same arguments as _CANONICAL's.
    chunks = make(
        None, _unencodable, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    join = "".join
    return lambda value: join(chunks(value, 0))


_encode = _make_encode()
_quote = json.encoder.encode_basestring  # the canonical encoder's string writer


def _canonical_text(obj: dict[str, Any]) -> str:
    """``_encode(obj)``; the hot shape (exactly ``event_type``, ``event_id``, ``index`` and a
    two-string ``delta``) as one f-string, which costs half the C encoder's per-call setup
    and key sort. Any other shape, extra keys included, goes through the encoder."""
    if len(obj) == 4:
        delta, index = obj.get("delta"), obj.get("index")
        event_type, event_id = obj.get("event_type"), obj.get("event_id")
        if (
            type(delta) is dict
            and len(delta) == 2
            and type(index) is int
            and type(event_type) is str
            and type(event_id) is str
        ):
            (k1, v1), (k2, v2) = delta.items()
            if type(k1) is str and type(k2) is str and type(v1) is str and type(v2) is str:
                if k2 < k1:
                    k1, v1, k2, v2 = k2, v2, k1, v1
                return (
                    f'{{"delta":{{{_quote(k1)}:{_quote(v1)},{_quote(k2)}:{_quote(v2)}}},'
                    f'"event_id":{_quote(event_id)},"event_type":{_quote(event_type)},'
                    f'"index":{int.__repr__(index)}}}'
                )
    return _encode(obj)


def _digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=_DIGEST_BYTES).digest()


class EventIds:
    """The ids seen in one stream, each with the digest of its event's payload."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str | bytes, bytes] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def is_replay(self, event_id: str, obj: dict[str, Any], canonical: bytes | None) -> bool:
        """Record ``event_id`` for the event ``obj``; True when it is a re-delivery.

        ``canonical`` is the event's canonical JSON when the caller already has it (decoded
        events), else ``None`` and it is computed here. Raises :class:`SequenceError` when
        the id was seen with another payload.
        """
        if canonical is None:
            try:
                canonical = _canonical_text(obj).encode("utf-8")
            except (
                TypeError,
                ValueError,
                RecursionError,
            ) as exc:  # only past the interpreter's bounds
                raise SchemaError(f"event cannot be canonicalised: {exc}") from None
        digest = _digest(canonical)
        key: str | bytes = event_id
        if len(event_id) > MAX_KEPT_ID_CHARS:
            # str keys and bytes keys never compare equal, so the two kinds cannot clash.
            key = _digest(event_id.encode("utf-8", "surrogatepass"))
        seen = self._seen.setdefault(key, digest)
        if seen is digest:
            return False
        if seen == digest:
            return True
        raise SequenceError(f"event_id {event_id[:100]!r} replayed with another payload")


# -- the parser -----------------------------------------------------------------------


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

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded wire event: a JSON object (a mapping, or an SDK event object
        as it is, converted once with ``to_dict(mode="json")``) or the string
        ``"[DONE]"``. The object is copied; later mutation by the caller has no effect.
        Anything else is a UsageError (the parser stays usable); a value inside a mapping
        that is not JSON is a JSONError. Otherwise raises like :meth:`feed_bytes`."""
        self._check_usable()
        done = type(obj) is str and obj == DONE
        if not done and type(obj) is not dict:
            if isinstance(obj, str):
                raise UsageError(f"feed_event() takes a JSON object or {DONE!r}, not a str")
            obj = wire_mapping(obj, "feed_event()")
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
                encoded = canonical_bytes(obj if type(obj) is dict else dict(obj))
            except UsageError as exc:
                raise JSONError(
                    f"event is not a JSON value: {exc.message} (feed the SDK event itself, "
                    'or its to_dict(mode="json"))'
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
