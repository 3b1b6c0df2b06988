"""The one SSE wire builder the room test helpers share, on top of :mod:`callgate.sse`.

Each room's ``wire.py`` builds its provider's event objects; this turns them into bytes the
same way everywhere: one compact JSON ``data:`` line per object (hostile values such as NaN
are written as given, because red-team tests need them), an ``event:`` line when asked for,
LF or CRLF line ends, and a plain string (``"[DONE]"``) passed through as raw data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from callgate.sse import ServerSentEvent, encode_event


def frame(obj: Any, name: str | None = None, *, crlf: bool = False) -> bytes:
    """One SSE event: ``event: name`` (when given) and the object's compact JSON as data."""
    if isinstance(obj, str):
        data = obj
    else:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    raw = encode_event(ServerSentEvent(event=name, data=data))
    return raw.replace(b"\n", b"\r\n") if crlf else raw


def sse(events: Iterable[Any], *, name_key: str | None = None, crlf: bool = False) -> bytes:
    """Many events; with ``name_key`` each object's ``obj[name_key]`` (when present) names it."""
    out = []
    for obj in events:
        name = obj.get(name_key) if name_key and isinstance(obj, dict) else None
        out.append(frame(obj, name if isinstance(name, str) else None, crlf=crlf))
    return b"".join(out)
