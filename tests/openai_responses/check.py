"""Shared test helpers: every stream is checked through both entry points (bytes, events)."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import CallgateError
from callgate.openai_responses import Parser, Turn, parse_stream

from .wire import sse

CURRENT = "2026-11"
OLD = "2026-07-21"


def run(events: list[dict[str, Any]], *, baseline: str = CURRENT) -> Turn:
    """Parse ``events`` as SSE bytes and as decoded events; both must give the same turn."""
    turn = parse_stream(sse(events), baseline=baseline)
    assert feed_all(events, baseline) == turn
    return turn


def feed_all(events: list[dict[str, Any]], baseline: str) -> Turn:
    parser = Parser(baseline=baseline)
    for event in events:
        parser.feed_event(event)
    return parser.finish()


def fail(
    events: list[dict[str, Any]], error: type[CallgateError], *, baseline: str = CURRENT
) -> CallgateError:
    """Both entry points must raise exactly ``error`` and release nothing."""
    with pytest.raises(CallgateError) as from_bytes:
        parse_stream(sse(events), baseline=baseline)
    with pytest.raises(CallgateError) as from_events:
        feed_all(events, baseline)
    for info in (from_bytes, from_events):
        assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
        turn = info.value.turn
        assert turn is not None
        assert turn.calls == ()
    assert type(from_bytes.value) is type(from_events.value)
    return from_bytes.value
