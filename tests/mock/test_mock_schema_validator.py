"""The stdlib JSON Schema validator behind the script schema: each keyword it implements
accepts and refuses what draft 2020-12 says, messages and locations are the loader's
kind, and a schema using a keyword it does not implement is refused, not half-applied."""

from __future__ import annotations

from typing import Any

import pytest

from callgate.mock._schema import SchemaProblem, problems


def _where(document: Any, schema: Any) -> list[tuple[str, str]]:
    return [(p.location, p.message) for p in problems(document, schema)]


@pytest.mark.parametrize(
    ("schema", "good", "bad", "message"),
    [
        ({"type": "string"}, "a", 1, "expected str, got int"),
        ({"type": "integer"}, 2, True, "expected int, got bool"),  # a bool is no integer
        ({"type": "integer"}, 2.0, 2.5, "expected int, got number"),  # 2.0 is (the spec)
        ({"type": "number"}, 2.5, "2", "expected number, got str"),
        ({"type": "boolean"}, False, 0, "expected bool, got int"),
        ({"type": "null"}, None, {}, "expected null, got an object"),
        ({"type": ["string", "array"]}, [], 1, "expected str or list, got int"),
        ({"type": "object"}, {}, [], "expected an object, got list"),
        ({"enum": ["a", 1]}, 1, True, "must be one of a, 1"),  # true is not 1
        ({"enum": [{"k": [1]}]}, {"k": [1.0]}, {"k": [1, 2]}, "must be one of"),
        ({"const": "x"}, "x", "y", "must be x"),
        ({"minimum": 1, "maximum": 3}, 3, 0, "must be at least 1"),
        ({"minimum": 1, "maximum": 3}, 1, 4, "must be at most 3"),
        ({"pattern": "^a+$"}, "aa", "ab", "must match ^a+$"),
        ({"minItems": 2}, [1, 2], [1], "needs at least 2 item(s)"),
        ({"minProperties": 1}, {"a": 1}, {}, "needs at least 1 key(s)"),
        ({"items": {"type": "string"}}, ["a"], ["a", 2], "expected str, got int"),
        ({"not": {"type": "string"}}, 1, "s", "has a form not allowed here"),
        ({"anyOf": [{"type": "string"}, {"minimum": 5}]}, 6, 4, "matches none"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 5}]}, 4, 6, "matches more than one"),
        ({"oneOf": [{"type": "string"}, {"type": "null"}]}, None, 1, "matches none"),
        ({"allOf": [{"type": "integer"}, {"minimum": 5}]}, 6, 4, "must be at least 5"),
        ({"properties": {"a": False}}, {"b": 1}, {"a": 1}, "a is not allowed here"),
    ],
)
def test_each_keyword_accepts_and_refuses_per_the_spec(
    schema: Any, good: Any, bad: Any, message: str
) -> None:
    assert problems(good, schema) == []
    found = problems(bad, schema)
    assert found, bad
    assert message in found[0].message


def test_keywords_apply_only_to_their_kind_of_value() -> None:
    schema = {"minimum": 3, "pattern": "^x", "minItems": 2, "required": ["a"]}
    for value in ("xy", 4, [1, 2], {"a": 1}, None, True, 2.5 + 1):
        assert problems(value, schema) == [], value


def test_objects_unknown_keys_come_first_and_a_missing_key_is_located_at_its_place() -> None:
    schema = {
        "type": "object",
        "required": ["name", "kind"],
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "kind": {"enum": ["a", "b"]}},
    }
    assert _where({"nme": "f"}, schema) == [
        ("", "unknown key(s) nme (known: kind, name)"),
        ("/name", "name is missing (expected str)"),
        ("/kind", "kind is missing (expected one of a, b)"),
    ]
    extra = {"additionalProperties": {"type": "integer"}, "properties": {"a": True}}
    assert _where({"a": "x", "b": 1, "c": "2"}, extra) == [("/c", "expected int, got str")]


def test_if_then_else_picks_a_branch() -> None:
    schema = {
        "if": {"required": ["kind"], "properties": {"kind": {"const": "n"}}},
        "then": {"properties": {"value": {"type": "integer"}}},
        "else": {"properties": {"value": {"type": "string"}}},
    }
    assert problems({"kind": "n", "value": 1}, schema) == []
    assert problems({"value": "s"}, schema) == []  # no kind: the else branch
    assert _where({"kind": "n", "value": "s"}, schema) == [("/value", "expected int, got str")]
    assert problems("s", schema) == []  # no object: the tag test holds vacuously, as per spec
    general = {"if": {"minimum": 3}, "then": {"maximum": 5}}
    assert problems(4, general) == []
    assert _where(6, general) == [("", "the document must be at most 5")]
    assert problems(1, general) == []


def test_refs_resolve_inside_the_root_and_pointers_escape_key_names() -> None:
    schema = {
        "$defs": {"a/b": {"type": "string"}, "list": {"items": {"$ref": "#/$defs/a~1b"}}},
        "properties": {"x~y/z": {"$ref": "#/$defs/list"}},
    }
    assert _where({"x~y/z": ["ok", 3]}, schema) == [("/x~0y~1z/1", "expected str, got int")]


def test_error_message_replaces_the_message_of_its_own_keywords_only() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "allOf": [{"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "errorMessage": "a or b"}],
    }
    assert _where({"n": "x"}, schema) == [("", "a or b"), ("/n", "expected int, got str")]
    assert _where(2, {"enum": [1], "errorMessage": "only one"}) == [("", "only one")]
    with pytest.raises(ValueError, match="errorMessage is a string"):
        problems(1, {"errorMessage": {"enum": "x"}})


def test_a_wrong_kind_stops_the_other_checks_of_that_value() -> None:
    schema = {"type": "object", "required": ["a"], "minProperties": 3}
    assert _where([], schema) == [("", "expected an object, got list")]


def test_a_value_no_json_document_holds_is_named_by_its_python_type() -> None:
    assert _where((1,), {"type": "array"}) == [("", "expected list, got tuple")]


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"format": "email"}, "format not implemented"),
        ({"properties": {"a": {"uniqueItems": True}}}, "uniqueItems not implemented"),
        ({"$ref": "other.json#/x"}, "only local references"),
        ({"$ref": "#/$defs/missing"}, "names nothing"),
        ({"items": 3}, "a schema is an object or a boolean"),
    ],
)
def test_a_schema_using_what_the_validator_does_not_implement_is_refused(
    schema: Any, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        problems(None, schema)


def test_problems_are_plain_values() -> None:
    found = problems(1, {"type": "string"})
    assert found == [SchemaProblem("", "expected str, got int")]
    with pytest.raises(AttributeError):
        found[0].location = "/x"  # type: ignore[misc]
