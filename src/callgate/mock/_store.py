"""Stored state: OpenAI responses and Gemini interactions that later requests reference.

The app calls :func:`precheck` before script matching (a ``previous_response_id`` /
``previous_interaction_id`` must resolve to a stored object) and :func:`record` after a
turn is served; :func:`state_routes` adds the GET/DELETE/cancel/resume routes.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ._respond import Reply
from ._state import MockState, Served, Session

__all__ = ["precheck", "record", "state_routes"]


def precheck(
    state: MockState, session: Session, protocol: str, body: dict[str, Any]
) -> Reply | None:
    """The provider's error when the request references state that does not exist."""
    return None


def record(state: MockState, session: Session, protocol: str, served: Served) -> None:
    """Remember what was served (unless the request said ``store: false``)."""
    return None


def state_routes() -> list[Route]:
    return []
