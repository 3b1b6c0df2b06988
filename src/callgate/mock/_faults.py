"""Fault injection (scripted per turn, or set at run time per test id).

This module is the seam the app calls at three points: before a request is handled
(runtime HTTP faults), once the next turn is known (scripted HTTP faults, which do not
consume the turn), and while a stream is sent (disconnects, error events, malformed or
duplicated frames, reordering, pacing). Without faults every hook is a pass-through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.routing import Route

from ._respond import Reply
from ._script import ScriptTurn
from ._state import MockState, Served, Session

__all__ = ["before_request", "control_routes", "frames", "turn_http_error"]


def before_request(state: MockState, session: Session, protocol: str) -> Reply | None:
    """A runtime fault that answers this request instead of the script, if any."""
    return None


def turn_http_error(
    state: MockState, session: Session, conversation: str, turn: ScriptTurn | None, protocol: str
) -> Reply | None:
    """A scripted HTTP error for the next turn, if any (the turn is not consumed)."""
    return None


async def frames(state: MockState, session: Session, served: Served) -> AsyncIterator[bytes]:
    """The body messages of a streamed turn, with any stream fault applied."""
    for frame in served.rendered.frames:
        yield frame


def control_routes() -> list[Route]:
    """Routes of the runtime fault-control endpoint."""
    return []
