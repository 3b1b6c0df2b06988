"""Canonical Server-Sent Events encoding (the inverse of :class:`SSEDecoder`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._errors import UsageError
from ._event import ServerSentEvent

__all__ = ["encode_event", "encode_json_events"]


def _text_field(name: str, value: object, forbidden: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"ServerSentEvent.{name} must be a str, got {type(value).__name__}")
    for char in forbidden:
        if char in value:
            raise UsageError(f"ServerSentEvent.{name} must not contain {char!r}")
    return value


def encode_event(ev: ServerSentEvent) -> bytes:
    """Encode one event canonically, ending with the blank line that dispatches it.

    Emits ``event:``, ``id:`` and ``retry:`` lines for the fields that are not ``None``,
    then one ``data:`` line per ``"\\n"``-separated line of ``data`` (``""`` gives a single
    empty ``data:`` line, which decodes back to ``""``). Every value is written after
    ``": "``, so a value that itself starts with a space survives decoding.

    Raises :class:`UsageError` for what no SSE stream can carry: CR in any field, LF in
    ``event`` or ``id``, NUL in ``id``, a negative or non-int ``retry``, lone surrogates.
    """
    if not isinstance(ev, ServerSentEvent):
        raise UsageError(f"encode_event() takes a ServerSentEvent, got {type(ev).__name__}")
    out: list[str] = []
    if ev.event is not None:
        out.append("event: " + _text_field("event", ev.event, "\r\n") + "\n")
    if ev.id is not None:
        out.append("id: " + _text_field("id", ev.id, "\r\n\x00") + "\n")
    retry = ev.retry
    if retry is not None:
        if type(retry) is not int or retry < 0:
            raise UsageError(f"ServerSentEvent.retry must be a non-negative int, got {retry!r}")
        try:
            digits = str(retry)
        except ValueError:  # more digits than int -> str conversion allows
            raise UsageError("ServerSentEvent.retry has too many digits") from None
        out.append(f"retry: {digits}\n")
    data = _text_field("data", ev.data, "\r")
    out.extend(f"data: {line}\n" for line in data.split("\n"))
    out.append("\n")
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"ServerSentEvent holds a lone surrogate ({exc.reason})") from None


def encode_json_events(events: Iterable[Mapping[str, Any]], *, name_key: str) -> bytes:
    """Encode wire objects as named SSE events: ``event: <obj[name_key]>`` and one compact
    JSON ``data:`` line each (the framing all three providers use).

    Raises :class:`UsageError` if an object lacks a string ``name_key`` or holds a value
    JSON cannot encode.
    """
    out = []
    for obj in events:
        name = obj.get(name_key)
        if not isinstance(name, str):
            raise UsageError(f"event object has no string {name_key!r}")
        try:
            data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"event object is not JSON: {exc}") from None
        out.append(encode_event(ServerSentEvent(event=name, data=data)))
    return b"".join(out)
