"""The demo's refusal scenarios pass only on a refusal that ran nothing: a turn the gate
releases makes them fail (so `callgate demo` exits 1)."""

from __future__ import annotations

from callgate.demo import _refusals
from callgate.mock import call


def test_a_refusal_scenario_fails_when_the_gate_releases_the_call() -> None:
    lines: list[str] = []
    ok = _refusals._refused(  # a complete turn where a truncated one was scripted
        "openai_responses", "ProviderError", lines.append, seed=7,
        calls=[call("get_weather", city="Paris")],
    )  # fmt: skip
    out = "\n".join(lines)
    assert not ok
    assert "gate released 1 call(s): get_weather" in out
    assert 'ran get_weather({"city": "Paris"})' in out
    assert "the ledger holds no effect" not in out


def test_a_refusal_scenario_passes_on_the_scripted_refusal() -> None:
    lines: list[str] = []
    assert _refusals.interactions_eof(lines.append)
    out = "\n".join(lines)
    assert "gate refused: TruncatedStreamError" in out
    assert "the ledger holds no effect: nothing ran" in out
