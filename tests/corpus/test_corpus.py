"""Real recorded provider traffic through the public parsers, against written expectations.

Every file under ``tests/fixtures/corpus/<protocol>/`` was recorded from a real API by a public
project's test suite (provenance beside each folder). ``expected.json`` says, per file and per
contract baseline, what the gate must do with it: release these calls (with a few turn facts), or
refuse with this error class. An entry with ``pending_fix`` is a turn callgate gets wrong today;
it is a strict xfail, so the fix turns it red and the mark must come off.

Streams are also fed at random split points and one byte at a time: a parser must reach the same
turn (same digest) or the same error wherever the bytes are cut.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from callgate import (
    CallgateError,
    anthropic_messages,
    gemini_generate_content,
    gemini_interactions,
    openai_chat_completions,
    openai_responses,
)
from callgate.recording import check_no_secrets

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
BASELINES = ("2026-07-21", "2026-11")
ROOMS: dict[str, ModuleType] = {
    "openai_responses": openai_responses,
    "anthropic_messages": anthropic_messages,
    "gemini_generate_content": gemini_generate_content,
    "gemini_interactions": gemini_interactions,
    "openai_chat_completions": openai_chat_completions,
}
# Protocols whose expectations live in their own folder's expected.json (with `profiles`).
OWN_EXPECTED = ("openai_chat_completions",)
# The turn attribute that says how each protocol's turn ended.
ENDING = {
    "openai_responses": "status",
    "anthropic_messages": "stop_reason",
    "gemini_generate_content": "finish_reason",
    "gemini_interactions": "status",
    "openai_chat_completions": "finish_reason",
}
LICENCES = frozenset({"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"})
PROVENANCE_KEYS = frozenset(
    {"repository", "path", "commit", "licence", "copyright", "interaction", "stored", "shows"}
)
SPLITS_PER_STREAM = 4

Outcome = tuple[str, ...]


def _recordings(protocol: str) -> list[str]:
    folder = CORPUS / protocol
    return sorted(
        f"{protocol}/{p.name}"
        for p in folder.iterdir()
        if p.suffix in (".sse", ".json") and p.name not in ("PROVENANCE.json", "expected.json")
    )


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


EXPECTED = _load(CORPUS / "expected.json")
for _protocol in OWN_EXPECTED:
    EXPECTED.update(_load(CORPUS / _protocol / "expected.json"))
GATED_FILES = [name for protocol in ROOMS for name in _recordings(protocol)]
ALL_FILES = GATED_FILES
STREAMS = [name for name in GATED_FILES if name.endswith(".sse")]
# (file, baseline, profile): what a named compatibility profile must make of a recording.
PROFILED = [
    (name, baseline, profile)
    for name, entry in EXPECTED.items()
    for profile in entry.get("profiles", {})
    for baseline in BASELINES
]


def _room(name: str) -> ModuleType:
    return ROOMS[name.split("/", 1)[0]]


def _outcome(run: Callable[[], Any]) -> tuple[Outcome, Any]:
    """What a parse ended in: ("turn", digest) with the turn, or ("refused", class, message)."""
    try:
        turn = run()
    except CallgateError as exc:
        return ("refused", type(exc).__name__, exc.message), None
    return ("turn", turn.digest), turn


def _parse_whole(name: str, baseline: str, **options: Any) -> tuple[Outcome, Any]:
    room, data = _room(name), (CORPUS / name).read_bytes()
    if name.endswith(".sse"):
        return _outcome(lambda: room.parse_stream(data, baseline=baseline, **options))
    return _outcome(lambda: room.parse_response(data, baseline=baseline, **options))


def _feed(name: str, baseline: str, pieces: Iterator[bytes]) -> Outcome:
    def run() -> Any:
        parser = _room(name).Parser(baseline=baseline)
        for piece in pieces:
            parser.feed_bytes(piece)
        return parser.finish()

    return _outcome(run)[0]


def _cases(names: list[str]) -> list[Any]:
    cases = []
    for name in names:
        for baseline in BASELINES:
            entry = EXPECTED.get(name, {}).get(baseline, {})
            marks = []
            if "pending_fix" in entry:
                marks.append(pytest.mark.xfail(reason=entry["pending_fix"], strict=True))
            cases.append(pytest.param(name, baseline, id=f"{name}@{baseline}", marks=marks))
    return cases


def _turn_facts(protocol: str, turn: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    """The facts an expectation names, read from the turn (an unknown fact name is an error)."""
    readers: dict[str, Callable[[], Any]] = {
        ENDING[protocol]: lambda: getattr(turn, ENDING[protocol]),
        "hosted_calls": lambda: [hosted.tool for hosted in turn.hosted_calls],
        "citations": lambda: len(turn.citations),
        "steps": lambda: len(turn.steps),
        "usage": lambda: turn.usage is not None,
        "refusal": lambda: turn.refusal is not None,
    }
    unknown = set(wanted) - set(readers)
    if unknown:
        raise KeyError(f"expected.json names facts the {protocol} turn does not have: {unknown}")
    return {key: readers[key]() for key in wanted}


@pytest.mark.parametrize(("name", "baseline"), _cases(GATED_FILES))
def test_recorded_turn_meets_its_expectation(name: str, baseline: str) -> None:
    expected = dict(EXPECTED[name][baseline])
    outcome, turn = _parse_whole(name, baseline)
    if "refused" in expected:
        assert outcome[0] == "refused", f"accepted, expected {expected['refused']}"
        assert outcome[1] == expected["refused"], outcome
        assert expected.get("because", "") in outcome[2], outcome
        return
    assert outcome[0] == "turn", outcome
    released = expected.pop("released")
    assert [{"name": c.name, "arguments": c.arguments} for c in turn.calls] == released
    protocol = name.split("/", 1)[0]
    facts = {key: value for key, value in expected.items() if key != "pending_fix"}
    assert _turn_facts(protocol, turn, facts) == facts


@pytest.mark.parametrize(("name", "baseline", "profile"), PROFILED)
def test_recorded_turn_meets_its_expectation_under_its_profile(
    name: str, baseline: str, profile: str
) -> None:
    expected = dict(EXPECTED[name]["profiles"][profile])
    outcome, turn = _parse_whole(name, baseline, profile=profile)
    assert outcome[0] == "turn", outcome
    released = expected.pop("released")
    assert [{"name": c.name, "arguments": c.arguments} for c in turn.calls] == released
    assert turn.profile == profile
    protocol = name.split("/", 1)[0]
    assert _turn_facts(protocol, turn, expected) == expected


@pytest.mark.parametrize(("name", "baseline"), _cases(STREAMS))
def test_recorded_stream_is_cut_anywhere(name: str, baseline: str) -> None:
    data = (CORPUS / name).read_bytes()
    whole, _ = _parse_whole(name, baseline)
    rng = random.Random(f"{name}@{baseline}")  # reproducible cuts per file
    for _ in range(SPLITS_PER_STREAM):
        cuts = sorted(rng.sample(range(1, len(data)), k=min(12, len(data) - 1)))
        pieces = (data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True))
        assert _feed(name, baseline, pieces) == whole, cuts
    one_by_one = (data[i : i + 1] for i in range(len(data)))
    assert _feed(name, baseline, one_by_one) == whole


def test_every_gated_recording_has_expectations_for_both_baselines() -> None:
    assert sorted(EXPECTED) == sorted(GATED_FILES)
    for name, entry in EXPECTED.items():
        assert set(entry) - {"note", "profiles"} == set(BASELINES), name
        for baseline in BASELINES:
            outcome = entry[baseline]
            assert ("released" in outcome) != ("refused" in outcome), (name, baseline)
            if "refused" in outcome:
                assert outcome["why_right"], (name, baseline)
                assert "because" in outcome or "pending_fix" in outcome, (name, baseline)


def test_every_profile_expectation_names_a_recording_the_strict_gate_refuses() -> None:
    # Both directions: what a profile relaxes passes under it and is refused without it.
    assert PROFILED
    for name, baseline, _profile in PROFILED:
        assert "refused" in EXPECTED[name][baseline], (name, baseline)


@pytest.mark.parametrize("protocol", list(ROOMS))
def test_every_recording_has_complete_provenance(protocol: str) -> None:
    provenance = _load(CORPUS / protocol / "PROVENANCE.json")
    assert sorted(f"{protocol}/{file}" for file in provenance) == _recordings(protocol)
    for file, entry in provenance.items():
        assert set(entry) >= PROVENANCE_KEYS, file
        assert all(entry[key] not in ("", None) for key in PROVENANCE_KEYS), file
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), file
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", entry["repository"]), file
        assert entry["licence"] in LICENCES, file
        assert type(entry["verified_against_history"]) is bool, file


@pytest.mark.parametrize("name", ALL_FILES)
def test_recording_holds_no_secret(name: str) -> None:
    check_no_secrets({name: (CORPUS / name).read_bytes()})
