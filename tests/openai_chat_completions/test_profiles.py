"""Named compatibility profiles, tested both directions: what a profile relaxes passes under
it and is refused without it (and under the profiles that do not relax it); everything else
still refuses under every profile."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from callgate import CallgateError, SchemaError, SequenceError, UnsupportedProviderState, UsageError
from callgate.openai_chat_completions import PROFILES, Profile, parse_stream
from callgate.openai_chat_completions._profiles import RULES

from .wire import ROLE, args, chunk, first, sse, two_calls

WHOLE = {"id": "call_w", "type": "function", "function": {"name": "get", "arguments": '{"a":1}'}}
STREAMS: dict[str, bytes] = {
    # Ollama before 0.4.7 / Mistral: the whole call in one delta, no index.
    "missing_tool_index": sse(
        [ROLE, chunk({"tool_calls": [WHOLE, {**WHOLE, "id": "call_x"}]}), chunk({}, "tool_calls")]
    ),
    # Ollama's older builds, vLLM before #25054: stop beside complete calls.
    "stop_with_calls": sse(two_calls("stop")),
    # OpenRouter, DashScope: "" for id/type/name on continuation deltas.
    "empty_identity": sse(
        [
            ROLE,
            first(0, "call_a", "get"),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "",
                            "type": "",
                            "function": {"name": "", "arguments": '{"a":1}'},
                        }
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ]
    ),
    # Together's Llama models: eos for a natural stop.
    "eos_is_stop": sse([ROLE, chunk({"content": "hi"}), chunk({}, "eos")]),
}
STRICT_ERROR: dict[str, type[CallgateError]] = {
    "missing_tool_index": SchemaError,
    "stop_with_calls": SequenceError,
    "empty_identity": SequenceError,
    "eos_is_stop": UnsupportedProviderState,
}
assert set(STREAMS) == set(STRICT_ERROR) == RULES


def test_at_least_four_profiles_each_a_documented_record_with_public_sources() -> None:
    assert len(PROFILES) >= 4
    for name, profile in PROFILES.items():
        assert profile.name == name
        assert profile.server
        assert profile.relaxes, name
        for rule, sources in profile.relaxes.items():
            assert rule in RULES
            assert sources
            assert all(s.startswith("https://") for s in sources), (name, rule)
    assert {rule for p in PROFILES.values() for rule in p.relaxes} == RULES


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("name", [None, *sorted(PROFILES)])
def test_each_rule_passes_only_under_a_profile_that_relaxes_it(rule: str, name: str | None) -> None:
    data = STREAMS[rule]
    if name is not None and PROFILES[name].allows(rule):
        turn = parse_stream(data, profile=name)
        assert turn.profile == name
        assert turn.finish_reason in ("tool_calls", "stop", "eos")
        return
    with pytest.raises(STRICT_ERROR[rule]):
        parse_stream(data, profile=name)


def test_what_each_relaxation_releases() -> None:
    assert [
        c.call_id for c in parse_stream(STREAMS["missing_tool_index"], profile="mistral").calls
    ] == ["call_w", "call_x"]
    assert [
        c.arguments for c in parse_stream(STREAMS["stop_with_calls"], profile="vllm").calls
    ] == [{"a": 1}, {"b": 2}]
    turn = parse_stream(STREAMS["empty_identity"], profile="openrouter")
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [("call_a", "get", {"a": 1})]
    turn = parse_stream(STREAMS["eos_is_stop"], profile="together")
    assert (turn.finish_reason, turn.text, turn.calls) == ("eos", "hi", ())


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_rest_still_refuses_under_every_profile(name: str) -> None:
    # A partial delta without index (not the whole call) is never keyed by position.
    partial = sse(
        [
            ROLE,
            chunk({"tool_calls": [{"id": "c", "function": {"name": "f"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    with pytest.raises(SchemaError, match="index"):
        parse_stream(partial, profile=name)
    # An empty id on the first delta is a call without an id, whatever the profile.
    no_id = sse([ROLE, first(0, "", "get"), args(0, "{}"), chunk({}, "tool_calls")])
    with pytest.raises(SequenceError, match="no id"):
        parse_stream(no_id, profile=name)
    # A different non-empty id within an index is refused.
    changed = sse(
        [
            ROLE,
            first(0, "call_a", "get"),
            chunk({"tool_calls": [{"index": 0, "id": "call_z"}]}),
            chunk({}, "tool_calls"),
        ]
    )
    with pytest.raises(SequenceError, match="changed its id"):
        parse_stream(changed, profile=name)
    # length is never a stop, eos with calls is not a tool_calls finish.
    with pytest.raises(CallgateError):
        parse_stream(sse(two_calls("length")), profile=name)
    if not PROFILES[name].allows("stop_with_calls"):
        with pytest.raises(CallgateError):
            parse_stream(sse(two_calls("eos")), profile=name)


def test_a_caller_may_build_a_profile_from_the_known_rules_only() -> None:
    mine = Profile(
        "my-server",
        "a local server",
        MappingProxyType({"eos_is_stop": ("https://example.com/notes",)}),
    )
    assert parse_stream(STREAMS["eos_is_stop"], profile=mine).profile == "my-server"
    bad = Profile("bad", "x", MappingProxyType({"no_done_needed": ("https://example.com",)}))
    with pytest.raises(UsageError, match="unknown rule"):
        parse_stream(STREAMS["eos_is_stop"], profile=bad)


@pytest.mark.parametrize("bad", ["OLLAMA", "strict", 3, ["ollama"]])
def test_an_unknown_profile_is_a_usage_error(bad: Any) -> None:
    with pytest.raises(UsageError, match="profile"):
        parse_stream(STREAMS["eos_is_stop"], profile=bad)
