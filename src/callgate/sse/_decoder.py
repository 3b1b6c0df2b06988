"""A strict, sans-IO Server-Sent Events decoder.

:class:`SSEDecoder` follows the WHATWG HTML "event stream interpretation" algorithm, with
three deliberate deviations, all of them in the direction of failing closed:

- bytes are decoded as *strict* UTF-8; invalid input raises :class:`FramingError` instead
  of being replaced with U+FFFD;
- a stream that ends mid-event (an unterminated line, or a field seen since the last
  blank line) raises :class:`TruncatedStreamError` from :meth:`SSEDecoder.finish` instead
  of being silently discarded;
- every buffer is bounded by :class:`callgate.Limits`.

The decoder never buffers more than one partial line (at most ``max_line_bytes``) plus the
data of the current event (at most ``max_event_bytes``). Complete lines are decoded and
split per ``feed()`` call with C-level ``bytes``/``str`` operations; Python code runs once
per line, never once per byte, and not even that for a run of one-line ``data:`` events
(``_framing.data_payloads``). :meth:`SSEDecoder.feed_data` gives only the events' data.
"""

from __future__ import annotations

from typing import Any

from .._errors import FramingError, LimitExceededError, TruncatedStreamError, UsageError
from .._limits import DEFAULT_LIMITS, Limits
from ._event import ServerSentEvent
from ._event import new_event as _new_event
from ._event import set_data as _set_data
from ._event import set_event as _set_event
from ._event import set_id as _set_id
from ._event import set_retry as _set_retry
from ._framing import check_line_lengths, data_payloads, line_limit, offset_here

__all__ = ["SSEDecoder", "ServerSentEvent"]

_BOM = b"\xef\xbb\xbf"
# Python refuses int() on strings of more than 4300 digits (CVE-2020-10735 guard).
_MAX_RETRY_DIGITS = 4300
_SLICE_BYTES = 64 * 1024

_OPEN, _FINISHED, _FAILED = 0, 1, 2


