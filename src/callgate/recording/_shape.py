"""The schema hash of a recording: the shape of what came back (keys and JSON types, not
values), so two recordings with the same hash exercise the same fields whatever the ids
and texts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, Final

from .._errors import ProtocolError
from .._json import loads_strict

__all__ = ["schema_hash"]


def schema_hash(f: BinaryIO, *, streamed: bool) -> str:
    """The SHA-256 of the sorted shape lines of an SSE file (or of one JSON body)."""
    shape = sorted(_shape_lines(_data_lines(f) if streamed else [f.read().strip()]))
    return hashlib.sha256("\n".join(shape).encode()).hexdigest()


# A line's values blanked out (strings that are not keys -> "", numbers -> 0): lines with
# the same skeleton have the same shape, so each skeleton is parsed and walked once (a
# stream is mostly deltas of one shape).
_STRING_VALUE: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"(?!\s*:)')
_NUMBER: Final = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


_DATA_LINE: Final = re.compile(rb"^data:[ \t]*(\{[^\r\n]*)", re.MULTILINE)


def _data_lines(f: Any) -> Iterator[bytes]:
    """The ``data:`` payloads of an SSE file that start a JSON object, read a block at a
    time (one regex pass per block instead of a Python step per line)."""
    tail = b""
    while True:
        block = f.read(1 << 18)
        if not block:
            break
        block = tail + block
        cut = block.rfind(b"\n") + 1
        tail = block[cut:]
        for m in _DATA_LINE.finditer(block, 0, cut):
            yield m.group(1).rstrip()
    if tail:
        yield from (m.group(1).rstrip() for m in _DATA_LINE.finditer(tail))


def _shape_lines(data: Iterable[bytes]) -> set[str]:
    lines: set[str] = set()
    skeletons: set[bytes] = set()
    seen: set[bytes] = set()
    for text in data:
        if not text.startswith(b"{"):
            continue
        undigited = text.translate(None, b"0123456789")  # cheap first: counters differ
        if undigited in seen:
            continue
        seen.add(undigited)
        skeleton = _NUMBER.sub(b"0", _STRING_VALUE.sub(b'""', text))
        if skeleton in skeletons:
            continue
        skeletons.add(skeleton)
        try:
            _walk_shape(loads_strict(text), "", lines)
        except ProtocolError:
            lines.add("<not json>")
    return lines


def _walk_shape(value: Any, where: str, out: set[str]) -> None:
    if type(value) is dict:
        out.add(f"{where}:object")
        for key, item in value.items():
            _walk_shape(item, f"{where}.{key}", out)
    elif type(value) is list:
        out.add(f"{where}:array")
        for item in value:
            _walk_shape(item, f"{where}[]", out)
    else:
        out.add(f"{where}:{type(value).__name__}")
