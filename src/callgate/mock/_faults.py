"""Fault injection (scripted per turn, or set at run time per test id) and stream pacing.

The app calls this module at four points: before a request is handled (runtime HTTP
faults), once the next turn is known (scripted HTTP faults, which do not consume the turn,
so an SDK's retry gets the real turn), while a stream is sent (disconnects, error events,
malformed, duplicated or reordered frames, truncation, pacing, never-ending streams), and
for the control routes. The schema is in :mod:`callgate.mock._faults_spec`.

Without pacing a stream leaves **coalesced** in one body message (the fast path: the
rendered bytes as they are). Pacing asks for time to first byte, a per-event delay or
per-event flushing.

Runtime control, scoped by the ``x-callgate-test-id`` header (journaled as ``control``):

- ``POST /_callgate/faults`` ``{"fault": {...}, "pacing": {...}, "times": n,
  "protocol": p}`` arms a fault (and/or pacing) for the next ``times`` (default 1)
  requests of that test id (and protocol): an ``http_error`` answers them before anything
  else; any other fault/pacing applies to the next streamed turns it fits.
- ``GET /_callgate/faults`` lists what is armed; ``DELETE /_callgate/faults`` clears it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._errors import CallgateError
from .._json import loads_strict
from ._faults_spec import (
    RUNTIME,
    STREAM_FAULTS,
    Armed,
    check_fault,
    check_faults,
    check_pacing,
    fits,
)
from ._faults_stream import plan_stream
from ._http import CONVERSATION_HEADER, TEST_ID_HEADER, Reply
from ._providers import PROTOCOLS, provider
from ._script import ScriptError, ScriptTurn
from ._state import MockState, Served, Session

__all__ = [
    "StreamPlan",
    "before_request",
    "check_faults",
    "control_routes",
    "fixture_http_error",
    "http_error_reply",
    "send",
    "stream_plan",
    "turn_http_error",
]

_RUNTIME = RUNTIME


# -- HTTP errors ------------------------------------------------------------------------------

_MESSAGES = {
    400: "callgate mock: scripted bad request",
    401: "callgate mock: scripted authentication failure",
    403: "callgate mock: scripted permission failure",
    404: "callgate mock: scripted not found",
    408: "callgate mock: scripted request timeout",
    409: "callgate mock: scripted conflict",
    429: "callgate mock: scripted rate limit, please retry after the Retry-After delay",
    500: "callgate mock: scripted internal server error",
    503: "callgate mock: scripted service unavailable",
    529: "Overloaded",
}


def http_error_reply(protocol: str, spec: Mapping[str, Any]) -> Reply:
    """The provider's HTTP error for a validated ``http_error`` fault spec.

    A 429 carries ``Retry-After`` (default 1 s) and the provider's rate-limit headers
    (OpenAI ``x-ratelimit-*``, Anthropic ``anthropic-ratelimit-*``; Gemini a RetryInfo in
    the body); ``retry_after`` adds ``Retry-After`` to any other status too.
    """
    status = spec["status"]
    retry = spec.get("retry_after", 1 if status == 429 else None)
    message = spec.get("message") or _MESSAGES[status]
    return provider(protocol).http_error(status, message, retry)


def before_request(state: MockState, session: Session, protocol: str) -> Reply | None:
    """A runtime ``http_error`` armed for this test id (and protocol), if any."""
    with state.lock:
        for armed in session.faults:
            fault = armed.fault
            if (
                armed.origin == _RUNTIME
                and fault is not None
                and fault["type"] == "http_error"
                and armed.protocol in (None, protocol)
            ):
                _use(session, armed)
                return http_error_reply(protocol, fault)
    return None


def turn_http_error(
    state: MockState, session: Session, conversation: str, turn: ScriptTurn | None, protocol: str
) -> Reply | None:
    """The next turn's scripted HTTP error while it has uses left (``times``, default 1).

    The turn is not consumed, so the request after the last use (an SDK retry) gets it.
    Only a request on the turn's own protocol route is answered this way.
    """
    if turn is None or turn.protocol != protocol:
        return None
    fault = turn.respond.get("fault")
    if not fault or fault["type"] != "http_error":
        return None
    with state.lock:
        armed = next((a for a in session.faults if a.origin == turn.location), None)
        if armed is None:
            armed = Armed(fault, None, fault.get("times", 1), protocol, turn.location)
            session.faults.append(armed)
        if armed.remaining <= 0:
            return None
        armed.remaining -= 1
    return http_error_reply(protocol, fault)


def fixture_http_error(served: Served) -> Reply | None:
    """The HTTP error a fixture answers on each of its uses (a use already counted)."""
    fault = served.turn.respond.get("fault")
    if served.serial is None or not fault or fault["type"] != "http_error":
        return None
    return http_error_reply(served.turn.protocol, fault)


def _use(session: Session, armed: Armed) -> None:
    armed.remaining -= 1
    if armed.remaining <= 0 and armed.origin == _RUNTIME:
        session.faults.remove(armed)


# -- streams ----------------------------------------------------------------------------------


def _runtime_stream(
    state: MockState, session: Session, turn: ScriptTurn, events: Any
) -> tuple[dict[str, Any] | None, dict[str, Any] | None] | None:
    with state.lock:
        for armed in session.faults:
            fault = armed.fault
            if (
                armed.origin == _RUNTIME
                and armed.protocol in (None, turn.protocol)
                and (
                    fault is None or (fault["type"] in STREAM_FAULTS and fits(fault, turn, events))
                )
            ):
                _use(session, armed)
                return fault, armed.pacing
    return None


@dataclasses.dataclass(slots=True)
class StreamPlan:
    """What a streamed turn sends: its frames, how they are paced, whether it then hangs."""

    frames: tuple[bytes, ...]
    body: bytes  # all frames joined: what leaves when nothing is paced
    first_byte_s: float = 0.0
    event_delay_s: float = 0.0
    per_event: bool = False
    hold: bool = False
    fault: dict[str, Any] | None = None  # the stream fault applied, if any (for the verdicts)

    @property
    def simple(self) -> bool:
        """Nothing to pace and nothing to hold: the body can leave as one message."""
        return not (self.per_event or self.hold or self.first_byte_s)


def stream_plan(state: MockState, session: Session, served: Served) -> StreamPlan:
    """Decide how a streamed turn leaves. A runtime fault (pacing) armed for the test id
    replaces the turn's own fault (pacing) and is used up by this call."""
    turn, rendered = served.turn, served.rendered
    fault = turn.respond.get("fault")
    pacing = turn.respond.get("pacing")
    if fault is None and pacing is None and not session.faults:
        return StreamPlan(rendered.frames, rendered.sse)  # nothing to cut, pace or hold
    if fault is not None and fault["type"] not in STREAM_FAULTS:
        fault = None
    runtime = _runtime_stream(state, session, turn, rendered.events)
    if runtime is not None:
        fault = runtime[0] or fault
        pacing = runtime[1] or pacing
    pacing = pacing or {}
    if fault is None:
        sent, hold, body = rendered.frames, False, rendered.sse
    else:
        plan = plan_stream(turn.protocol, rendered.events, fault)
        sent, hold = tuple(plan.frames), plan.hold
        body = b"".join(sent)
        with state.lock:  # replayed items are checked against what the client received
            session.store.note_sent(rendered.response_id, plan.events, body)
    delay = pacing.get("event_delay_ms", 0) / 1000
    return StreamPlan(
        frames=tuple(sent),
        body=body,
        first_byte_s=pacing.get("first_byte_ms", 0) / 1000,
        event_delay_s=delay,
        per_event=pacing.get("flush", "per_event" if delay else "coalesce") == "per_event",
        hold=hold,
        fault=fault,
    )


