"""Gemini generateContent in the mock:
fault roles of wire events, the in-stream error event, truncation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ....gemini_generate_content import _render
from .._gemini_common import error_body
from .._kit import Event

_CODES = {"INVALID_ARGUMENT": 400, "RESOURCE_EXHAUSTED": 429, "UNAVAILABLE": 503}


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    """An ``{"error": ...}`` chunk: ``code`` (digits) is the HTTP code, ``error_type`` the
    Google status (default from the code, else 500 ``INTERNAL``)."""
    given = str(fault.get("code", ""))
    status = fault.get("error_type")
    code = int(given) if given.isdigit() else _CODES.get(status, 500) if status else 500
    if status is None:
        status = error_body(code, "")["error"]["status"]
    return _render.render_error_event(code=code, message=fault.get("message"), status=status)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """A generateContent call is never cut inside its arguments (each arrives whole), so a
    truncation ends the stream before the chunk holding call ``fault["call"]``: EOF with no
    ``finishReason``, which the SDK ends silently and a strict reader refuses."""
    wanted, seen = fault.get("call", 0), 0
    for position, event in enumerate(events):
        for part in event["candidates"][0].get("content", {}).get("parts", ()):
            if "functionCall" in part:
                if seen == wanted:
                    return events[:position]
                seen += 1
    return events[:-1]


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Each call arrives whole in its chunk's parts; the chunk with the ``finishReason`` is
    the terminal (it may carry the turn's last parts too)."""
    candidate = event["candidates"][0]
    parts = candidate.get("content", {}).get("parts", ())
    roles: list[tuple[str, Any]] = [
        ("whole", (id(event), n)) for n, part in enumerate(parts) if "functionCall" in part
    ]
    if "finishReason" in candidate:
        roles.append(("terminal", None))
    return tuple(roles)
