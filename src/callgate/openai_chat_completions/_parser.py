"""The sans-IO Chat Completions stream parser: SSE bytes or decoded chunks -> Turn.

Bytes are decoded by :class:`callgate.sse.SSEDecoder`, the WHATWG event stream the SDK
reads (``: comment`` lines such as OpenRouter's ``: OPENROUTER PROCESSING`` and vLLM's
``: keep-alive`` are skipped; an ``event:`` field is ignored, as the SDK ignores it for
Chat Completions). Data that starts with ``[DONE]`` is the end marker (the SDK's own
test); every other event's data is one strict JSON chunk. Each chunk is classified into
its wire type (``_events.KINDS``) and looked up in the current state's row of
``_state.TRANSITIONS``; the parser is a :class:`callgate._feed.Boundary`, so the input
mode, event counting, the event copy and the one failure path are the kernel's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._errors import SchemaError, SequenceError, TruncatedStreamError, UsageError
from .._feed import BYTES, CAUGHT, EVENTS, Boundary, copy_event, feed_whole, wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ..sse import SSEDecoder
from ._events import DONE_MARKER, K_DELTA, K_DONE, PROVIDER
from ._handlers import Handlers
from ._profiles import Profile, get_profile
from ._state import TRANSITIONS, State
from ._turn import Turn

__all__ = ["Parser", "forced_function", "parse_stream"]

_OPEN = State.OPEN


def check_choice_index(choice_index: Any) -> None:
    if choice_index is not None and (type(choice_index) is not int or choice_index < 0):
        raise UsageError(f"choice_index must be None or an int >= 0, got {choice_index!r}")


def forced_function(tool_choice: Any) -> str | None:
    """The function a request's ``tool_choice`` forces (``{"type": "function",
    "function": {"name": ...}}``), ``None`` for ``auto``/``required``/``none``/absent.
    Any other shape is a :class:`~callgate.UsageError`."""
    if tool_choice is None or tool_choice in ("auto", "required", "none"):
        return None
    if isinstance(tool_choice, Mapping) and tool_choice.get("type") in (
        "function",
        "allowed_tools",
    ):
        if tool_choice["type"] == "allowed_tools":
            return None
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        if type(name) is str and name:
            return name
    raise UsageError(f"tool_choice is not a Chat Completions tool_choice: {tool_choice!r}")


class Parser(Boundary[State]):
    """Incremental parser of one streamed Chat Completion (``stream: true``).

    Feed raw SSE bytes (:meth:`feed_bytes`, any chunking) or decoded chunks
    (:meth:`feed_event`: dicts, the SDK's ``ChatCompletionChunk`` objects as they are, and
    the string ``"[DONE]"`` for the end marker) — not both — then call :meth:`finish`.
    Bytes must end with ``data: [DONE]`` after the finish reason. Events may end at the
    finish reason (and its trailers): the SDK's iterator consumes ``[DONE]`` and never
    yields it, so the finish reason is the terminal a caller of the SDK can show.

    - ``baseline``: a contract revision (:data:`callgate.contracts.REVISIONS`).
    - ``choice_index``: the choice to gate when the request asked for ``n > 1``; without
      it a second choice fails closed.
    - ``tool_choice``: the request's ``tool_choice``, as sent: when it names one function,
      ``finish_reason: "stop"`` with exactly that call releases it (OpenAI's own wire).
    - ``profile``: a compatibility profile name (``"ollama"``, ``"vllm"``, ...) or a
      :class:`Profile`; ``None`` is the strict gate.

    Any ProtocolError leaves the parser failed (every later call re-raises it; its
    ``turn`` is the partial turn, nothing released). Misuse raises
    :class:`~callgate.UsageError` and leaves the parser as it was.
    """

    __slots__ = ("_classify", "_decoder", "_handlers")
    PROVIDER = PROVIDER

    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        baseline: str = CURRENT_REVISION,
        choice_index: int | None = None,
        tool_choice: Any = None,
        profile: str | Profile | None = None,
    ) -> None:
        check_limits_and_baseline(limits, baseline, REVISIONS)
        check_choice_index(choice_index)
        handlers = self._handlers = Handlers(
            limits, baseline, choice_index, forced_function(tool_choice), get_profile(profile)
        )
        self._classify = handlers.classify
        self._bind(limits, TRANSITIONS, handlers, State)
        self._decoder: SSEDecoder | None = None

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> None:
        """Feed raw SSE bytes (any split). Raises a ProtocolError subclass on bad input
        (the parser is then failed), UsageError on misuse (the parser stays usable)."""
        self._check_usable(BYTES)
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise UsageError(f"feed_bytes() takes bytes, not {type(chunk).__name__}")
        self._mode = BYTES
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = SSEDecoder(limits=self._limits)
        try:
            limits, route = self._limits, self._route
            hot, add_calls = self._handlers.hot_delta, self._handlers.add_tool_calls
            for data in decoder.feed_data(chunk):
                self._events += 1  # the decoder bounds the count
                self._wire_type = None
                if data.startswith(DONE_MARKER):
                    self._route_done()
                    continue
                obj = loads_strict(data, limits=limits)
                # An argument delta in OPEN (most of a stream): the delta row's work
                # without the classification and the handler calls.
                if self._state is _OPEN and type(obj) is dict:
                    calls = hot(obj)
                    if calls is not None:
                        self._wire_type = K_DELTA
                        add_calls(calls)
                        continue
                route(obj)
        except CAUGHT as exc:
            self._fail(exc)

    def feed_event(self, obj: Any) -> None:
        """Feed one decoded chunk (a mapping or the SDK's ``ChatCompletionChunk``, copied),
        or ``"[DONE]"``. Raises like :meth:`feed_bytes`."""
        self._check_usable(EVENTS)
        if type(obj) is str and obj == DONE_MARKER:
            self._mode = EVENTS
            try:
                self._count_event()
                self._route_done()
            except CAUGHT as exc:
                self._fail(exc)
            return
        if type(obj) is not dict:
            obj = wire_mapping(obj, "feed_event()")
        self._mode = EVENTS
        try:
            self._wire_type = None
            self._count_event()
            self._route(copy_event(obj, self._limits)[0])
        except CAUGHT as exc:
            self._fail(exc)

    def finish(self) -> Turn:
        """End of input. Returns the :class:`Turn`, or raises: TruncatedStreamError when
        no finish reason arrived, when bytes ended before ``[DONE]`` (or inside an
        event); the refusal or error that failed the parser earlier. Returns the same
        Turn when called again."""
        if self._turn is not None:
            return self._turn  # type: ignore[no-any-return]
        self._check_usable(None)
        try:
            if self._decoder is not None:
                self._decoder.finish()  # TruncatedStreamError inside an event
            state = self._state
            if state is not State.CLOSED and (state is not State.DONE or self._mode == BYTES):
                self._wire_type = None
                what = "data: [DONE]" if state is State.DONE else "a finish_reason"
                raise TruncatedStreamError(
                    f"the stream ended in state {state.value} without {what}: nothing is released"
                )
            turn = self._handlers.final_turn()
        except CAUGHT as exc:
            self._fail(exc)
        self._turn = turn
        return turn

    def _route(self, chunk: Any) -> None:
        if type(chunk) is not dict:
            raise SchemaError("a chat.completion.chunk must be a JSON object")
        kind = self._wire_type = self._classify(chunk)
        entry = self._row.get(kind)
        if entry is None:
            raise SequenceError(f"a {kind} chunk is illegal in state {self._state.value}")
        handler, nxt, row = entry
        handler(chunk)
        self._state, self._row = nxt, row

    def _route_done(self) -> None:
        self._wire_type = K_DONE
        entry = self._row.get(K_DONE)
        if entry is None:
            raise SequenceError(f"[DONE] is illegal in state {self._state.value}")
        handler, nxt, row = entry
        handler(DONE_MARKER)
        self._state, self._row = nxt, row

    def _partial_turn(self) -> Turn | None:
        return self._handlers.partial_turn()


def parse_stream(
    data: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    choice_index: int | None = None,
    tool_choice: Any = None,
    profile: str | Profile | None = None,
) -> Turn:
    """Parse one whole SSE stream (bytes, or an iterable of byte chunks) into a Turn.
    Raises what :meth:`Parser.feed_bytes` and :meth:`Parser.finish` raise."""
    parser = Parser(
        limits=limits,
        baseline=baseline,
        choice_index=choice_index,
        tool_choice=tool_choice,
        profile=profile,
    )
    feed_whole(parser.feed_bytes, data)
    return parser.finish()
