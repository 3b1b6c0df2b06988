"""One response streamed on a WebSocket connection (``mock._ws``), and its steering.

A turn's ``respond.steer`` scripts how the mock answers a steer of that response:
``{"outcome": "steered" | "completed" | "pending" | "failed", "after": n, "code": str}``.
The response stops after ``after`` of its events (default: just before its terminal
event) and waits for the client's steer, so the outcome never depends on timing; other
messages arriving meanwhile are served after it. Outcomes:

- ``steered``: ``response.steer.accepted``, then the response ends ``response.incomplete``
  (``incomplete_details.reason: "steered"``, the items it completed) and the automatic
  successor starts: the next turn, served for the parent's settings with
  ``previous_response_id`` = the parent and the steer's input;
- ``completed``: accepted, the response completes as scripted, then the successor;
- ``pending``: accepted, the response completes, then ``response.steer.pending`` asks for
  its calls' outputs; the steer's input is prepended to the next ``response.create``
  continuing that response on this connection;
- ``failed``: ``response.steer.failed`` with ``code`` (default ``steering_not_supported``),
  the response goes on unchanged.

Steer events number on from the response's ``sequence_number`` (its later events move
up). A steer nothing scripted is refused: ``invalid_input`` (not user messages),
``response_already_completed`` (a response that ended on this connection) or
``response_not_found``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ._providers._kit import Event

if TYPE_CHECKING:
    from ._journal import JournalEntry
    from ._store_state import Record
    from ._ws import Connection

__all__ = ["DEFAULT_CLOSE", "Stream", "unscripted"]

DEFAULT_CLOSE = 1011  # a disconnect fault's close code unless it names one


def _refusal(conn: Connection, target: Any, given: Any, seq: int = 0) -> Event:
    steer = {"input": given, "previous_response_id": target}
    problem = conn.wire.steer_problem(given)
    if problem is not None:
        return conn.wire.failed(steer, "invalid_input", problem, seq)
    if isinstance(target, str) and target in conn.done:
        message = f"Response '{target}' has already completed."
        return conn.wire.failed(steer, "response_already_completed", message, seq)
    message = f"Response '{target}' is not available on this connection."
    return conn.wire.failed(steer, "response_not_found", message, seq)


async def unscripted(conn: Connection, parsed: Any, target: Any, given: Any) -> None:
    """A steer with no running response to take it."""
    event = _refusal(conn, target, given)
    conn.entry(parsed).close(200, [event], "steer")
    await conn.send(event)


class Stream:
    """One response's events on the connection, with its scripted steer."""

    def __init__(
        self, conn: Connection, body: dict[str, Any], lane: str | None, entry: JournalEntry | None
    ) -> None:
        self.conn = conn
        self.wire = conn.wire
        self.body = body
        self.lane = lane
        self.entry = entry
        self.sent: list[Event] = []  # the response's events, as rendered (renumbered)
        self.journaled: list[Any] = []  # what left, as sent
        self.offset = 0  # steer events inserted into the response's numbering
        self.count = 0  # stream events sent
        self.rid: str | None = None
        self.record: Record | None = None
        self.spec: dict[str, Any] | None = None
        self.at = -1
        self.terminal = False
        self.gone = False  # the client left while the response waited
        self.after: tuple[str, list[Any], str, list[Any]] | None = None

    async def run(self, payloads: AsyncIterator[str]) -> None:
        conn = self.conn
        try:
            async for data in payloads:
                if conn.closed:
                    break
                event = _event(data)
                if event is None:  # a malformed frame leaves as it is
                    self.count += 1
                    self.journaled.append(data)
                    await conn.send(data)
                    continue
                if self.offset and isinstance(event.get("sequence_number"), int):
                    event["sequence_number"] += self.offset
                if self.rid is None:
                    self._found(event)
                await self._emit(event)
                self.count += 1
                if self.count == self.at and await self._await_steer():
                    break
        finally:
            closing = getattr(payloads, "aclose", None)
            if closing is not None:
                await closing()
        await self._ended()

    def _found(self, event: Event) -> None:
        self.rid = rid = self.wire.response_id([event])
        if rid is None or self.entry is None:
            return
        session = self.conn.state.session(self.entry.test_id)
        with self.conn.state.lock:
            self.record = record = session.store.get(self.conn.endpoint.protocol, rid)
        spec = None if record is None else record.served.turn.respond.get("steer")
        if isinstance(spec, dict) and record is not None:
            self.spec = spec
            total = len(record.received.events)
            # Before the terminal event at the latest: a steer needs a running response.
            self.at = max(1, min(int(spec.get("after", total - 1)), total - 1))

    async def _emit(self, event: Event) -> None:
        self.sent.append(event)
        if event.get("type") in self.wire.terminals:
            self.terminal = True
        await self._send(event)

    async def _send(self, event: Event) -> Event:
        sent = self.wire.event(event, self.lane)
        self.journaled.append(sent)
        await self.conn.send(sent)
        return sent

    def _next_seq(self) -> int:
        for event in reversed(self.sent):
            seq = event.get("sequence_number")
            if isinstance(seq, int):
                return seq + 1
        return 0

    async def _await_steer(self) -> bool:
        """Wait for the steer of this response; True when the stream stops here."""
        conn, spec, rid = self.conn, self.spec or {}, self.rid or ""
        while True:
            text = await conn.next_message()
            if text is None:  # the client left
                conn.deferred.append(None)
                self.gone = True
                return True
            parsed, problem = conn.parse(text)
            read = conn.wire.read(parsed) if problem is None else None
            if read is None or read.kind != "steer":
                conn.deferred.append(text)  # served after this response
                continue
            entry = conn.entry(parsed)
            answers: list[Any] = []
            entry.close(200, answers, "steer")  # the list fills as the steer is answered
            seq = self._next_seq()
            if read.target != rid or self.wire.steer_problem(read.input) is not None:
                answers.append(await self._send(_refusal(conn, read.target, read.input, seq)))
                self.offset += 1
                self.sent.append(answers[-1])
                continue
            outcome = spec.get("outcome", "steered")
            if outcome == "failed":
                code = str(spec.get("code", "steering_not_supported"))
                steer = {"input": read.input, "previous_response_id": rid}
                message = f"callgate mock: the script fails this steer ({code})."
                answers.append(await self._send(self.wire.failed(steer, code, message, seq)))
                self.offset += 1
                self.sent.append(answers[-1])
                return False
            steer_id = f"steer_{conn.id}_{next(conn.steers)}"
            answers.append(await self._send(self.wire.accepted(steer_id, rid, seq)))
            self.offset += 1
            self.sent.append(answers[-1])
            items = self.wire.steer_input(read.input)
            kind = "pending" if outcome == "pending" else "successor"
            self.after = (kind, items, steer_id, answers)
            if outcome != "steered":
                return False
            ended = self.wire.steered(self.sent, seq + 1)
            if ended is not None:
                await self._emit(ended)
                answers.append(self.journaled[-1])
            return True

    async def _ended(self) -> None:
        conn, rid, record = self.conn, self.rid, self.record
        if rid is not None:
            conn.done.add(rid)
            if record is not None and not record.stored:
                conn.cache.add(rid)
        if self.entry is not None:
            self.entry.response = self.journaled
        if self.gone or conn.closed:
            return
        if not self.terminal:  # a disconnect fault: the socket closes mid-response
            fault = record.served.turn.respond.get("fault") if record is not None else None
            code = fault.get("close_code", DEFAULT_CLOSE) if isinstance(fault, dict) else None
            await conn.close(int(code or DEFAULT_CLOSE), "callgate mock: disconnect fault")
            return
        if self.after is None or rid is None:
            return
        kind, items, steer_id, answers = self.after
        if kind == "pending":
            calls = record.calls if record is not None else ()
            event = self.wire.pending(steer_id, rid, calls, self._next_seq())
            answers.append(await self._send(event))
            conn.queued.setdefault(rid, []).extend(items)
            return
        await conn.create(self.wire.successor(self.body, rid, items), self.lane, None)


def _event(data: str) -> dict[str, Any] | None:
    try:
        event = json.loads(data)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
