"""The shipped script schema and the loader agree: every script in the repo is valid under
both, a table of bad scripts is refused by both at the same place, the schema names exactly
the keys and values the code accepts, and a reference validator reads the schema as ours
does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from callgate.contracts import REVISIONS
from callgate.mock import (
    PROTOCOLS,
    VALIDATION_CHECKS,
    Script,
    ScriptError,
    _aux,
    _faults_spec,
    _fixtures,
    _schema,
    _script,
    load_script,
)
from callgate.mock._fixtures import MATCH_KEYS
from callgate.mock._providers import provider

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = _schema.script_schema()
DEFS = SCHEMA["$defs"]


def _served(doc: Any, path: str | None = None) -> Script:
    """Everything a script meets before it is served (load, switches, faults)."""
    from callgate.mock._validate import check_switches

    script = Script.from_dict(doc, path=path)
    check_switches(script)
    _faults_spec.check_faults(script)
    return script


def _repo_scripts() -> list[tuple[str, Any]]:
    """Script files under examples/, and every JSON script block of the docs and README."""
    files = [p for p in sorted((ROOT / "examples").rglob("*.json")) if "node_modules" not in str(p)]
    found = [(str(p.relative_to(ROOT)), json.loads(p.read_text())) for p in files]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"```json\n(.*?)```", page.read_text(), flags=re.S)
        found += [(f"{page.relative_to(ROOT)}#{n}", json.loads(b)) for n, b in enumerate(blocks)]
    return [(name, doc) for name, doc in found if _is_script(doc)]


def _is_script(doc: Any) -> bool:
    """A JSON document that means to be a script (package.json and the like are not)."""
    return isinstance(doc, dict) and bool(
        {"turns", "conversations", "fixtures", "fallback"} & set(doc)
    )


REPO_SCRIPTS = _repo_scripts()


def test_the_repo_has_scripts_to_check() -> None:
    names = [name for name, _ in REPO_SCRIPTS]
    assert any(n.startswith("examples/") for n in names)
    assert sum(n.startswith("docs/scripts.md#") for n in names) >= len(PROTOCOLS)


@pytest.mark.parametrize(("name", "doc"), REPO_SCRIPTS, ids=[n for n, _ in REPO_SCRIPTS])
def test_every_script_in_the_repo_is_valid_under_schema_and_loader(name: str, doc: Any) -> None:
    assert _schema.problems(doc) == []
    _served(doc, path=name)


def _turn(protocol: str = "openai_responses", **parts: Any) -> dict[str, Any]:
    return {"turns": [{"protocol": protocol, **parts}]}


def _respond(protocol: str = "openai_responses", **respond: Any) -> dict[str, Any]:
    return _turn(protocol, respond=respond)


T = "/turns/0"
# (id, document, location, words in the message): each refused by the schema and by the
# loader with the schema switched off, at the same location.
BAD: list[tuple[str, Any, str, str]] = [
    ("not_an_object", [], "", "expected an object"),
    ("unknown_top_key", {"turns": [], "extra": 1}, "", "unknown key(s) extra"),
    ("both_forms", {"turns": [], "conversations": {}}, "", "exactly one"),
    ("neither_form", {"seed": 1}, "", "exactly one"),
    ("seed_too_big", {"seed": 2**64, "turns": []}, "/seed", "expected an int in"),
    ("seed_a_string", {"seed": "1", "turns": []}, "/seed", "expected int"),
    ("bad_baseline", {"baseline": "2025", "turns": []}, "/baseline", "baseline must be one of"),
    ("validation_not_bool", {"validation": {"x": 0}, "turns": []}, "/validation/x", "bool"),
    ("empty_turns", {"turns": []}, "/turns", "non-empty list of turns"),
    ("turns_an_object", {"turns": {}}, "/turns", "non-empty list of turns"),
    ("no_conversation", {"conversations": {}}, "/conversations", "at least one conversation"),
    ("turn_not_object", {"turns": [3]}, T, "expected an object"),
    # order-free fixtures and their match keys
    (
        "fixture_typo",
        {"fixtures": [{"respond": {"text": "x"}, "mtach": {}}]},
        "/fixtures/0",
        "unknown key(s) mtach",
    ),
    (
        "fixture_bad_protocol",
        {"fixtures": [{"protocol": "chat", "respond": {}}]},
        "/fixtures/0/protocol",
        "one of openai_responses",
    ),
    (
        "fallback_typo",
        {"fallback": {"respond": {"text": "x"}, "times": 2}},
        "/fallback",
        "unknown key(s) times",
    ),
    (
        "match_typo",
        {"fixtures": [{"respond": {"text": "x"}, "match": {"last_text": "a"}}]},
        "/fixtures/0/match",
        "last_text",
    ),
    (
        "has_results_not_bool",
        _turn(expect={"has_tool_results": 1}),
        f"{T}/expect/has_tool_results",
        "expected bool",
    ),
    (
        "jsonpath_key_typo",
        _turn(expect={"jsonpath": {"path": "$.a", "exist": True}}),
        f"{T}/expect/jsonpath",
        "unknown key(s) exist",
    ),
    (
        "result_call_and_name",
        _turn(expect={"function_results": [{"name": "f", "call": 0}]}),
        f"{T}/expect/function_results/0",
        "exactly one of 'call_id', 'name' or 'call'",
    ),
    ("unknown_turn_key", _turn(reply={}), T, "unknown key(s) reply"),
    ("no_protocol", {"turns": [{}]}, f"{T}/protocol", "one of openai_responses"),
    ("bad_protocol", _turn("chat"), f"{T}/protocol", "protocol must be one of"),
    ("expect_typo", _turn(expect={"modle": "m"}), f"{T}/expect", "modle"),
    ("model_not_str", _turn(expect={"model": 1}), f"{T}/expect/model", "expected str"),
    ("stream_not_bool", _turn(expect={"stream": "yes"}), f"{T}/expect/stream", "expected bool"),
    ("tools_not_list", _turn(expect={"tools": "f"}), f"{T}/expect/tools", "expected list"),
    ("tool_not_str", _turn(expect={"tools": [1]}), f"{T}/expect/tools/0", "expected str"),
    (
        "result_without_name",
        _turn(expect={"function_results": [{"output": "x"}]}),
        f"{T}/expect/function_results/0",
        "exactly one of 'call_id', 'name' or 'call'",
    ),
    (
        "result_with_both_names",
        _turn(expect={"function_results": [{"name": "f", "call_id": "c"}]}),
        f"{T}/expect/function_results/0",
        "exactly one of 'call_id', 'name' or 'call'",
    ),
    (
        "result_is_error_not_bool",
        _turn(expect={"function_results": [{"name": "f", "is_error": 1}]}),
        f"{T}/expect/function_results/0/is_error",
        "expected bool",
    ),
    ("respond_typo", _respond(txt="x"), f"{T}/respond", "unknown key(s) txt"),
    ("text_not_str", _respond(text=1), f"{T}/respond/text", "expected str"),
    ("calls_not_list", _respond(calls={}), f"{T}/respond/calls", "expected list"),
    ("call_without_name", _respond(calls=[{}]), f"{T}/respond/calls/0/name", "expected str"),
    ("call_typo", _respond(calls=[{"name": "f", "args": {}}]), f"{T}/respond/calls/0", "args"),
    (
        "call_arguments_and_raw",
        _respond(calls=[{"name": "f", "arguments": {}, "raw": "{}"}]),
        f"{T}/respond/calls/0",
        "not both",
    ),
    (
        "arguments_not_object",
        _respond(calls=[{"name": "f", "arguments": [1]}]),
        f"{T}/respond/calls/0/arguments",
        "expected an object",
    ),
    ("call_id_not_str", _respond(calls=[{"name": "f", "id": 7}]), f"{T}/respond/calls/0/id", "str"),
    (
        "reasoning_typo",
        _respond(reasoning={"text": "x"}),
        f"{T}/respond/reasoning",
        "unknown key(s) text",
    ),
    (
        "openai_status",
        _respond(status="queued"),
        f"{T}/respond/status",
        "one of completed, incomplete, failed",
    ),
    (
        "generate_content_status",
        _respond("gemini_generate_content", status="DONE"),
        f"{T}/respond/status",
        "respond.status is one of STOP",
    ),
    (
        "anthropic_status_not_str",
        _respond("anthropic_messages", status=1),
        f"{T}/respond/status",
        "expected str",
    ),
    ("usage_typo", _respond(usage={"total_tokens": 1}), f"{T}/respond/usage", "total_tokens"),
    (
        "usage_negative",
        _respond(usage={"input_tokens": -1}),
        f"{T}/respond/usage/input_tokens",
        "[0, ",
    ),
    ("chunking_zero", _respond(chunking={"fixed": 0}), f"{T}/respond/chunking", "chunking is"),
    ("chunking_name", _respond(chunking="words"), f"{T}/respond/chunking", "chunking is"),
    (
        "chunking_random_without_max",
        _respond(chunking={"random": {"seed": 1}}),
        f"{T}/respond/chunking",
        "chunking is",
    ),
    ("interleave", _respond(interleave="zigzag"), f"{T}/respond/interleave", "interleave is"),
    ("disconnect_negative", _respond(disconnect_after=-1), f"{T}/respond/disconnect_after", "[0, "),
    (
        "chunk_plan_elsewhere",
        _respond("gemini_interactions", chunk_plan=[1]),
        f"{T}/respond",
        "unknown key(s) chunk_plan",
    ),
    (
        "chunk_plan_not_list",
        _respond("gemini_generate_content", chunk_plan="all"),
        f"{T}/respond/chunk_plan",
        "ints >= 0",
    ),
    ("fault_not_object", _respond(fault="cut"), f"{T}/respond/fault", "expected an object"),
    ("fault_type", _respond(fault={"type": "explode"}), f"{T}/respond/fault/type", "type must"),
    (
        "http_error_status",
        _respond(fault={"type": "http_error", "status": 418}),
        f"{T}/respond/fault/status",
        "status must be one of",
    ),
    (
        "retry_after_over_a_day",
        _respond(fault={"type": "http_error", "status": 429, "retry_after": 86_401}),
        f"{T}/respond/fault/retry_after",
        "retry_after must be at most 86400",
    ),
    (
        "times_zero",
        _respond(fault={"type": "http_error", "status": 429, "times": 0}),
        f"{T}/respond/fault/times",
        "times must be",
    ),
    (
        "key_of_another_fault",
        _respond(fault={"type": "disconnect", "after": 1, "times": 2}),
        f"{T}/respond/fault",
        "times",
    ),
    (
        "after_negative",
        _respond(fault={"type": "disconnect", "after": -1}),
        f"{T}/respond/fault/after",
        "after must be",
    ),
    (
        "duplicate_of_nothing",
        _respond(fault={"type": "duplicate", "after": 0}),
        f"{T}/respond/fault/after",
        "after must be",
    ),
    (
        "shape_unknown",
        _respond(fault={"type": "error_event", "after": 1, "shape": "round"}),
        f"{T}/respond/fault/shape",
        "shape is",
    ),
    ("pacing_typo", _respond(pacing={"speed": 1}), f"{T}/respond/pacing", "speed"),
    (
        "pacing_float",
        _respond(pacing={"first_byte_ms": 1.5}),
        f"{T}/respond/pacing/first_byte_ms",
        "int",
    ),
    (
        "pacing_over_an_hour",
        _respond(pacing={"event_delay_ms": 3_600_001}),
        f"{T}/respond/pacing/event_delay_ms",
        "at most 3600000",
    ),
    ("flush", _respond(pacing={"flush": "sometimes"}), f"{T}/respond/pacing/flush", "flush is"),
]


@pytest.mark.parametrize(
    ("doc", "location", "words"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_bad_scripts_are_refused_by_schema_and_loader_alike(
    doc: Any, location: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _schema.problems(doc)
    assert found, "the schema accepts it"
    assert found[0].location == location
    with pytest.raises(ScriptError) as loaded:
        _served(doc)
    assert loaded.value.location == location
    assert words in str(loaded.value)
    # The loader's own checks refuse it too, without the schema.
    monkeypatch.setattr(_script._schema, "check_document", lambda document, path, error: document)
    with pytest.raises(ScriptError) as semantic:
        _served(doc)
    assert location.startswith(semantic.value.location)  # there, or the object holding it


def test_a_missing_key_is_located_where_it_belongs() -> None:
    doc = _respond(calls=[{"arguments": {}}])
    assert [(p.location, p.message) for p in _schema.problems(doc)] == [
        (f"{T}/respond/calls/0/name", "name is missing (expected str)")
    ]


# The schema is stricter than the loader alone here: these used to load and then fail on the
# first request (a 500 for output_contains), or never matched.
SCHEMA_ONLY = [
    ("output_contains_not_str", _turn(expect={"function_results": [{"name": "f",
                                                                    "output_contains": 5}]})),
    ("result_name_not_str", _turn(expect={"function_results": [{"name": 5}]})),
    ("result_call_id_not_str", _turn(expect={"function_results": [{"call_id": 5}]})),
]  # fmt: skip


@pytest.mark.parametrize("doc", [c[1] for c in SCHEMA_ONLY], ids=[c[0] for c in SCHEMA_ONLY])
def test_the_schema_refuses_what_the_loader_alone_let_through(doc: Any) -> None:
    assert _schema.problems(doc)
    with pytest.raises(ScriptError, match="expected str"):
        Script.from_dict(doc)


# What only the code can judge: the schema accepts these and the loader refuses them.
LOADER_ONLY = [
    ("lone_surrogate", _respond(text="a\ud800"), "lone surrogate"),
    ("unknown_check", {"validation": {"nope": False}, **_respond(text="x")}, "unknown validation"),
    ("openai_529", _respond(fault={"type": "http_error", "status": 529}), "Anthropic"),
    ("truncate_past_the_calls", _respond(fault={"type": "truncate", "call": 1}), "no call 1"),
    ("coalesced_delays", _respond(pacing={"event_delay_ms": 5, "flush": "coalesce"}), "coalesced"),
    (
        "chunk_plan_sum",
        _respond("gemini_generate_content", text="ab", chunk_plan=[1, 1, 1]),
        "adding up",
    ),
    ("float_for_int", _respond(chunking={"fixed": 2.0}), "chunking is"),
]


@pytest.mark.parametrize(
    ("doc", "words"), [c[1:] for c in LOADER_ONLY], ids=[c[0] for c in LOADER_ONLY]
)
def test_what_only_the_loader_can_judge(doc: Any, words: str) -> None:
    assert _schema.problems(doc) == []
    with pytest.raises(ScriptError, match=words):
        _served(doc)


# -- the schema names what the code accepts --------------------------------------------------


def _props(name: str) -> set[str]:
    return set(DEFS[name]["properties"])


def test_the_schema_names_the_keys_the_loader_accepts() -> None:
    assert set(SCHEMA["properties"]) == {"$schema", "seed", "baseline", "validation", "turns",
                                         "conversations", "fixtures", "fallback",
                                         *_aux.AUX_KEYS}  # fmt: skip
    models = SCHEMA["properties"]["models"]["items"]
    assert set(models["properties"]) == _aux._ENTRY_KEYS
    assert models["properties"]["provider"]["enum"] == list(_aux.families())
    assert _props("fixture") == _fixtures._FIXTURE_KEYS
    assert _props("fallback") == _fixtures._FALLBACK_KEYS
    assert _props("expect") >= MATCH_KEYS
    assert _props("jsonpath_predicate") == {"path", *_fixtures._PREDICATE_TESTS}
    assert _props("turn") == {"protocol", "expect", "respond"}
    assert _props("expect") == _script._EXPECT_KEYS
    assert _props("function_result") == _script._RESULT_KEYS
    assert _props("call") == _script._CALL_KEYS
    assert _props("usage") == _script._USAGE_KEYS
    assert _props("reasoning") == {"summary", "signature"}
    for protocol in PROTOCOLS:
        wire = provider(protocol)
        # ``hosted`` is in the schema for every provider ahead of its providers' support.
        expected = _script._RESPOND_KEYS | wire.respond_keys | {"hosted"}
        assert _props(f"respond_{protocol}") == expected, protocol
        status = DEFS[f"respond_{protocol}"]["properties"]["status"]
        assert status.get("enum") == (None if wire.statuses is None else list(wire.statuses))


def test_the_schema_names_the_values_the_code_accepts() -> None:
    assert DEFS["turn"]["properties"]["protocol"]["enum"] == list(PROTOCOLS)
    assert SCHEMA["properties"]["baseline"]["enum"] == list(REVISIONS)
    assert set(SCHEMA["properties"]["validation"]["properties"]) == set(VALIDATION_CHECKS)
    fault = DEFS["fault"]
    assert set(fault["properties"]["type"]["enum"]) == set(_faults_spec._KEYS)
    assert set(fault["properties"]["status"]["enum"]) == set(_faults_spec.HTTP_STATUSES)
    assert fault["properties"]["retry_after"]["maximum"] == _faults_spec.MAX_RETRY_AFTER
    branches = {b["if"]["properties"]["type"]["const"]: b["then"] for b in fault["allOf"]}
    for kind, keys in _faults_spec._KEYS.items():
        assert set(branches[kind]["properties"]) == keys | {"type"}, kind
    assert _props("pacing") == _faults_spec._PACING_KEYS
    for key in ("first_byte_ms", "event_delay_ms"):
        assert DEFS["pacing"]["properties"][key]["maximum"] == _faults_spec.MAX_PACING_MS
    usage = DEFS["usage"]["properties"]["input_tokens"]
    assert usage["allOf"][0]["maximum"] == _script.MAX_TOKENS - 1
    assert SCHEMA["properties"]["seed"]["allOf"][0]["maximum"] == _script.MAX_SEED - 1


def test_every_description_that_points_at_a_doc_names_one_that_exists() -> None:
    text = _schema.schema_text()
    for page in set(re.findall(r"docs/[a-z-]+\.md", text)):
        assert (ROOT / page).exists() or page == "docs/hosted-tools.md", page


def test_a_schema_file_key_is_ignored_by_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"$schema": "./script.schema.json", **_respond(text="x")}))
    assert load_script(path).conversations["default"][0].respond == {"text": "x"}


# -- a reference validator reads the schema as ours does --------------------------------------


def test_the_schema_is_draft_2020_12_and_a_reference_validator_agrees() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    reference = jsonschema.Draft202012Validator(SCHEMA)
    for _, doc in REPO_SCRIPTS:
        assert reference.is_valid(doc)
    for name, doc, _, _ in BAD:
        assert not reference.is_valid(doc), name
    for name, doc in SCHEMA_ONLY:
        assert not reference.is_valid(doc), name
    for name, doc, _ in LOADER_ONLY:
        assert reference.is_valid(doc), name
