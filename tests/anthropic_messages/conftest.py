"""pytest fixtures for the anthropic_messages tests (helpers live in anthropic_wire.py)."""

from __future__ import annotations

import pytest

from .wire import sse, tool_turn_events


@pytest.fixture
def tool_turn_bytes() -> bytes:
    """A minimal complete stream with one client call ``c1`` (``lookup``, ``{"q": "a"}``)."""
    return sse(*tool_turn_events(("c1", "lookup", ['{"q":', ' "a"}'])))
