"""The decoder's framing helpers: the ``data:``-only fast path and the error offsets.

:func:`data_payloads` recognises, with a few C-level ``bytes`` counts, a run of events
that are each exactly one ``data: `` line ended by LF LF, the only framing OpenAI-style
streams use between events. For such a run the WHATWG algorithm dispatches one event per
line whose data is the line after ``data: ``; the payloads are sliced in one
comprehension instead of being interpreted line by line. Anything else (a comment, an
``event:``/``id:``/``retry:`` field, ``data:`` without its space, a multi-line event, CR
line endings, extra blank lines) is left to the decoder's line interpreter, as is any run
that would cross a limit, so errors and their offsets come from one place.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from .._errors import LimitExceededError

__all__ = ["check_line_lengths", "data_payloads", "line_limit", "offset_here"]

_EOL = re.compile(rb"\r\n|\r|\n")


def data_payloads(run: bytes, max_event_bytes: int) -> list[str] | None:
    """The data of every event of ``run`` if it is n >= 1 events ``data: <line>\\n\\n``
    and no payload can exceed ``max_event_bytes``; ``None`` otherwise (also for invalid
    UTF-8: the line interpreter then reports it with its offset).

    Split at the n - 1 separators ``\\n\\ndata: ``, a run that opens with ``data: `` and
    ends with LF LF holds exactly 2n LFs only if no payload holds one: then each piece is
    the one data line of one event."""
    if not run.startswith(b"data: ") or not run.endswith(b"\n\n"):
        return None
    try:
        text = run.decode("utf-8")
    except UnicodeDecodeError:
        return None
    payloads = text[6:-2].split("\n\ndata: ")
    n = len(payloads)
    if text.count("\n") != 2 * n or len(run) - 8 * n > max_event_bytes:
        return None  # another field, a multi-line event, or a payload perhaps too large
    return payloads


def line_limit(bound: int, observed: int, offset: int) -> LimitExceededError:
    return LimitExceededError(
        "SSE line is longer than max_line_bytes",
        limit="max_line_bytes",
        bound=bound,
        observed=observed,
        byte_offset=offset,
    )


def check_line_lengths(pending_len: int, chunk: bytes, start: int, bound: int) -> None:
    """Raise for the first line of ``pending + chunk`` longer than ``bound``.

    ``chunk`` ends with a line ending and starts at stream offset ``start``; the pending
    partial line (``pending_len`` bytes, no line ending) precedes it.
    """
    lengths = [len(line) for line in _EOL.split(chunk)]
    lengths[0] += pending_len
    for index, length in enumerate(lengths):
        if length > bound:
            offset = _line_start(chunk, start, index)
            raise line_limit(bound, length, offset - pending_len if index == 0 else offset)


def _line_start(block: bytes, block_start: int, index: int) -> int:
    """Stream offset of line ``index`` of ``block`` (error path only)."""
    pos = 0
    for match in islice(_EOL.finditer(block), index):
        pos = match.end()
    return block_start + pos


def offset_here(block: bytes, block_start: int, lines: list[str], it: Any) -> int:
    """Stream offset of the line the loop over ``it`` (an iterator of ``lines``) is on."""
    index = len(lines) - len(list(it)) - 1
    return _line_start(block, block_start, index)
