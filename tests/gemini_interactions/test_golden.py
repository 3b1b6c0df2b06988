"""Golden fixtures: each stream gives its expected turn whole and as decoded event dicts
through feed_event (byte by byte and at random splits: tests/test_golden_chunking.py)."""

from __future__ import annotations

from typing import Any

import pytest

from callgate.contracts import Fixture, load_fixtures
from callgate.gemini_interactions import Parser, Turn, parse_interaction, parse_stream

from .wire import FIXTURES, summary

ALL = load_fixtures(FIXTURES)
STREAMS = [f for f in ALL if f.layer == "wire-sse"]
BODIES = [f for f in ALL if f.layer == "json-body"]
IDS = [f.name for f in STREAMS]


def _expected(fixture: Fixture) -> dict[str, Any]:
    expected = fixture.expected
    assert expected is not None
    return expected


def _check(turn: Turn, fixture: Fixture) -> None:
    expected = _expected(fixture)
    want = {k: expected[k] for k in summary(turn)}
    assert summary(turn) == want
    assert turn.origin == expected["source"]
    assert turn.baseline == fixture.contract_revision
    if "text" in expected:
        texts = [
            block["text"]
            for step in turn.steps
            if step["type"] == "model_output"
            for block in step["content"]
        ]
        assert "".join(texts) == expected["text"]
        assert turn.text == expected["text"]
    blocks = [
        block
        for step in turn.steps
        if step["type"] == "model_output"
        for block in step.get("content", [])
    ]
    assert turn.text == "".join(b["text"] for b in blocks if b["type"] == "text")


def test_fixture_set_covers_both_baselines_and_layers() -> None:
    assert len(STREAMS) >= 6
    assert len(BODIES) >= 2
    assert {f.contract_revision for f in STREAMS} == {"2026-07-21", "2026-11"}
    assert all(f.api_version == "v1" for f in ALL)


@pytest.mark.parametrize("fixture", STREAMS, ids=IDS)
def test_golden_stream_whole(fixture: Fixture) -> None:
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    _check(turn, fixture)


@pytest.mark.parametrize("fixture", STREAMS, ids=IDS)
def test_golden_stream_as_event_dicts(fixture: Fixture) -> None:
    parser = Parser(baseline=fixture.contract_revision)
    for _, obj in fixture.wire_events():
        parser.feed_event(obj)
    turn = parser.finish()
    _check(turn, fixture)
    assert turn.digest == parse_stream(fixture.data, baseline=fixture.contract_revision).digest


@pytest.mark.parametrize("fixture", BODIES, ids=[f.name for f in BODIES])
def test_golden_body(fixture: Fixture) -> None:
    source = _expected(fixture)["source"]
    turn = parse_interaction(fixture.body(), source=source, baseline=fixture.contract_revision)
    _check(turn, fixture)
    # the raw bytes give the same turn as the decoded object
    assert parse_interaction(fixture.data, source=source) == turn


def test_golden_turn_is_frozen_and_digest_is_stable() -> None:
    fixture = STREAMS[0]
    first = parse_stream(fixture.data, baseline=fixture.contract_revision)
    second = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert first.digest == second.digest
    assert len(first.digest) == 64
    with pytest.raises(AttributeError):
        first.status = "completed"  # type: ignore[misc]


def test_committed_fixtures_equal_their_generator() -> None:
    """The golden files are reproducible from gemini_make_fixtures.py (no hand drift)."""
    from .make_fixtures import FILES

    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in {".sse", ".json"}}
    assert on_disk == set(FILES)
    for name, data in FILES.items():
        assert (FIXTURES / name).read_bytes() == data, name
