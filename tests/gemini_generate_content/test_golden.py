"""Golden fixtures: each stream gives its expected turn whole and as decoded chunk dicts
(byte by byte and at random splits: tests/test_golden_chunking.py); each body gives it
from the mapping, the bytes and the str."""

from __future__ import annotations

from typing import Any

import pytest

from callgate.contracts import Fixture, load_fixtures
from callgate.gemini_generate_content import Parser, Turn, parse_response, parse_stream

from .wire import FIXTURES, summary

ALL = load_fixtures(FIXTURES)
STREAMS = [f for f in ALL if f.layer == "wire-sse"]
BODIES = [f for f in ALL if f.layer == "json-body"]
IDS = [f.name for f in STREAMS]


def _check(turn: Turn, fixture: Fixture) -> None:
    expected = fixture.expected
    assert expected is not None
    assert summary(turn) == expected
    assert turn.baseline == fixture.contract_revision


def test_fixture_set_covers_both_baselines_and_layers() -> None:
    assert len(STREAMS) >= 6
    assert len(BODIES) >= 2
    assert {f.contract_revision for f in ALL} == {"2026-07-21", "2026-11"}
    assert {f.api_version for f in ALL} == {"v1", "v1beta"}


@pytest.mark.parametrize("fixture", STREAMS, ids=IDS)
def test_golden_stream_whole(fixture: Fixture) -> None:
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    _check(turn, fixture)
    assert turn.origin == "stream"


@pytest.mark.parametrize("fixture", STREAMS, ids=IDS)
def test_golden_stream_as_chunk_dicts(fixture: Fixture) -> None:
    parser = Parser(baseline=fixture.contract_revision)
    for _, obj in fixture.wire_events():
        assert isinstance(obj, dict)
        parser.feed_event(obj)
    turn = parser.finish()
    _check(turn, fixture)
    assert turn.digest == parse_stream(fixture.data, baseline=fixture.contract_revision).digest


@pytest.mark.parametrize("fixture", BODIES, ids=[f.name for f in BODIES])
def test_golden_body(fixture: Fixture) -> None:
    turn = parse_response(fixture.body(), baseline=fixture.contract_revision)
    _check(turn, fixture)
    assert turn.origin == "body"
    assert parse_response(fixture.data, baseline=fixture.contract_revision) == turn
    text = fixture.data.decode("utf-8")
    assert parse_response(text, baseline=fixture.contract_revision) == turn


def test_local_ids_are_deterministic_and_positional() -> None:
    (fixture,) = [f for f in STREAMS if f.name == "calls_without_ids_split"]
    turn = parse_stream(fixture.data, baseline=fixture.contract_revision)
    first, second = turn.calls
    assert first.call_id.startswith("gc-local-0-")
    assert second.call_id.startswith("gc-local-1-")
    assert first.provider_id is None
    again = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert [c.call_id for c in again.calls] == [first.call_id, second.call_id]


def test_signatures_stay_on_their_exact_parts() -> None:
    (fixture,) = [f for f in STREAMS if f.name == "parallel_calls_one_chunk"]
    turn = parse_stream(fixture.data)
    parts: list[dict[str, Any]] = list(turn.parts)
    assert parts[0] == {"text": "Checking the weather and time.", "thought": True}
    assert parts[1]["functionCall"]["id"] == "fc-1"
    assert parts[1]["thoughtSignature"] == "c2lnLWEtAAEC/+8="
    assert "thoughtSignature" not in parts[2]
    # the trailing empty signed part is its own part, byte-exact (URL-safe, unpadded)
    assert parts[3] == {"text": "", "thoughtSignature": "c2lnLWItAwQF-_8"}
    assert turn.calls[0].part is parts[1]


def test_golden_turn_is_frozen_and_digest_is_stable() -> None:
    first = parse_stream(STREAMS[0].data, baseline=STREAMS[0].contract_revision)
    second = parse_stream(STREAMS[0].data, baseline=STREAMS[0].contract_revision)
    assert first.digest == second.digest
    assert len(first.digest) == 64
    with pytest.raises(AttributeError):
        first.finish_reason = "STOP"  # type: ignore[misc]


def test_committed_fixtures_equal_their_generator() -> None:
    """The golden files are reproducible from ggc_make_fixtures.py (no hand drift)."""
    from .make_fixtures import FILES

    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in {".sse", ".json"}}
    assert on_disk == set(FILES)
    for name, data in FILES.items():
        assert (FIXTURES / name).read_bytes() == data, name
