"""Conversation scripts: loading, validation with locations, builder parity, chunk plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgate import UsageError
from callgate.mock import Script, ScriptBuilder, ScriptError, call, load_script
from callgate.mock._script import make_splitter

GOOD = {
    "seed": 9,
    "turns": [
        {
            "protocol": "openai_responses",
            "expect": {"model": "gpt-x", "tools": ["get_weather"]},
            "respond": {
                "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                "chunking": {"fixed": 4},
                "interleave": "round_robin",
            },
        },
        {
            "protocol": "openai_responses",
            "expect": {
                "previous_id": "previous",
                "function_results": [{"name": "get_weather", "output": "sunny"}],
            },
            "respond": {"text": "It is sunny."},
        },
    ],
}


def test_file_and_builder_give_the_same_script(tmp_path: Path) -> None:
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(GOOD))
    from_file = load_script(path)
    built = (
        ScriptBuilder(seed=9)
        .turn(
            "openai_responses",
            expect={"model": "gpt-x", "tools": ["get_weather"]},
            calls=[call("get_weather", city="Paris")],
            chunking={"fixed": 4},
            interleave="round_robin",
        )
        .turn(
            "openai_responses",
            expect={
                "previous_id": "previous",
                "function_results": [{"name": "get_weather", "output": "sunny"}],
            },
            text="It is sunny.",
        )
        .build()
    )

    def content(script: Script) -> list[tuple[str, object, object]]:
        return [(t.protocol, t.expect, t.respond) for t in script.conversations["default"]]

    assert content(from_file) == content(built)
    assert from_file.conversations["default"][1].location == "/turns/1"
    assert from_file.seed == built.seed == 9
    assert from_file.path == str(path)


BAD = [
    ("unknown_top_key", {"turns": [], "extra": 1}, "", "unknown key"),
    ("both_turns_and_conversations", {"turns": [1], "conversations": {}}, "", "exactly one"),
    ("empty_conversation", {"turns": []}, "/turns", "non-empty"),
    ("bad_protocol", {"turns": [{"protocol": "chat"}]}, "/turns/0/protocol", "protocol"),
    (
        "unknown_expect_key",
        {"turns": [{"protocol": "openai_responses", "expect": {"modle": "x"}}]},
        "/turns/0/expect",
        "modle",
    ),
    (
        "tools_not_strings",
        {"turns": [{"protocol": "openai_responses", "expect": {"tools": [1]}}]},
        "/turns/0/expect/tools/0",
        "expected str",
    ),
    (
        "result_names_no_call",
        {"turns": [{"protocol": "anthropic_messages", "expect": {"function_results": [{}]}}]},
        "/turns/0/expect/function_results/0",
        "exactly one",
    ),
    (
        "call_arguments_and_raw",
        {
            "turns": [
                {
                    "protocol": "gemini_interactions",
                    "respond": {"calls": [{"name": "f", "arguments": {}, "raw": "{}"}]},
                }
            ]
        },
        "/turns/0/respond/calls/0",
        "not both",
    ),
    (
        "call_without_name",
        {"turns": [{"protocol": "gemini_interactions", "respond": {"calls": [{}]}}]},
        "/turns/0/respond/calls/0/name",
        "expected str",
    ),
    (
        "bad_chunking",
        {"turns": [{"protocol": "openai_responses", "respond": {"chunking": {"fixed": 0}}}]},
        "/turns/0/respond/chunking",
        "chunking",
    ),
    (
        "bad_interleave",
        {"turns": [{"protocol": "openai_responses", "respond": {"interleave": "zigzag"}}]},
        "/turns/0/respond/interleave",
        "interleave",
    ),
    (
        "usage_not_int",
        {"turns": [{"protocol": "openai_responses", "respond": {"usage": {"input_tokens": "1"}}}]},
        "/turns/0/respond/usage/input_tokens",
        "expected int",
    ),
    (
        "named_conversation_location",
        {"conversations": {"a": [{"protocol": "openai_responses", "respond": {"text": 5}}]}},
        "/conversations/a/0/respond/text",
        "expected str",
    ),
]


@pytest.mark.parametrize(
    ("doc", "location", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_invalid_scripts_name_file_and_location(
    tmp_path: Path, doc: object, location: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ScriptError) as info:
        load_script(path)
    assert info.value.path == str(path)
    assert info.value.location == location
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert isinstance(info.value, UsageError)


def test_script_file_must_be_strict_json(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"turns": [], "turns": []}')
    with pytest.raises(ScriptError, match="duplicate"):
        load_script(path)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "nope.json")


def test_builder_validates_too() -> None:
    with pytest.raises(ScriptError, match="protocol"):
        ScriptBuilder().turn("chat_completions", text="x").build()


@pytest.mark.parametrize(
    ("plan", "pieces"),
    [
        ("whole", ["abcdefg"]),
        ("char", list("abcdefg")),
        ({"fixed": 3}, ["abc", "def", "g"]),
    ],
)
def test_chunk_plans(plan: object, pieces: list[str]) -> None:
    assert make_splitter(plan)("abcdefg") == pieces


def test_random_chunk_plan_is_seeded_and_lossless() -> None:
    split = make_splitter({"random": {"seed": 4, "max": 3}})
    text = "the quick brown fox"
    assert "".join(split(text)) == text
    assert split(text) == split(text)
    assert all(1 <= len(p) <= 3 for p in split(text))
    other = make_splitter({"random": {"seed": 5, "max": 3}})
    assert [split(t) for t in ("abcdefghij", text)] != [other(t) for t in ("abcdefghij", text)]


def test_script_is_immutable() -> None:
    script = Script.from_dict(GOOD)
    with pytest.raises(AttributeError):
        script.seed = 3  # type: ignore[misc]
