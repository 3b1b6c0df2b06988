"""One provider request's way through the mock: the pipeline every provider route runs.

:data:`STAGES`, in order: runtime faults → credentials → (the body is read) → the body as a
JSON object → the request's own validity (fields, types, enums, ranges; before the body
is adapted) → the provider's adaptation of the body → scripted HTTP faults → native
checks (stored-object references first, then the provider's continuation rules) → script
match, render, store and stream (with stream faults). The journal entry is opened before
the first stage and closed by whichever stage answers. Every request consumes the next
turn of its conversation in its session; a request that matches no turn gets HTTP 400 in
the provider's own error shape naming each mismatch, and it is recorded. The stages are
synchronous: :class:`Endpoint` runs those before :data:`BODY` as the request arrives, reads
the body (``await``), then runs the rest; :meth:`Endpoint.direct` runs them all for a
request whose body is already in hand (the mock's HTTP/1.1 connection does so, through
:meth:`MockApp.direct <callgate.mock._app.MockApp>`), with no ASGI round trip.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from .._errors import CallgateError
from .._json import loads_strict
from . import _faults, _select, _store, _validate
from ._guard import BodyTooLargeError, error, read_body
from ._http import SSE_HEADERS, Reply, WholeStream, begin_entry, reply_response
from ._journal import JournalEntry
from ._providers import Endpoint as EndpointSpec
from ._providers import provider
from ._providers._media_kit import ELIDE_AT, elide_media
from ._script import ScriptTurn
from ._state import Mismatch, MockState, Session
from ._verdicts import RESUME, reply_facts, turn_facts

__all__ = ["BODY", "STAGES", "Endpoint", "HeldStream", "parse_json", "too_large"]


def too_large(protocol: str | None, entry: JournalEntry, limit: int) -> Response:
    """The journaled 413 for an oversized body (the connection is closed after it)."""
    message = f"Request payload size exceeds the limit: {limit} bytes (got {entry.body_size})."
    reply = Reply(413, error(protocol, 413, message), {"connection": "close"})
    return reply_response(entry, reply, "rejected")


def parse_json(raw: bytes, entry: JournalEntry) -> Any:
    """``raw`` as strict JSON, journaled; raises ``CallgateError``."""
    try:
        body = loads_strict(raw)
    except CallgateError:
        entry.body = raw.decode("utf-8", "replace")
        raise
    # A shallow copy: a provider may rewrite top-level fields of the body it validates
    # (an Anthropic thread ``continue`` becomes the whole history); the journal keeps the wire.
    entry.body = dict(body) if isinstance(body, dict) else body
    if len(raw) >= ELIDE_AT and (b"base64" in raw or b'"data"' in raw):
        entry.body = elide_media(entry.body)  # a digest and size instead of the bytes
    return body


@dataclasses.dataclass(slots=True)
class _Call:
    """One provider request on its way through the pipeline."""

    request: Request
    state: MockState
    protocol: str
    entry: JournalEntry
    session: Session
    conversation: str
    endpoint: Endpoint
    raw: bytes = b""
    body: dict[str, Any] = dataclasses.field(default_factory=dict)
    turn: ScriptTurn | None = None


Stage = Callable[[_Call], Response | None]
"""A pipeline stage: a response ends the request, ``None`` passes it on."""


def _runtime_fault(call: _Call) -> Response | None:
    """A runtime ``http_error`` armed for this test id answers before anything else."""
    reply = _faults.before_request(call.state, call.session, call.protocol)
    return None if reply is None else _http_fault(call, reply)


def _http_fault(call: _Call, reply: Reply) -> Response:
    """A faulted HTTP answer, journaled with the delay it asked for (for the verdicts)."""
    if call.state.verdicts.enabled:
        call.entry.facts = reply_facts(reply)
    return reply_response(call.entry, reply, "fault")


def _credentials(call: _Call) -> Response | None:
    """The provider's credential check (a missing or malformed key is its 401)."""
    reply = call.endpoint.auth(call.request)
    return None if reply is None else reply_response(call.entry, reply, "rejected")


