"""One Responses WebSocket connection: server frames in, one gated Turn per response out.

Wire facts: docs/contracts/openai-responses-websocket.md (openai 3.57.0). A text frame is
one JSON event; one socket carries many responses, one at a time per lane (``stream_id``;
absent = the default lane), lanes interleaved. Each response is checked by its own
:class:`~._parser.Parser` (the SSE rules, unchanged: sequence numbers, item lifecycle,
terminal, the gate); the connection only routes events to it, keeps the steering records
(:mod:`._steering`) and says which response is the most recent (the connection-local cache
that ``previous_response_id`` of an unstored response may name: :class:`ConnectionToken`).

What the socket adds to the per-response rules:

- every response's turn is yielded when its terminal arrives, in order; a response that
  ends ``failed`` or ``incomplete`` (``steered`` included) is a Turn with ``error`` set and
  no calls; an ``error`` event ends its lane's response (or the request that never became
  one: ``response_id=None``) at once, and a ``response.failed`` that follows it is checked
  and yields nothing more;
- a response ending ``incomplete`` with reason ``steered`` needs a steer accepted for it;
  its calls are never released, and the next ``response.created`` on its lane (the
  successor) is a new turn that commits the queued steers;
- a response id is used once per connection;
- :meth:`Connection.close` before a running response's terminal (any close code) is a
  :class:`~callgate.TruncatedStreamError`, as EOF is on SSE.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, NoReturn

from .._errors import (
    CallgateError,
    ContinuationError,
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
    at_boundary,
)
from .._feed import CAUGHT, copy_event, wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ._events import BASELINE_EVENTS, PROVIDER
from ._parser import Parser
from ._state import State
from ._steering import STEER_EVENTS, Steer, Steers
from ._turn import Turn

__all__ = ["Connection", "ConnectionToken", "check_token", "parse_connection"]

#: Lanes with a response in flight: the service accepts 32 named ids and the default lane.
MAX_LANES: Final = 33
#: The baselines whose SDK knows the steering events (2.46.0's does not).
_STEERING_BASELINES: Final = frozenset(BASELINE_EVENTS) - {"2026-07-21"}
_ENDED: Final = frozenset({"completed", "incomplete", "failed"})
_MESSAGES, _EVENTS = "messages", "events"
_OPEN, _ERRORED, _DONE = State.OPEN, State.ERRORED, State.DONE


class ConnectionToken:
    """Proof that a continuation is built on the live connection that produced its turn
    (:meth:`Connection.token`). It names the connection's most recent response; it stops
    being valid when the connection closes or fails, or when another response is created
    on it. Not a flag: only the connection that holds the response can make one."""

    __slots__ = ("_connection", "digest", "response_id", "stream_id")

    def __init__(self, connection: Connection, response_id: str, digest: str, lane: str | None):
        self._connection = connection
        self.response_id = response_id
        self.digest = digest
        self.stream_id = lane

    def __repr__(self) -> str:
        return f"<ConnectionToken {self.response_id!r}>"


class Connection:
    """Incremental, sans-IO parser of the server side of one Responses WebSocket.

    Feed each received text frame with :meth:`feed_message` (``str`` or UTF-8 ``bytes``,
    one JSON event) or decoded events with :meth:`feed_event` (mappings, or the SDK's
    event objects as they are); one connection takes one of the two (mixing them is a
    :class:`~callgate.UsageError` that leaves it usable). Each feed returns the turns that
    ended with that event (at most one), in order. Call :meth:`close` when the socket
    closes. ``baseline`` as for :class:`~._parser.Parser`; under ``2026-07-21`` (whose SDK
    has no steering) a steering event fails closed.

    Any ProtocolError leaves the connection failed: every later call re-raises that same
    error, whose ``turn`` is the partial turn of the response it concerns, if any. After
    :meth:`close`, feeding raises :class:`~callgate.UsageError`; ``close`` again is a no-op.
    """

    __slots__ = (
        "_baseline",
        "_closed",
        "_error",
        "_frames",
        "_lane_of",
        "_lanes",
        "_latest",
        "_latest_turn",
        "_limits",
        "_mode",
        "_outcomes",
        "_steering",
        "_steers",
        "_successor_of",
        "_wire_type",
    )

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, baseline: str = CURRENT_REVISION):
        check_limits_and_baseline(limits, baseline, BASELINE_EVENTS)
        self._limits = limits
        self._baseline = baseline
        self._steering = baseline in _STEERING_BASELINES
        self._lanes: dict[str | None, Parser] = {}  # a response in flight, or errored
        self._outcomes: dict[str, str] = {}  # response id -> "" (running) or its status
        # lane -> responses that ended with steers queued, waiting for their successor
        self._successor_of: dict[str | None, list[str]] = {}
        self._lane_of: dict[str, str | None] = {}
        self._steers = Steers(self._outcomes.get)
        self._latest: str | None = None  # the most recently created response
        self._latest_turn: Turn | None = None  # its turn, once it ended
        self._error: CallgateError | None = None
        self._closed = False
        self._mode: str | None = None
        self._frames = 0
        self._wire_type: str | None = None

    # -- public ----------------------------------------------------------------------

    @property
    def steers(self) -> tuple[Steer, ...]:
        """Every steering submission the server reported, in order of its first report."""
        return self._steers.all

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called or the connection failed."""
        return self._closed or self._error is not None

    def feed_message(self, frame: str | bytes) -> tuple[Turn, ...]:
        """Feed one received text frame (one JSON event); return the turns it ended.

        Raises a :class:`~callgate.ProtocolError` subclass on the first violation (the
        connection then stays failed); a frame that is neither ``str`` nor bytes-like, or
        a connection fed with :meth:`feed_event`, is a :class:`~callgate.UsageError` that
        leaves it usable.
        """
        self._check_usable(_MESSAGES)
        if not isinstance(frame, str | bytes | bytearray | memoryview):
            raise UsageError(f"feed_message() takes str or bytes, not {type(frame).__name__}")
        self._mode = _MESSAGES
        self._frames += 1
        try:
            self._wire_type = None
            return self._route(loads_strict(frame, limits=self._limits))
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> tuple[Turn, ...]:
        """Feed one decoded event: a mapping, or an SDK event object as it is (converted
        once, ``to_dict(mode="json")``), copied as strict JSON. Raises like
        :meth:`feed_message`; any other ``obj`` is a :class:`~callgate.UsageError` that
        leaves the connection usable."""
        self._check_usable(_EVENTS)
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()")
        self._mode = _EVENTS
        self._frames += 1
        try:
            self._wire_type = None
            return self._route(copy_event(obj, self._limits)[0])
        except CAUGHT as exc:
            self._fail(exc)

    def close(self, code: int | None = None) -> None:
        """The socket closed (``code``: its close code, if known).

        Raises :class:`~callgate.TruncatedStreamError` if a response was still running
        (whatever the code: nothing of it is released), and re-raises an earlier error.
        Steers accepted but not committed become ``"unknown"``. Idempotent.
        """
        if self._error is not None:
            raise self._error
        if code is not None and type(code) is not int:
            raise UsageError(f"close() takes an int close code, not {type(code).__name__}")
        if self._closed:
            return
        self._closed = True
        self._steers.lost()
        for lane, parser in self._lanes.items():
            if parser.state is _OPEN:
                self._wire_type = None
                partial = parser._handlers.partial_turn()
                err = TruncatedStreamError(
                    f"the connection closed (code {code}) before the terminal event of "
                    f"response {partial.response_id if partial else None!r} on lane {lane!r}"
                )
                err.turn = partial
                self._fail(err)

    def token(self) -> ConnectionToken:
        """A :class:`ConnectionToken` for the connection's most recent response, for
        :func:`~._continuation.build_stateful_continuation` (``connection=``). Raises
        :class:`~callgate.ContinuationError` if the connection is closed or failed, or if
        its most recent response has not ended yet (or none was created)."""
        if self.closed:
            raise ContinuationError("the connection is closed: its responses are not cached")
        turn = self._latest_turn
        if turn is None or turn.response_id != self._latest or turn.response_id is None:
            raise ContinuationError("the connection's most recent response has not ended")
        rid = turn.response_id
        return ConnectionToken(self, rid, turn.digest, self._lane_of[rid])

    # -- internals -------------------------------------------------------------------

    def _check_usable(self, mode: str) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise UsageError("the connection was closed; create a new Connection per socket")
        if self._mode is not None and self._mode != mode:
            raise UsageError("feed_message() and feed_event() cannot be mixed on one connection")

    def _route(self, obj: Any) -> tuple[Turn, ...]:
        if type(obj) is not dict:
            raise SchemaError(f"frame is a JSON {type(obj).__name__}, not an object")
        etype = obj.get("type")
        self._wire_type = etype if type(etype) is str else None
        lane = obj.get("stream_id")
        if lane is not None and type(lane) is not str:
            raise SchemaError("event field 'stream_id' is not a string")
        if etype in STEER_EVENTS:
            if not self._steering:
                raise UnsupportedProviderState(f"{etype} is not in baseline {self._baseline}")
            self._steers.on_event(obj, lane)
            return ()
        parser = self._lanes.get(lane)
        if parser is None:
            parser = self._open_lane(lane)
        elif parser._state is _ERRORED and etype != "response.failed":
            # The errored response already yielded its turn; the lane moves on.
            parser = self._open_lane(lane)
        before = parser._state
        parser._feed_decoded(obj)
        after = parser._state
        if after is _OPEN:
            if before is not _OPEN:
                self._created(obj["response"], lane)
            return ()
        if before is _ERRORED:  # the response.failed after an error event: checked, done
            del self._lanes[lane]
            return ()
        turn: Turn | None
        if after is _DONE:
            del self._lanes[lane]
            try:
                turn = parser.finish()
            except ProviderError as exc:  # failed or incomplete: a turn with its error
                turn = exc.turn
        else:  # an error event: the response (or its request) ends here
            turn = parser._handlers.partial_turn()
        if type(turn) is not Turn:  # pragma: no cover - partial turns of valid JSON build
            raise SchemaError("the response's turn could not be built")
        return (self._ended(turn, lane),)

    def _open_lane(self, lane: str | None) -> Parser:
        if lane not in self._lanes and len(self._lanes) >= MAX_LANES:
            raise LimitExceededError(
                "too many WebSocket lanes with a response in flight",
                limit="lanes",
                bound=MAX_LANES,
                observed=len(self._lanes) + 1,
            )
        parser = Parser(limits=self._limits, baseline=self._baseline)
        parser._socket = True
        self._lanes[lane] = parser
        return parser

    def _created(self, response: dict[str, Any], lane: str | None) -> None:
        rid: str = response["id"]  # the per-response parser checked it is a string
        if rid in self._outcomes:
            raise SequenceError(f"response id {rid!r} was already used on this connection")
        self._outcomes[rid] = ""
        self._lane_of[rid] = lane
        self._latest = rid
        waiting = self._successor_of.get(lane)
        if not waiting:
            return
        # A response on the lane of a parent with queued steers is its successor (the
        # commit point): the one it names, or, naming none, the first still waiting. A
        # response naming another parent is a create the client queued there first.
        named = response.get("previous_response_id")
        if type(named) is not str:
            named = waiting[0]
        if named in waiting:
            waiting.remove(named)
            self._steers.commit(named, rid)

    def _ended(self, turn: Turn, lane: str | None) -> Turn:
        rid = turn.response_id
        if rid is None:  # a request error before any response.created
            return turn
        # An error event ends a response whose last status was still in progress.
        status = turn.status if turn.status in _ENDED else "failed"
        error = turn.error
        steered = turn.status == "incomplete" and error is not None and error.code == "steered"
        if steered and not self._steers.accepted_for(rid):
            raise SequenceError(f"response {rid!r} ended steered, but no steer was accepted")
        self._outcomes[rid] = status or "failed"
        if self._steers.accepted_for(rid):
            self._successor_of.setdefault(lane, []).append(rid)
        if rid == self._latest:
            self._latest_turn = turn
        return turn

    def _fail(self, exc: BaseException) -> NoReturn:
        err = at_boundary(
            exc, provider=PROVIDER, event_index=self._frames - 1, wire_type=self._wire_type
        )
        self._error = err
        raise err from err.__cause__