class SSEDecoder:
    """Incremental decoder: ``feed()`` bytes in any chunking, then ``finish()``.

    ``feed()`` returns the events completed by that chunk. After ``finish()`` or any
    error, every later call raises :class:`UsageError`.
    """

    __slots__ = (
        "_after_cr",
        "_at_start",
        "_bytes_fed",
        "_dirty",
        "_event_bytes",
        "_event_type",
        "_events",
        "_head",
        "_last_id",
        "_limits",
        "_parts",
        "_pending",
        "_retry",
        "_state",
    )

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS) -> None:
        if not isinstance(limits, Limits):
            raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
        self._limits = limits
        self._state = _OPEN
        self._bytes_fed = 0
        self._events = 0
        self._at_start = True  # a BOM may still be (partly) ahead
        self._head = b""  # a held prefix of the BOM at stream start
        self._pending = bytearray()  # the unterminated partial line, undecoded
        self._after_cr = False  # the last chunk ended with CR: a leading LF is its pair
        self._parts: list[str] = []  # data buffer, one entry per data line
        self._event_bytes = 0  # UTF-8 size of "\n".join(self._parts)
        self._event_type: str | None = None
        self._retry: int | None = None
        self._last_id: str | None = None
        self._dirty = False  # a known field was seen since the last blank line

    @property
    def bytes_fed(self) -> int:
        """Total bytes accepted by ``feed()`` so far (a leading BOM included)."""
        return self._bytes_fed

    @property
    def events_dispatched(self) -> int:
        """Events returned so far."""
        return self._events

    def feed(self, data: bytes | bytearray | memoryview) -> list[ServerSentEvent]:
        """Consume one chunk; return the events it completed, in order."""
        if self._state != _OPEN:
            raise self._closed_error()
        try:
            return self._feed(data, False)
        except BaseException:
            self._state = _FAILED
            raise

    def feed_data(self, data: bytes | bytearray | memoryview) -> list[str]:
        """:meth:`feed` for a reader that uses only each event's ``data`` (the same
        framing, checks and state; ``event``, ``id`` and ``retry`` are still tracked):
        the completed events' data, in order, without building the event objects."""
        if self._state != _OPEN:
            raise self._closed_error()
        try:
            return self._feed(data, True)
        except BaseException:
            self._state = _FAILED
            raise

    def finish(self) -> list[ServerSentEvent]:
        """Signal end of stream. Raises if the stream stopped mid-line or mid-event."""
        if self._state != _OPEN:
            raise self._closed_error()
        try:
            self._finish()
        except BaseException:
            self._state = _FAILED
            raise
        self._state = _FINISHED
        return []

    # -- internals -------------------------------------------------------------------

    def _closed_error(self) -> UsageError:
        if self._state == _FINISHED:
            return UsageError("SSEDecoder was already finished")
        return UsageError("SSEDecoder failed earlier and cannot be used again")

    def _feed(self, data: bytes | bytearray | memoryview, as_data: bool) -> list[Any]:
        if type(data) is not bytes:
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise UsageError(
                    f"SSEDecoder.feed() takes bytes, bytearray or memoryview, "
                    f"got {type(data).__name__}"
                )
            try:
                data = bytes(data)
            except ValueError as exc:  # e.g. a released memoryview
                raise UsageError(f"SSEDecoder.feed() cannot read its argument: {exc}") from None
        if not data:
            return []
        limits = self._limits
        fed = self._bytes_fed + len(data)
        if fed > limits.max_stream_bytes:
            raise LimitExceededError(
                "SSE stream is larger than max_stream_bytes",
                limit="max_stream_bytes",
                bound=limits.max_stream_bytes,
                observed=fed,
                byte_offset=limits.max_stream_bytes,
            )
        self._bytes_fed = fed
        if self._at_start:
            data = self._strip_bom(data)
            if not data:
                return []
        if self._after_cr:
            self._after_cr = False
            if data[0] == 0x0A:  # the LF of a CRLF split across chunks
                data = data[1:]
                if not data:
                    return []
        start = fed - len(data)  # stream offset of data[0]
        cut = data.rfind(b"\n")
        cr = data.rfind(b"\r")
        if cr > cut:
            cut = cr
        pending = self._pending
        bound = limits.max_line_bytes
        if cut < 0:  # no line ending: the partial line grows, within its bound
            size = len(pending) + len(data)
            if size > bound:
                raise line_limit(bound, size, start - len(pending))
            pending += data
            return []
        cut += 1
        if len(pending) + cut > bound:
            check_line_lengths(len(pending), data[:cut], start, bound)
        rest = len(data) - cut
        if rest > bound:
            raise line_limit(bound, rest, start + cut)
        if pending:
            block_start = start - len(pending)
            pending += memoryview(data)[:cut]
            block = bytes(pending)
            pending.clear()
        else:
            block_start = start
            block = data if rest == 0 else data[:cut]
        if rest:
            pending += memoryview(data)[cut:]
        else:
            self._after_cr = data[-1] == 0x0D
        return self._lines(block, block_start, cr >= 0, as_data)

    def _strip_bom(self, data: bytes) -> bytes:
        head = self._head + data if self._head else data
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head  # could still become a BOM
            return b""
        self._at_start = False
        self._head = b""
        return head[len(_BOM) :] if head.startswith(_BOM) else head

    def _lines(self, block: bytes, block_start: int, has_cr: bool, as_data: bool) -> list[Any]:
        """Interpret ``block``: complete lines, each ending in CR, LF or CRLF."""
        size = len(block)
        if size <= _SLICE_BYTES:
            return self._slice(block, block_start, has_cr, as_data)
        # A big block is interpreted in slices cut after LF LF where there is one (so the
        # data-only path sees whole events) or else after an LF (never inside a CRLF):
        # a working set that stays in cache is faster than one pass over megabytes.
        out: list[Any] = []
        pos = 0
        while pos < size:
            cut = block.find(b"\n\n", pos + _SLICE_BYTES) + 2
            if cut < 2:
                cut = block.find(b"\n", pos + _SLICE_BYTES) + 1
            if cut <= 0 or cut == size:
                out += self._slice(block[pos:], block_start + pos, has_cr, as_data)
                break
            out += self._slice(block[pos:cut], block_start + pos, has_cr, as_data)
            pos = cut
        return out

    def _slice(self, block: bytes, block_start: int, has_cr: bool, as_data: bool) -> list[Any]:
        """The events of ``block``: a run of whole ``data:``-only events in the middle
        through :func:`data_payloads`, the rest (an event begun before ``block``, a
        trailing partial event, any other framing) through :meth:`_interpret`."""
        open_event = self._parts or self._dirty
        first = block.find(b"\n\n") + 2 if open_event else 0  # finish it line by line
        last = block.rfind(b"\n\n") + 2
        payloads = None
        if not has_cr and (first >= 2 or not open_event) and last > first:
            payloads = data_payloads(block[first:last], self._limits.max_event_bytes)
        if payloads is None:
            return self._interpret(block, block_start, has_cr, as_data)
        before = self._events
        try:
            out = self._interpret(block[:first], block_start, False, as_data) if first else []
            if self._events + len(payloads) > self._limits.max_events_per_stream:  # raises there
                return out + self._interpret(block[first:], block_start + first, False, as_data)
            self._events += len(payloads)
            if as_data:
                out += payloads
            else:
                for data in payloads:
                    ev = _new_event(ServerSentEvent)
                    _set_event(ev, None)
                    _set_data(ev, data)
                    _set_id(ev, self._last_id)
                    _set_retry(ev, None)
                    out.append(ev)
            if last < len(block):
                out += self._interpret(block[last:], block_start + last, False, as_data)
        except BaseException:
            self._events = before  # as in one _interpret: nothing of a failed block counts
            raise
        return out

    def _interpret(self, block: bytes, block_start: int, has_cr: bool, as_data: bool) -> list[Any]:
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FramingError(
                f"SSE stream is not valid UTF-8 ({exc.reason})",
                byte_offset=block_start + exc.start,
            ) from None
        if has_cr:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        lines.pop()  # the text ends with a line ending: the last piece is always empty

        limits = self._limits
        max_event_bytes = limits.max_event_bytes
        max_events = limits.max_events_per_stream
        all_ascii = text.isascii()
        parts = self._parts
        event_bytes = self._event_bytes
        event_type = self._event_type
        retry = self._retry
        last_id = self._last_id
        dirty = self._dirty
        count = self._events
        out: list[Any] = []
        append = out.append
        it = iter(lines)
        for line in it:
            if line:
                # A comment (leading ":") yields the name "": ignored like unknown fields.
                name, _, value = line.partition(":")
                if value[:1] == " ":
                    value = value[1:]
                if name == "data":
                    size = (
                        len(value) if all_ascii or value.isascii() else len(value.encode("utf-8"))
                    )
                    if parts:
                        size += event_bytes + 1
                    if size > max_event_bytes:
                        raise LimitExceededError(
                            "SSE event data is larger than max_event_bytes",
                            limit="max_event_bytes",
                            bound=max_event_bytes,
                            observed=size,
                            byte_offset=offset_here(block, block_start, lines, it),
                        )
                    event_bytes = size
                    parts.append(value)
                    dirty = True
                elif name == "event":
                    event_type = value
                    dirty = True
                elif name == "id":
                    if "\x00" not in value:
                        last_id = value
                    dirty = True
                elif name == "retry":
                    if value.isascii() and value.isdigit():
                        if len(value) > _MAX_RETRY_DIGITS:
                            value = value.lstrip("0") or "0"
                            if len(value) > _MAX_RETRY_DIGITS:
                                raise FramingError(
                                    "SSE retry value has too many digits",
                                    byte_offset=offset_here(block, block_start, lines, it),
                                )
                        retry = int(value)
                    dirty = True
            else:  # blank line: dispatch
                if parts:
                    if count >= max_events:
                        raise LimitExceededError(
                            "SSE stream has more events than max_events_per_stream",
                            limit="max_events_per_stream",
                            bound=max_events,
                            observed=count + 1,
                            byte_offset=offset_here(block, block_start, lines, it),
                        )
                    count += 1
                    ev = _new_event(ServerSentEvent)
                    _set_event(ev, event_type)
                    _set_data(ev, parts[0] if len(parts) == 1 else "\n".join(parts))
                    _set_id(ev, last_id)
                    _set_retry(ev, retry)
                    append(ev.data if as_data else ev)
                    parts = []
                event_type = None
                retry = None
                dirty = False
        self._parts = parts
        self._event_bytes = event_bytes
        self._event_type = event_type
        self._retry = retry
        self._last_id = last_id
        self._dirty = dirty
        self._events = count
        return out

    def _finish(self) -> None:
        pending = self._head if self._at_start else bytes(self._pending)
        if pending:
            start = self._bytes_fed - len(pending)
            try:
                pending.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FramingError(
                    f"SSE stream is not valid UTF-8 at its end ({exc.reason})",
                    byte_offset=start + exc.start,
                ) from None
            raise TruncatedStreamError(
                "SSE stream ended inside a line (no line ending)", byte_offset=start
            )
        if self._dirty:
            raise TruncatedStreamError(
                "SSE stream ended inside an event (no blank line after its fields)",
                byte_offset=self._bytes_fed,
            )