async def send(state: MockState, plan: StreamPlan) -> AsyncIterator[bytes]:
    """The body messages of ``plan``: paced frame by frame, or coalesced into one."""
    if plan.first_byte_s:
        await asyncio.sleep(plan.first_byte_s)
    if plan.per_event:
        for n, frame in enumerate(plan.frames):
            if n and plan.event_delay_s:
                await asyncio.sleep(plan.event_delay_s)
            yield frame
    elif plan.body:
        yield plan.body
    if plan.hold:
        await _hold_until_shutdown(state)


async def _hold_until_shutdown(state: MockState) -> None:
    """Keep the response open until the client leaves (the task is then cancelled) or the
    server shuts down: uvicorn waits for open responses on shutdown, so a held stream
    ends by itself once :class:`MockServer` sets ``state.closing``."""
    while not state.closing.is_set():
        await asyncio.sleep(0.05)


# -- the control endpoint ---------------------------------------------------------------------


def _parse_control(body: Any) -> Armed:
    if not isinstance(body, dict):
        raise ScriptError("the body must be a JSON object", location="")
    unknown = sorted(set(body) - {"fault", "pacing", "times", "protocol"})
    if unknown:
        raise ScriptError(f"unknown key(s) {', '.join(unknown)}", location="")
    if "fault" not in body and "pacing" not in body:
        raise ScriptError("give a 'fault', a 'pacing' or both", location="")
    protocol = body.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        raise ScriptError(f"protocol must be one of {', '.join(PROTOCOLS)}", location="/protocol")
    times = body.get("times", 1)
    if type(times) is not int or times < 1:
        raise ScriptError("times must be an int >= 1", location="/times")
    fault = body.get("fault")
    if fault is not None:
        check_fault(fault, protocol=protocol, location="/fault")
        if "times" in fault:
            raise ScriptError("give 'times' at the top level", location="/fault/times")
    pacing = body.get("pacing")
    if pacing is not None:
        check_pacing(pacing, location="/pacing")
    return Armed(fault, pacing, times, protocol)


async def _control(request: Request) -> Response:
    state: MockState = request.app.state.callgate
    test_id = request.headers.get(TEST_ID_HEADER, state.default_test_id)
    session = state.session(test_id)
    entry = state.journal.begin(
        test_id=test_id,
        conversation=request.headers.get(CONVERSATION_HEADER),
        protocol=None,
        method=request.method,
        path=request.url.path,
        query=request.url.query,
        headers=dict(request.headers),
        body=None,
    )
    status = 200
    answer: dict[str, Any] = {}
    if request.method == "POST":
        raw = await request.body()
        try:
            body = loads_strict(raw)
            entry.body = body
            armed = _parse_control(body)
        except CallgateError as exc:  # ScriptError is one
            entry.body = entry.body if entry.body is not None else raw.decode("utf-8", "replace")
            status, answer = 400, {"error": {"message": str(exc)}}
        else:
            with state.lock:
                session.faults.append(armed)
            answer = {"armed": armed.to_dict()}
    elif request.method == "DELETE":
        with state.lock:
            runtime = [a for a in session.faults if a.origin == _RUNTIME]
            for armed in runtime:
                session.faults.remove(armed)
        answer = {"cleared": len(runtime)}
    if status == 200:
        with state.lock:
            answer["faults"] = [a.to_dict() for a in session.faults if a.origin == _RUNTIME]
    entry.close(status, answer, "control")
    return JSONResponse(answer, status_code=status)


def control_routes() -> list[Route]:
    """``/_callgate/faults``: POST arms, GET lists, DELETE clears (per test id)."""
    return [Route("/_callgate/faults", _control, methods=["GET", "POST", "DELETE"])]
