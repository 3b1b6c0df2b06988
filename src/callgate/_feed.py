"""The parser boundary every room shares: what a ``Parser`` does around its table.

Every room's ``Parser`` is a :class:`Boundary`: it holds the room's
``TRANSITIONS[(state, wire type)] -> (handler name, next state)`` bound to the room's
handlers one way (:meth:`Boundary._bind`: per state, a row ``wire type -> (bound
handler, next state, next state's row, *extras)``, so the hot path hashes one ``str``),
and the mechanics the four rooms share:

- the input-mode check (:meth:`Boundary._check_usable`): a failed parser re-raises its
  error, a finished one refuses input, ``feed_bytes`` and ``feed_event`` never mix;
- event counting (:meth:`Boundary._count_event`, ``max_events_per_stream``; in bytes
  mode the framer bounds the count and the parser only adds one per event);
- the one event copy (:func:`copy_event`): a fed event is copied as strict JSON, so a
  later change to the caller's object cannot reach the turn;
- the one failure path (:meth:`Boundary._fail`): the error converted once by
  :func:`~callgate._errors.at_boundary`, remembered, the parser in ``FAILED``.

What ``feed_event`` and ``parse_response`` take (:func:`wire_mapping`): a decoded wire
object is a mapping, or an official SDK object, converted here once, in the JSON mode
that keeps wire values (strings, never ``datetime`` or ``bytes``) and wire field names:

- openai, anthropic and the google-genai Interactions models: ``to_dict(mode="json")``
  (their generated base models: aliases = wire names, only the fields the wire set);
- the other google-genai models (generateContent): pydantic
  ``model_dump(mode="json", by_alias=True, exclude_none=True)`` (aliases = the wire's
  camelCase; ``exclude_none`` drops the fields the wire did not send, which the SDK holds
  as ``None``).

A plain dict passes first, untouched (the hot path pays one type check). Anything else is
a :class:`~callgate.UsageError` that leaves the parser as it was.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, Generic, NoReturn, TypeVar

from ._digest import canonical_bytes
from ._errors import (
    STRAY_ERRORS,
    CallgateError,
    JSONError,
    LimitExceededError,
    UsageError,
    at_boundary,
)
from ._json import loads_strict
from ._limits import Limits

__all__ = [
    "BYTES",
    "CAUGHT",
    "EVENTS",
    "SDK_HINT",
    "Boundary",
    "copy_event",
    "feed_whole",
    "wire_mapping",
]

#: The two input modes of a parser.
BYTES: Final = "bytes"
EVENTS: Final = "events"
#: What the boundary converts: callgate's own errors, and what a handler's bug could raise.
CAUGHT: Final = (CallgateError, *STRAY_ERRORS)
#: The fix a :class:`~callgate.JSONError` from ``feed_event`` names.
SDK_HINT: Final = 'feed the SDK event itself, or its to_dict(mode="json")'

S = TypeVar("S", bound=enum.Enum)


def wire_mapping(obj: Any, what: str, *, sdk_only: Collection[str] = ()) -> Mapping[str, Any]:
    """``obj`` as a wire mapping: a mapping as it is, an SDK object converted once.

    ``sdk_only`` names top-level fields the SDK adds to a converted object that no wire
    carries (google-genai's ``sdkHttpResponse``...): they are dropped. Raises
    :class:`UsageError` (naming ``what``, the callable) for any other type, or for an SDK
    object whose conversion fails or does not give a JSON object.
    """
    if type(obj) is dict or isinstance(obj, Mapping):
        return obj
    kind = type(obj)
    try:
        if callable(getattr(kind, "to_dict", None)):
            value = obj.to_dict(mode="json")
        elif callable(getattr(kind, "model_dump", None)):
            value = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            raise UsageError(
                f"{what} takes a mapping or an official SDK object, not {kind.__name__}"
            )
    except UsageError:
        raise
    except Exception as exc:  # an SDK's own serialisation error, whatever its class
        raise UsageError(f"{what}: the {kind.__name__} could not be converted: {exc}") from exc
    if type(value) is not dict:
        raise UsageError(f"{what}: the {kind.__name__} did not convert to a JSON object")
    for key in sdk_only:
        value.pop(key, None)
    return value


def copy_event(obj: Any, limits: Limits, what: str = "event") -> tuple[Any, bytes]:
    """The one event copy: ``obj`` (an event, or a value inside one) re-decoded from its
    canonical JSON (what :func:`callgate._json.json_copy` does), and that JSON.

    The copy is strict JSON within every bound of ``limits``, exactly as if it had come as
    wire bytes, and shares nothing with ``obj``. A value that is not JSON is a
    :class:`~callgate.JSONError` naming ``what`` and the SDK fix; a bound crossed is a
    :class:`~callgate.LimitExceededError`.
    """
    if type(obj) is not dict and isinstance(obj, Mapping):
        obj = dict(obj)
    try:
        encoded = canonical_bytes(obj)
    except UsageError as exc:
        raise JSONError(f"{what} is not a JSON value: {exc.message} ({SDK_HINT})") from None
    # Canonical bytes are valid UTF-8; loads_strict reads the text a little faster.
    return loads_strict(encoded.decode("utf-8"), limits=limits), encoded


class Boundary(Generic[S]):
    """The boundary mechanics of a room's ``Parser`` (see the module docstring).

    A room's parser subclass names its ``PROVIDER``, calls :meth:`_bind` in its
    ``__init__`` and defines :meth:`_partial_turn`; its ``feed_bytes`` / ``feed_event`` /
    ``finish`` call :meth:`_fail` from ``except CAUGHT``. ``_events`` is the number of
    events seen; an error's ``event_index`` is ``_events - 1`` (the event being handled,
    or the last one at ``finish``) and its ``wire_type`` is ``_wire_type``, the type of
    the event being handled where known. ``_turn`` is the Turn a successful ``finish``
    returned.
    """

    __slots__ = (
        "_error",
        "_events",
        "_limits",
        "_mode",
        "_row",
        "_rows",
        "_state",
        "_turn",
        "_wire_type",
    )

    PROVIDER: str = ""
    _error: CallgateError | None
    _events: int
    _limits: Limits
    _mode: str | None
    _row: dict[str, tuple[Any, ...]]
    _rows: dict[S, dict[str, tuple[Any, ...]]]
    _state: S
    _turn: Any
    _wire_type: str | None

    def _bind(
        self,
        limits: Limits,
        transitions: Mapping[tuple[S, str], tuple[str, S]],
        handlers: object,
        states: type[S],
        extras: Callable[[str], tuple[Any, ...] | None] | None = None,
    ) -> None:
        """Bind ``transitions`` to ``handlers`` (each handler name is one of its methods)
        and start in ``states.START``. ``extras(wire type)`` adds room data to each entry
        after ``(handler, next state, next row)``; ``None`` leaves the row out (a wire
        type another baseline has)."""
        rows: dict[S, dict[str, tuple[Any, ...]]] = {state: {} for state in states}
        bound: dict[str, Any] = {}
        for (state, key), (name, nxt) in transitions.items():
            more = () if extras is None else extras(key)
            if more is None:
                continue
            method = bound.get(name)
            if method is None:
                method = bound[name] = getattr(handlers, name)
            rows[state][key] = (method, nxt, rows[nxt], *more)
        self._limits = limits
        self._rows = rows
        self._state = states["START"]
        self._row = rows[self._state]
        self._error = None
        self._events = 0
        self._mode = None
        self._turn = None
        self._wire_type = None

    @property
    def state(self) -> S:
        """Where the stream is (see the room's ``TRANSITIONS``); ``FAILED`` after a
        protocol error."""
        return self._state

    def _check_usable(self, mode: str | None) -> None:
        """The input-mode check: raise unless the parser can take input in ``mode``
        (``None``: at ``finish``). A failed parser re-raises its error; a finished one, or
        the other input mode, is a :class:`~callgate.UsageError` that leaves it usable."""
        if self._error is not None:
            raise self._error
        if self._turn is not None:
            raise UsageError("the parser was finished; create a new Parser per stream")
        if mode is not None and self._mode is not None and self._mode != mode:
            raise UsageError("feed_bytes() and feed_event() cannot be mixed on one parser")

    def _count_event(self) -> None:
        """Count one fed event against ``max_events_per_stream``."""
        self._events += 1
        if self._events > self._limits.max_events_per_stream:
            raise LimitExceededError(
                "too many events in one stream",
                limit="max_events_per_stream",
                bound=self._limits.max_events_per_stream,
                observed=self._events,
            )

    def _partial_turn(self) -> Any:
        """The turn so far, with no calls, for the error (``None`` if none can be built)."""
        raise NotImplementedError

    def _fail(self, exc: BaseException) -> NoReturn:
        """The one failure path: convert ``exc`` once, remember it, enter ``FAILED`` and
        raise it (every later call re-raises the same error object)."""
        err = at_boundary(
            exc,
            provider=self.PROVIDER,
            event_index=self._events - 1,
            wire_type=self._wire_type,
            partial_turn=self._partial_turn,
        )
        self._error = err
        self._state = type(self._state)["FAILED"]
        self._row = self._rows[self._state]
        raise err from err.__cause__


# What ``parse_stream`` feeds at once: the SSE decoder returns each call's events as one
# list, and a list of every event of a long stream alive at once costs the cyclic GC more
# than slicing does.
_SLICE: Final = 1 << 16


def feed_whole(feed_bytes: Callable[[bytes], object], data: Any) -> None:
    """What every room's ``parse_stream`` does with its ``data``: bytes in 64 KiB slices
    (at least one call, so an empty stream is fed too), or each chunk of an iterable of
    byte chunks. A ``str``, a mapping or anything not iterable is a UsageError."""
    if isinstance(data, bytes | bytearray | memoryview):
        whole = data if type(data) is bytes else bytes(data)
        for start in range(0, len(whole), _SLICE) or (0,):
            feed_bytes(whole[start : start + _SLICE])
    elif isinstance(data, str | Mapping) or not isinstance(data, Iterable):
        raise UsageError(
            f"parse_stream() takes bytes or an iterable of bytes, not {type(data).__name__}"
        )
    else:
        for chunk in data:
            feed_bytes(chunk)
