"""The Chat Completions mock serves a compatibility profile's quirks (``respond.profile``):
exactly those of the rules the profile's record relaxes. Both directions: the gate with
that profile releases the served calls; the strict gate, and every profile that does not
relax all of those rules, refuses the same bytes with the typed error of the first rule
it meets."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from callgate import CallgateError, SchemaError, SequenceError, UnsupportedProviderState
from callgate import openai_chat_completions as occ
from callgate.mock import MockServer, ScriptBuilder, ScriptError, call

PROTOCOL = "openai_chat_completions"
CALLS = [call("get_weather", city="Paris"), call("add", a=2, b=3)]
RELEASED = [("get_weather", {"city": "Paris"}), ("add", {"a": 2, "b": 3})]
# What the strict gate raises on each profile's stream: the first relaxed rule it meets.
STRICT = {
    "ollama": SchemaError,  # a whole call without index (then finish_reason "stop")
    "mistral": SchemaError,
    "openrouter": SequenceError,  # "id": "" on a later delta: a changed identity
    "vllm": SequenceError,
    "together": UnsupportedProviderState,  # finish_reason "eos"
}


def _served(profile: str, *, stream: bool = True) -> tuple[bytes, Any]:
    respond: dict[str, Any] = {"text": "Done."} if profile == "together" else {"calls": CALLS}
    script = ScriptBuilder(seed=2).turn(PROTOCOL, profile=profile, chunking={"fixed": 4},
                                        **respond)  # fmt: skip
    with MockServer(script.build()) as server:
        reply = httpx.post(
            f"{server.openai_base_url}/chat/completions",
            headers={"authorization": "Bearer t"},
            json={"model": "m", "stream": stream,
                  "messages": [{"role": "user", "content": "Paris, 2 + 3?"}]},
        )  # fmt: skip
    assert reply.status_code == 200
    return reply.content, (None if stream else reply.json())


def _tool_deltas(data: bytes) -> list[dict[str, Any]]:
    chunks = [json.loads(line[6:]) for line in data.split(b"\n") if line[6:7] == b"{"]
    return [t for c in chunks for ch in c["choices"] for t in ch["delta"].get("tool_calls", ())]


def _parse(data: bytes, profile: str | None) -> occ.Turn:
    return occ.parse_stream(data) if profile is None else occ.parse_stream(data, profile=profile)


def test_every_profile_of_the_room_is_served() -> None:
    assert set(STRICT) == set(occ.PROFILES)


@pytest.mark.parametrize("profile", sorted(occ.PROFILES))
def test_the_served_quirks_are_exactly_the_profiles_rules(profile: str) -> None:
    data, _ = _served(profile)
    rules = set(occ.PROFILES[profile].relaxes)
    assert data.endswith(b"data: [DONE]\n\n")  # no profile relaxes the terminal requirement
    deltas = _tool_deltas(data)
    finish = b'"finish_reason":"stop"' in data
    if profile == "together":
        assert deltas == []
        assert b'"finish_reason":"eos"' in data
        assert not finish
        return
    assert b'"finish_reason":"eos"' not in data
    assert ("missing_tool_index" in rules) == all("index" not in d for d in deltas)
    if "missing_tool_index" in rules:  # each call whole, in one delta
        assert [json.loads(d["function"]["arguments"]) for d in deltas] == [a for _, a in RELEASED]
    assert ("stop_with_calls" in rules) == finish
    assert ("empty_identity" in rules) == any(d.get("id") == "" for d in deltas)
    assert ("empty_identity" in rules) == any(d.get("type") == "" for d in deltas)


@pytest.mark.parametrize("profile", sorted(occ.PROFILES))
def test_the_profile_accepts_what_strict_refuses(profile: str) -> None:
    data, _ = _served(profile)
    turn = _parse(data, profile)
    assert turn.profile == profile
    if profile == "together":
        assert (turn.content, turn.finish_reason) == ("Done.", "eos")
    else:
        assert [(c.name, c.arguments) for c in turn.calls] == RELEASED
    with pytest.raises(STRICT[profile]):
        _parse(data, None)
    rules = set(occ.PROFILES[profile].relaxes)
    for other, record in occ.PROFILES.items():
        if not rules <= set(record.relaxes):
            with pytest.raises(CallgateError):
                _parse(data, other)


@pytest.mark.parametrize("profile", ["ollama", "vllm", "together"])
def test_a_body_carries_the_finish_reason_quirks(profile: str) -> None:
    _, body = _served(profile, stream=False)
    (choice,) = body["choices"]
    expected = "eos" if profile == "together" else "stop"
    assert choice["finish_reason"] == expected
    turn = occ.parse_response(body, profile=profile)
    if profile != "together":
        assert [(c.name, c.arguments) for c in turn.calls] == RELEASED
    with pytest.raises(STRICT[profile] if profile == "together" else SequenceError):
        occ.parse_response(body)


def test_an_unknown_profile_is_refused_at_load() -> None:
    with pytest.raises(ScriptError, match="profile"):
        ScriptBuilder().turn(PROTOCOL, text="x", profile="lmstudio").build()


def test_a_fault_still_finds_its_call_under_a_profile() -> None:
    """``"id": ""`` on the later deltas does not make them look like a call's first."""
    script = ScriptBuilder(seed=2).turn(
        PROTOCOL, profile="openrouter", calls=CALLS, chunking={"fixed": 4},
        fault={"type": "truncate", "call": 1, "keep": 3},
    )  # fmt: skip
    with MockServer(script.build()) as server:
        data = httpx.post(
            f"{server.openai_base_url}/chat/completions",
            headers={"authorization": "Bearer t"},
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "?"}]},
        ).content
    deltas = _tool_deltas(data)
    assert "".join(d["function"]["arguments"] for d in deltas if d["index"] == 1) == '{"a'
    assert b'"finish_reason":"length"' in data
    with pytest.raises(CallgateError, match="length"):
        _parse(data, "openrouter")