def _json_body(call: _Call) -> Response | None:
    """The body is strict JSON and an object (the provider's 400 otherwise)."""
    entry, error_body = call.entry, call.endpoint.error_body
    try:
        body = parse_json(call.raw, entry)
    except CallgateError as exc:
        message = f"request body is not valid JSON: {exc}"
        return reply_response(entry, Reply(400, error_body(400, message)), "rejected")
    if not isinstance(body, dict):
        reply = Reply(400, error_body(400, "body must be a JSON object"))
        return reply_response(entry, reply, "rejected")
    call.body = body
    return None


def _validity(call: _Call) -> Response | None:
    """The request's own validity against the SDK-generated spec, before adaptation."""
    refused = _validate.request_problem(call.session, call.protocol, call.body)
    if refused is None:
        return None
    switch = provider(call.protocol).validate_switch
    if switch is not None and call.state.verdicts.enabled:
        call.entry.facts = {"check": switch}
    return reply_response(call.entry, refused, "rejected")


def _adapt(call: _Call) -> Response | None:
    """The body as the engine matches it (``Provider.request_body``), or its refusal."""
    adapt = call.endpoint.adapt
    adapted = call.body if adapt is None else adapt(call.request, call.body)
    if isinstance(adapted, Reply):
        return reply_response(call.entry, adapted, "rejected")
    call.body = adapted
    return None


def _scripted_fault(call: _Call) -> Response | None:
    """The next turn's scripted ``http_error`` (the turn is not consumed)."""
    call.turn = turn = _select.next_turn(call.state, call.session, call.conversation)
    reply = _faults.turn_http_error(
        call.state, call.session, call.conversation, turn, call.protocol
    )
    return None if reply is None else _http_fault(call, reply)


def _native_checks(call: _Call) -> Response | None:
    """Stored-object references and the provider's own continuation rules."""
    reply = _validate.check(call.state, call.session, call.protocol, call.body)
    if reply is None:
        return None
    if call.state.verdicts.enabled:
        check = _validate.refusing_check(call.state, call.session, call.protocol, call.body)
        call.entry.facts = None if check is None else {"check": check}
    return reply_response(call.entry, reply, "rejected")


def _match_and_send(call: _Call) -> Response:
    """Match the script's turn, render it, remember it and send it (with stream faults)."""
    state, session, entry = call.state, call.session, call.entry
    outcome = _select.take(state, session, call.conversation, call.protocol, call.body)
    if isinstance(outcome, Mismatch):
        where = f" at {outcome.location}" if outcome.location else ""
        message = f"callgate mock: request does not match the script{where}: " + "; ".join(
            outcome.problems
        )
        body = provider(call.protocol).error_body(400, message)
        entry.close(400, body, "mismatch", outcome.location, outcome.problems)
        return JSONResponse(body, status_code=400)
    reply = _faults.fixture_http_error(outcome)
    if reply is not None:
        return _http_fault(call, reply)
    record = _store.record(state, session, call.protocol, outcome)
    rendered = outcome.rendered
    location = outcome.turn.location
    judged = state.verdicts.enabled
    if rendered.body is not None:
        if judged:
            entry.facts = {"turn": turn_facts(call.protocol, rendered)}
        entry.close(200, rendered.body, "matched", location)
        return JSONResponse(rendered.body, headers={"request-id": rendered.response_id})
    plan = _faults.stream_plan(state, session, outcome)
    if judged:
        facts = turn_facts(
            call.protocol, rendered, sent=plan.body, fault=plan.fault, request=call.body,
            resumable=RESUME,
        )  # fmt: skip
        entry.facts = {"turn": facts}
    if plan.simple:
        # A finite, unpaced stream: one body message, no disconnect-listening task.
        entry.close(200, _text(plan.body), "matched", location)
        return WholeStream(plan.body, rendered.response_id)
    headers = {"request-id": rendered.response_id}

    record.in_flight = True  # until its last byte (a paced stream takes a while)

    async def stream() -> AsyncIterator[bytes]:
        sent: list[bytes] = []
        try:
            async for frame in _faults.send(state, plan):
                sent.append(frame)
                yield frame
        finally:
            with state.lock:
                record.in_flight = False
            text = b"".join(sent).decode("utf-8", "replace")
            entry.close(200, text, "matched", location)

    return HeldStream(
        state, stream(), media_type="text/event-stream", headers={**SSE_HEADERS, **headers}
    )


