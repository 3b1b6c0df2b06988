"""The ``data:``-only SSE dialect of google-genai's generateContent streams, framed strictly.

It is the dialect google-genai reads (``_api_client._iter_response_stream``). Lines end at
LF, CR or CRLF. A line starting with exactly ``data: `` is data; consecutive data lines
join with ``\\n``; a blank line ends the event; at EOF a pending event is still dispatched
(the SDK flushes it too). Every other non-blank line — ``event:``, ``id:``, ``retry:``, a
``:`` comment, ``data:`` without its space, a byte order mark — sends the SDK down a
brace-balancing path meant for raw error bodies; :class:`DataFramer` refuses it as a
:class:`~callgate.FramingError` instead of guessing
(``contracts/gemini-generate-content.md`` §5.1). Bytes stay bytes until one event is
complete; the JSON layer decodes UTF-8 strictly.
"""

from __future__ import annotations

from .._errors import FramingError, LimitExceededError
from .._limits import Limits

__all__ = ["DataFramer"]

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