def check_token(token: Any, turn: Turn) -> None:
    """Refuse ``token`` unless it proves that ``turn`` is the most recent response of a
    live connection: :class:`~callgate.UsageError` if it is not a
    :class:`ConnectionToken`, :class:`~callgate.ContinuationError` if its connection is
    closed or failed, another response was created on it since, or ``turn`` is not the
    token's response (another connection's, or another turn)."""
    if not isinstance(token, ConnectionToken):
        raise UsageError(
            f"connection must be a ConnectionToken from Connection.token(), "
            f"not {type(token).__name__}"
        )
    conn = token._connection
    if conn.closed:
        raise ContinuationError("the token's connection is closed: its cache is gone")
    if conn._latest != token.response_id:
        raise ContinuationError(
            f"{token.response_id!r} is no longer the connection's most recent response"
        )
    # The very Turn the connection yielded: an equal turn parsed from another connection
    # (mock ids repeat) names a response this connection's cache does not hold.
    if turn is not conn._latest_turn or turn.digest != token.digest:
        raise ContinuationError("the turn is not the token's response on that connection")


def parse_connection(
    frames: Iterable[str | bytes],
    *,
    close_code: int | None = 1000,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> tuple[Turn, ...]:
    """Parse every received frame of one connection, then its close (``close_code``);
    return one turn per response, in order. Raises what :meth:`Connection.feed_message`
    and :meth:`Connection.close` raise; :class:`~callgate.UsageError` if ``frames`` is a
    ``str``, bytes or not iterable."""
    if isinstance(frames, str | bytes | bytearray) or not isinstance(frames, Iterable):
        raise UsageError(
            f"parse_connection() takes an iterable of frames, not {type(frames).__name__}"
        )
    conn = Connection(limits=limits, baseline=baseline)
    turns: list[Turn] = []
    for frame in frames:
        turns.extend(conn.feed_message(frame))
    conn.close(close_code)
    return tuple(turns)