# Every stage, in the module docstring's order; the body is read before STAGES[BODY].
STAGES: tuple[Stage, ...] = (
    _runtime_fault,
    _credentials,
    _json_body,
    _validity,
    _adapt,
    _scripted_fault,
    _native_checks,
    _match_and_send,
)
BODY = STAGES.index(_json_body)
_BEFORE, _AFTER = STAGES[:BODY], STAGES[BODY:]


def _run(stages: tuple[Stage, ...], call: _Call) -> Response | None:
    for stage in stages:
        response = stage(call)
        if response is not None:
            return response
    return None


class Endpoint:
    """One provider route: ``await endpoint(request)`` reads the body as it arrives;
    :meth:`direct` answers a request whose whole body is already in hand (the same
    pipeline, no ASGI round trips). :meth:`refusal` is the route's check of the path
    itself (``spec.refuse``), for the requests the router, not an exact path, brought."""

    __slots__ = ("adapt", "auth", "error_body", "limit", "protocol", "refuse", "state")

    def __init__(self, state: MockState, protocol: str, spec: EndpointSpec, limit: int):
        self.state = state  # the app's ``state.callgate``, set once in create_app
        self.protocol = protocol
        self.auth = spec.auth
        self.refuse = spec.refuse
        self.limit = limit
        self.error_body = provider(protocol).error_body
        self.adapt = provider(protocol).request_body
        validate = provider(protocol).validate
        if validate is not None:
            validate({})  # compile the request spec now, not during the first request

    def refusal(self, request: Request) -> Response | None:
        """The journaled refusal of the path itself (an unknown API version, say)."""
        reply = None if self.refuse is None else self.refuse(request)
        if reply is None:
            return None
        return reply_response(begin_entry(request, self.state, self.protocol), reply, "rejected")

    async def checked(self, request: Request) -> Response:
        """The route's handler: the path check, then the pipeline."""
        response = self.refusal(request)
        return response if response is not None else await self(request)

    async def __call__(self, request: Request) -> Response:
        call = self._call(request)
        response = _run(_BEFORE, call)
        if response is not None:
            return response
        try:
            call.raw = await read_body(request, call.entry, self.limit)
        except BodyTooLargeError:
            return too_large(self.protocol, call.entry, self.limit)
        return self._after(call)

    def direct(self, request: Request, raw: bytes) -> Response:
        """Answer ``request`` whose body is ``raw`` (at most ``limit`` bytes)."""
        call = self._call(request)
        response = _run(_BEFORE, call)
        if response is not None:
            return response
        call.entry.body_size = len(raw)
        call.raw = raw
        return self._after(call)

    def _call(self, request: Request) -> _Call:
        state = self.state
        entry = begin_entry(request, state, self.protocol)
        return _Call(
            request, state, self.protocol, entry, state.session(entry.test_id),
            entry.conversation or "default", self,
        )  # fmt: skip

    def _after(self, call: _Call) -> Response:
        response = _run(_AFTER, call)
        if response is None:  # pragma: no cover - the last stage always answers
            raise AssertionError("the last stage always answers")
        return response


_TEXTS: dict[bytes, str] = {}


def _text(body: bytes) -> str:
    """``body`` decoded, shared by every entry that journals the same rendered stream."""
    found = _TEXTS.get(body)
    if found is None:
        if len(_TEXTS) >= 256:
            _TEXTS.clear()  # fault plans make new bodies: keep the memo bounded
        found = _TEXTS[body] = body.decode("utf-8", "replace")
    return found


class HeldStream(StreamingResponse):
    """A paced or held stream that :meth:`MockServer.stop` may cancel: it then ends, cut,
    as a complete response rather than as an application error."""

    def __init__(self, state: MockState, content: AsyncIterator[bytes], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._closing = state.closing

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            if not self._closing.is_set():
                raise  # not a shutdown
            await send({"type": "http.response.body", "body": b"", "more_body": False})
