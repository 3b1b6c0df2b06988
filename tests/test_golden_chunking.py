"""Every room's golden streams, cut anywhere, give the turn (or the error) of the whole.

One test for every room (each used to keep its own copy): every ``wire-sse`` fixture
under tests/fixtures/<room>/ is fed byte by byte and at random split points; the outcome
equals the whole stream's -- the same Turn, digest included, or the same error with the
same partial turn.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgate import CallgateError
from callgate._protocols import PROTOCOLS
from callgate.contracts import Fixture, load_fixtures

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = [
    (protocol, fixture)
    for protocol in PROTOCOLS
    for fixture in load_fixtures(FIXTURES / protocol)
    if fixture.layer == "wire-sse"
]
IDS = [f"{protocol}/{fixture.name}" for protocol, fixture in CASES]


def outcome(protocol: str, fixture: Fixture, chunks: list[bytes]) -> Any:
    room = importlib.import_module(f"callgate.{protocol}")
    parser = room.Parser(baseline=fixture.contract_revision)
    try:
        for chunk in chunks:
            parser.feed_bytes(chunk)
        return parser.finish()
    except CallgateError as exc:
        return exc


def same(a: Any, b: Any) -> bool:
    if isinstance(a, CallgateError) or isinstance(b, CallgateError):
        return type(a) is type(b) and a.message == b.message and a.turn == b.turn
    return bool(a == b and a.digest == b.digest)


def test_every_room_has_golden_streams() -> None:
    assert {protocol for protocol, _ in CASES} == set(PROTOCOLS)
    assert len(CASES) >= 30


@pytest.mark.parametrize(("protocol", "fixture"), CASES, ids=IDS)
def test_golden_stream_byte_by_byte_equals_whole(protocol: str, fixture: Fixture) -> None:
    data = fixture.data
    whole = outcome(protocol, fixture, [data])
    assert same(outcome(protocol, fixture, [data[i : i + 1] for i in range(len(data))]), whole)


@pytest.mark.parametrize(("protocol", "fixture"), CASES, ids=IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_golden_stream_random_splits_equal_whole(
    protocol: str, fixture: Fixture, data: st.DataObject
) -> None:
    raw = fixture.data
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=40, unique=True)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert same(outcome(protocol, fixture, chunks), outcome(protocol, fixture, [raw]))
