"""The bytes of each fixture layer, decoded strictly (see :mod:`._fixtures` for the layers).

``wire-sse`` through :class:`callgate.sse.SSEDecoder` (every event a JSON object or
``[DONE]``, no block without data), ``event-dicts`` one JSON object per line, ``json-body``
one JSON object. All JSON goes through :func:`callgate._json.loads_strict`; a failure is a
:class:`~callgate.ContractError` naming the file, with the underlying error as ``__cause__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

from .._errors import ContractError, ProtocolError
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS
from ..sse import SSEDecoder

__all__ = [
    "DONE",
    "WireEvent",
    "decode_body",
    "decode_lines",
    "decode_utf8",
    "decode_wire",
    "json_object",
]

DONE = "[DONE]"
WireEvent: TypeAlias = tuple[str | None, dict[str, Any] | str]


def decode_utf8(data: bytes, path: Path) -> str:
    if not data:
        raise ContractError(f"{path}: empty stream")
    if data.startswith(b"\xef\xbb\xbf"):
        raise ContractError(f"{path}: byte order mark")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"{path}: invalid UTF-8 at byte {exc.start}") from exc


def json_object(data: bytes | str, path: Path, where: str) -> dict[str, Any]:
    try:
        value = loads_strict(data, limits=DEFAULT_LIMITS)
    except ProtocolError as exc:
        raise ContractError(f"{path}: {where}: invalid JSON: {exc}") from exc
    if type(value) is not dict:
        raise ContractError(f"{path}: {where}: expected a JSON object")
    return value


def _check_dataless_blocks(text: str, path: Path) -> None:
    """WHATWG drops a block with fields but no ``data:`` silently; a fixture may not."""
    fields: list[str] = []
    has_data = False
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in lines:
        if not line:
            if fields and not has_data:
                raise ContractError(f"{path}: empty event (fields {fields} but no data)")
            fields, has_data = [], False
        elif not line.startswith(":"):
            name = line.partition(":")[0]
            fields.append(name)
            has_data = has_data or name == "data"


def decode_wire(data: bytes, path: Path) -> list[WireEvent]:
    text = decode_utf8(data, path)
    decoder = SSEDecoder(limits=DEFAULT_LIMITS)
    try:
        raw = decoder.feed(data)
        raw.extend(decoder.finish())
    except ProtocolError as exc:
        raise ContractError(f"{path}: SSE does not decode: {exc}") from exc
    _check_dataless_blocks(text, path)
    if not raw:
        raise ContractError(f"{path}: SSE stream has no events")
    events: list[WireEvent] = []
    for index, event in enumerate(raw):
        where = f"event {index}"
        if not event.data.strip():
            raise ContractError(f"{path}: {where}: empty event (data is empty or whitespace)")
        if event.data == DONE:
            events.append((event.event, DONE))
        else:
            events.append((event.event, json_object(event.data, path, where)))
    return events


def decode_lines(data: bytes, path: Path) -> list[dict[str, Any]]:
    text = decode_utf8(data, path)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the file
    result: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise ContractError(f"{path}: line {number}: blank line")
        result.append(json_object(line, path, f"line {number}"))
    return result


def decode_body(data: bytes, path: Path) -> dict[str, Any]:
    decode_utf8(data, path)
    return json_object(data, path, "body")
