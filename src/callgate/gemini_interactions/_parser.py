"""The sans-IO Interactions stream parser: SSE bytes or decoded event dicts -> Turn."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._digest import canonical_bytes
from .._errors import (
    CallgateError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ..sse import SSEDecoder
from ._assembly import StepAccumulator, check_step, delta_routes
from ._checks import PROVIDER, check_lifecycle, check_limits_and_revision, index_error
from ._dedup import EventIds
from ._events import (
    CLIENT_STEP,
    DONE,
    EVENT_TYPES,
    INPUT_STEPS,
    INT32_MAX,
    INT32_MIN,
    baseline_deltas,
    baseline_steps,
)
from ._state import TRANSITIONS, State
from ._turn import FunctionCall, Turn, make_turn, release_calls

__all__ = ["Parser", "parse_stream"]

_BYTES, _EVENTS = "bytes", "events"


class Parser:
    """Incremental parser of one streamed Interaction (``interactions.create(stream=True)``).

    Feed either raw SSE bytes (:meth:`feed_bytes`, any chunking) or decoded wire event
    dicts (:meth:`feed_event`, e.g. an SDK event's JSON dump) — not both — then call
    :meth:`finish`. ``baseline`` is a contract revision from
    :data:`callgate.contracts.REVISIONS`; it decides which step and delta types are known.

    Any :class:`~callgate.CallgateError` raised by ``feed_*`` or ``finish`` leaves the parser
    failed: every later ``feed_*`` or ``finish`` call re-raises that same error object. Each
    error carries ``provider="google"``, the 0-based ``event_index`` and ``wire_type`` where
    known, and ``turn``: a partial :class:`Turn` with ``calls == ()``. Feeding after a
    successful ``finish`` raises :class:`~callgate.UsageError`; ``finish`` is idempotent.
    Constructor arguments of the wrong type raise :class:`~callgate.UsageError`.
    """

    __slots__ = (
        "_call_ids",
        "_decoder",
        "_error",
        "_events",
        "_finished",
        "_ids",
        "_interaction_id",
        "_known_deltas",
        "_known_steps",
        "_limits",
        "_mode",
        "_n_calls",
        "_opaque",
        "_open",
        "_result",
        "_revision",
        "_routes",
        "_state",
        "_status",
        "_steps",
        "_stream_bytes",
        "_table",
        "_usage",
        "_wire_type",
    )

    def __init__(
        self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION
    ) -> None:
        check_limits_and_revision(limits, baseline)
        self._limits = limits
        self._revision = baseline
        self._known_steps = baseline_steps(baseline)
        self._known_deltas = baseline_deltas(baseline)
        self._routes = delta_routes(baseline)
        table: dict[State, dict[str, tuple[Callable[[dict[str, Any]], None], State]]]
        table = {state: {} for state in State}
        for (state, event_type), (name, target) in TRANSITIONS.items():
            table[state][event_type] = (getattr(self, name), target)
        self._table = table
        self._state = State.START
        self._decoder: SSEDecoder | None = None
        self._mode: str | None = None
        self._error: CallgateError | None = None
        self._result: Turn | None = None
        self._finished = False
        self._events = 0
        self._stream_bytes = 0
        self._wire_type: str | None = None
        self._ids = EventIds()
        self._interaction_id = ""
        self._status = ""
        self._usage: dict[str, Any] | None = None
        self._open: dict[int, StepAccumulator] = {}
        self._steps: list[dict[str, Any]] = []
        self._opaque: list[int] = []
        self._n_calls = 0
        self._call_ids: set[str] = set()

    # -- public feeding ---------------------------------------------------------------

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(_BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
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
        except CallgateError as exc:
            self._fail(exc)

    def feed_event(self, obj: dict[str, Any] | str) -> None:
        """Feed one decoded wire event: a JSON object (e.g. an SDK event's
        ``model_dump(mode="json", by_alias=True, exclude_none=True)``) or the string
        ``"[DONE]"``. The object is copied; later mutation by the caller has no effect.
        Raises like :meth:`feed_bytes`."""
        self._check_usable(_EVENTS)
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
            if obj == DONE:
                self._route(DONE, None, None)
                return
            if type(obj) is not dict:
                raise SchemaError(f"an event must be a JSON object, not {type(obj).__name__}")
            try:
                encoded = canonical_bytes(obj)
            except UsageError as exc:
                raise SchemaError(f"event is not a JSON value: {exc.message}") from None
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
            text = encoded.decode("utf-8")
            copied = loads_strict(text, limits=limits)
            self._route(copied.get("event_type"), copied, encoded)
        except CallgateError as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when no
        ``interaction.completed`` was seen (or SSE framing ended mid-event), or the error
        that failed the parser earlier. Idempotent after success."""
        if self._error is not None:
            raise self._error
        if self._finished and self._result is not None:
            return self._result
        try:
            if self._decoder is not None:
                self._decoder.finish()
            if self._state is State.START or self._state is State.OPEN:
                raise TruncatedStreamError("the stream ended before interaction.completed")
        except CallgateError as exc:
            self._wire_type = None
            self._fail(exc)
        if self._result is None:  # pragma: no cover - TERMINAL always sets it
            raise UsageError("parser reached its terminal without a turn")
        self._finished = True
        return self._result

    # -- routing ----------------------------------------------------------------------

    def _check_usable(self, mode: str) -> None:
        if self._error is not None:
            raise self._error
        if self._finished:
            raise UsageError("the parser was finished; create a new Parser per stream")
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
        handler(obj)  # type: ignore[arg-type]
        self._state = target

    # -- handlers (named in _state.TRANSITIONS) --------------------------------------

    def _on_created(self, obj: dict[str, Any]) -> None:
        interaction = check_lifecycle(obj)
        self._interaction_id = interaction["id"]
        self._status = interaction["status"]

    def _on_status_update(self, obj: dict[str, Any]) -> None:
        interaction_id, status = obj.get("interaction_id"), obj.get("status")
        if type(interaction_id) is not str or type(status) is not str:
            raise SchemaError("status_update needs string 'interaction_id' and 'status'")
        if interaction_id != self._interaction_id:
            raise SequenceError(f"status_update for another interaction {interaction_id!r}")
        self._status = status  # informative only: the terminal's status decides

    def _on_step_start(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        if type(index) is not int or not INT32_MIN <= index <= INT32_MAX:
            raise index_error(index)
        if index in self._open:
            raise SequenceError(f"step.start on index {index}, which is already open")
        step = obj.get("step")
        kind = check_step(step, self._known_steps, self._revision)
        if kind in INPUT_STEPS:
            raise SequenceError(f"a streamed model turn cannot hold a {kind} (input) step")
        limits = self._limits
        if len(self._steps) >= limits.max_items_per_turn:
            raise LimitExceededError(
                "too many steps in one turn",
                limit="max_items_per_turn",
                bound=limits.max_items_per_turn,
                observed=len(self._steps) + 1,
            )
        if kind == CLIENT_STEP:
            call_id = step["id"]  # type: ignore[index]
            if call_id in self._call_ids:
                raise SequenceError(f"duplicate function_call id {call_id!r} in one turn")
            if self._n_calls >= limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many function calls in one turn",
                    limit="max_calls_per_turn",
                    bound=limits.max_calls_per_turn,
                    observed=self._n_calls + 1,
                )
            self._n_calls += 1
            self._call_ids.add(call_id)
        self._open[index] = StepAccumulator(
            step,  # type: ignore[arg-type]
            kind,
            len(self._steps),
            self._routes[kind],
            limits,
        )
        self._steps.append(step)  # type: ignore[arg-type]

    def _on_step_delta(self, obj: dict[str, Any]) -> None:
        # The hot path: one dict lookup for the step, one for the delta kind, one call.
        index = obj.get("index")
        acc = self._open.get(index) if type(index) is int else None
        if acc is None:
            raise index_error(index)
        delta = obj.get("delta")
        if type(delta) is not dict:
            raise SchemaError("step.delta needs a 'delta' object")
        kind = delta.get("type")
        # The routes are keyed by str: a list or object 'type' must not reach the lookup
        # (it is unhashable, and would escape as a bare TypeError).
        apply = acc.routes.get(kind) if type(kind) is str else None
        if apply is None:
            raise self._delta_error(acc, kind)
        apply(acc, delta)

    def _delta_error(self, acc: StepAccumulator, delta_type: Any) -> CallgateError:
        if type(delta_type) is not str:
            return SchemaError("a delta has no string 'type'")
        if delta_type not in self._known_deltas:
            return UnsupportedProviderState(
                f"delta type {delta_type!r} is unknown to contract revision {self._revision}",
                wire_type=delta_type,
            )
        return SequenceError(f"a {delta_type} delta cannot extend a {acc.kind} step")

    def _on_step_stop(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        acc = self._open.pop(index, None) if type(index) is int else None
        if acc is None:
            raise index_error(index)
        self._steps[acc.position] = acc.finish()
        if acc.opaque:
            self._opaque.append(acc.position)

    def _on_completed(self, obj: dict[str, Any]) -> None:
        if self._open:
            raise SequenceError(
                f"interaction.completed while step index(es) {sorted(self._open)} are open"
            )
        interaction = check_lifecycle(obj)
        # Exact equality, "" included: an unstored stream stays unstored to its end.
        if interaction["id"] != self._interaction_id:
            raise SequenceError(f"interaction.completed for another id {interaction['id']!r}")
        self._status = status = interaction["status"]
        usage = interaction.get("usage")
        if usage is not None and type(usage) is not dict:
            raise SchemaError("interaction 'usage' must be an object")
        self._usage = usage
        steps = tuple(self._steps)
        pending = tuple(
            FunctionCall(step["id"], step["name"], step["arguments"], step)
            for step in steps
            if step["type"] == CLIENT_STEP
        )
        calls = release_calls(status, pending, interaction.get("errors"))
        self._result = self._turn(calls)

    def _on_error(self, obj: dict[str, Any]) -> None:
        error = obj.get("error")
        code = message = None
        if type(error) is dict:
            code = error.get("code")
            message = error.get("message")
        raise ProviderError(
            "the provider sent an error event",
            error_type="error",
            error_code=code if type(code) is str else None,
            provider_message=message if type(message) is str else None,
        )

    def _on_early_done(self, obj: None) -> None:
        raise TruncatedStreamError("data: [DONE] arrived before interaction.completed")

    def _on_done(self, obj: None) -> None:
        """``[DONE]`` after the terminal: nothing more may follow."""

    # -- turns and failure ------------------------------------------------------------

    def _turn(self, calls: tuple[FunctionCall, ...]) -> Turn:
        try:
            return make_turn(
                interaction_id=self._interaction_id or None,  # "" = unstored: no id
                status=self._status,
                steps=tuple(self._steps),
                calls=calls,
                usage=self._usage,
                origin="stream",
                revision=self._revision,
                opaque=tuple(sorted(self._opaque)),
            )
        except UsageError as exc:  # only past the digest's own depth bound
            raise SchemaError(f"turn cannot be canonicalised: {exc.message}") from None

    def _fail(self, exc: CallgateError) -> None:
        if exc.provider is None:
            exc.provider = PROVIDER
        if exc.event_index is None and self._events:
            exc.event_index = self._events - 1
        if exc.wire_type is None:
            exc.wire_type = self._wire_type
        if exc.turn is None:
            try:
                exc.turn = self._turn(())
            except CallgateError:
                exc.turn = None
        self._error = exc
        self._result = None
        raise exc


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
