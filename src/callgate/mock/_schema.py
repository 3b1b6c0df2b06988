"""The script JSON Schema (``script.schema.json``) and a validator for the part of draft
2020-12 it uses, so the loader, ``callgate script check`` and an editor read one schema.

Keywords: ``$ref`` (local ``#/...`` pointers) with ``$defs``, ``type``, ``enum``,
``const``, ``properties``, ``required``, ``additionalProperties``, ``minProperties``,
``items``, ``minItems``, ``minimum``, ``maximum``, ``pattern``, ``oneOf``, ``anyOf``,
``allOf``, ``not`` and ``if``/``then``/``else``; annotations (``title``, ``description``,
``examples``, ...) are ignored. A schema using any other keyword is refused when it is
loaded: the validator never skips a rule it does not know. ``errorMessage`` (a string,
as VS Code's JSON service reads it) replaces the message of a failure of that schema's
own keywords (not of its members'), so a refusal can say what the loader says; a message
for one keyword only sits in an ``allOf`` part holding that keyword.

Numbers follow the spec: ``1.0`` is an ``integer`` (the loader then refuses a float where
it wants an int). Locations are RFC 6901 JSON pointers; a missing required key is
reported at the pointer it should have, e.g. ``/turns/0/respond/calls/0/name``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

__all__ = [
    "SCHEMA_FILE",
    "SchemaProblem",
    "check_document",
    "problems",
    "schema_text",
    "script_schema",
]

SCHEMA_FILE = "script.schema.json"
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "markdownDescription",
     "examples", "default", "deprecated", "errorMessage"}
)  # fmt: skip
_KEYWORDS = frozenset(
    {"$ref", "type", "enum", "const", "properties", "required", "additionalProperties",
     "minProperties", "items", "minItems", "minimum", "maximum", "pattern", "oneOf", "anyOf",
     "allOf", "not", "if", "then", "else"}
)  # fmt: skip
_TYPE_NAMES = {
    "string": "str", "integer": "int", "number": "number", "boolean": "bool",
    "array": "list", "object": "an object", "null": "null",
}  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One way a document breaks the schema: where (a JSON pointer) and why."""

    location: str
    message: str


class _Validator:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._refs: dict[str, Any] = {}
        _check_schema(root, root, "#")

    def collect(self, value: Any, schema: Any, where: str, out: list[SchemaProblem]) -> None:
        if schema is True:
            return
        if schema is False:
            out.append(SchemaProblem(where, f"{_name(where)} is not allowed here"))
            return
        if "$ref" in schema:
            ref = schema["$ref"]
            target = self._refs.get(ref)
            if target is None:
                target = self._refs[ref] = _resolve(self.root, ref)
            self.collect(value, target, where, out)
        if "type" in schema and not _is_type(value, schema["type"]):
            self._own(out, schema, where, f"expected {_describe(schema)}, got {_json_type(value)}")
            return  # nothing else can be judged on a value of the wrong kind
        if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
            self._own(out, schema, where, f"{_name(where)} must be {_describe(schema)}")
        if "const" in schema and not _same(value, schema["const"]):
            self._own(out, schema, where, f"{_name(where)} must be {_describe(schema)}")
        # The value's own shape, then the alternatives, then its members, then the
        # conditional parts: the first problem is the one the loader would name first.
        if isinstance(value, dict):
            self._object(value, schema, where, out)
        elif isinstance(value, list) and "minItems" in schema and len(value) < schema["minItems"]:
            self._own(out, schema, where, f"needs at least {schema['minItems']} item(s)")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self._number(value, schema, where, out)
        elif isinstance(value, str) and "pattern" in schema:
            pattern = self._patterns.setdefault(schema["pattern"], re.compile(schema["pattern"]))
            if not pattern.search(value):
                self._own(out, schema, where, f"{_name(where)} must match {schema['pattern']}")
        self._alternatives(value, schema, where, out)
        # allOf: plain parts with the value's own checks; conditional parts (a protocol's or
        # a fault type's keys) after the members, so a problem is named in the loader's order.
        parts = schema.get("allOf", ())
        for sub in parts:
            if not (isinstance(sub, dict) and "if" in sub):
                self.collect(value, sub, where, out)
        self._members(value, schema, where, out)
        for sub in parts:
            if isinstance(sub, dict) and "if" in sub:
                self.collect(value, sub, where, out)
        if "if" in schema:
            branch = "then" if self._holds(value, schema["if"], where) else "else"
            if branch in schema:
                self.collect(value, schema[branch], where, out)

    def valid(self, value: Any, schema: Any, where: str) -> bool:
        found: list[SchemaProblem] = []
        self.collect(value, schema, where, found)
        return not found

    def _holds(self, value: Any, condition: Any, where: str) -> bool:
        """An ``if``; the tag test ``{"required": [k], "properties": {k: {"const": v}}}``
        (how the script schema picks a protocol's or a fault type's keys) is read directly."""
        tag = _tag(condition)
        if tag is None:
            return self.valid(value, condition, where)
        key, wanted = tag
        return not isinstance(value, dict) or (key in value and _same(value[key], wanted))

    def _object(
        self, value: dict[Any, Any], schema: Any, where: str, out: list[SchemaProblem]
    ) -> None:
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        unknown = sorted(k for k in value if k not in props)
        if extra is False and unknown:  # first: a misspelt key is also a "missing" one
            known = f" (known: {', '.join(sorted(props))})" if props else ""
            self._own(
                out,
                schema,
                where,
                f"unknown key(s) {', '.join(unknown)}{known}",
            )
        for key in schema.get("required", ()):
            if key not in value:
                wanted = props.get(key)
                hint = f" (expected {_describe(wanted)})" if isinstance(wanted, dict) else ""
                self._own(out, schema, _join(where, key), f"{key} is missing{hint}")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            self._own(out, schema, where, f"needs at least {schema['minProperties']} key(s)")

    def _members(self, value: Any, schema: Any, where: str, out: list[SchemaProblem]) -> None:
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                self.collect(item, schema["items"], f"{where}/{i}", out)
        if not isinstance(value, dict):
            return
        props = schema.get("properties", {})
        for key, sub in props.items():  # in the schema's order: the loader's order
            if key in value:
                self.collect(value[key], sub, _join(where, key), out)
        extra = schema.get("additionalProperties", True)
        if isinstance(extra, dict):
            for key in sorted(k for k in value if k not in props):
                self.collect(value[key], extra, _join(where, key), out)

    def _number(self, value: float, schema: Any, where: str, out: list[SchemaProblem]) -> None:
        if "minimum" in schema and value < schema["minimum"]:
            self._own(out, schema, where, f"{_name(where)} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            self._own(out, schema, where, f"{_name(where)} must be at most {schema['maximum']}")

    def _alternatives(self, value: Any, schema: Any, where: str, out: list[SchemaProblem]) -> None:
        if "oneOf" in schema:
            hits = sum(self.valid(value, sub, where) for sub in schema["oneOf"])
            if hits != 1:
                many = "none" if not hits else "more than one"
                self._own(out, schema, where, f"matches {many} of the allowed forms")
        if "anyOf" in schema and not any(self.valid(value, s, where) for s in schema["anyOf"]):
            self._own(out, schema, where, "matches none of the allowed forms")
        if "not" in schema and self.valid(value, schema["not"], where):
            self._own(out, schema, where, f"{_name(where)} has a form not allowed here")

    @staticmethod
    def _own(out: list[SchemaProblem], schema: Any, where: str, text: str) -> None:
        """A failure of one of ``schema``'s own keywords (its ``errorMessage``, if any)."""
        out.append(SchemaProblem(where, schema.get("errorMessage", text)))


def _tag(condition: Any) -> tuple[str, Any] | None:
    if not isinstance(condition, dict) or condition.keys() != {"required", "properties"}:
        return None
    required, props = condition["required"], condition["properties"]
    if len(required) != 1 or list(props) != required:
        return None
    test = props[required[0]]
    if not isinstance(test, dict) or test.keys() != {"const"}:
        return None
    return required[0], test["const"]


def _check_schema(node: Any, root: Mapping[str, Any], where: str) -> None:
    """Refuse a schema with a keyword this validator does not implement, or a bad $ref."""
    if isinstance(node, bool):
        return
    if not isinstance(node, dict):
        raise ValueError(f"{where}: a schema is an object or a boolean")
    unknown = set(node) - _KEYWORDS - _ANNOTATIONS
    if unknown:
        raise ValueError(f"{where}: keyword(s) {', '.join(sorted(unknown))} not implemented")
    if not isinstance(node.get("errorMessage", ""), str):
        raise ValueError(f"{where}: errorMessage is a string (as editors read it)")
    if "$ref" in node:
        _resolve(root, node["$ref"])
    subs = [node[k] for k in ("items", "not", "if", "then", "else") if k in node]
    subs += [node["additionalProperties"]] if "additionalProperties" in node else []
    for key in ("properties", "$defs"):
        subs += list(node.get(key, {}).values())
    for key in ("oneOf", "anyOf", "allOf"):
        subs += node.get(key, [])
    for sub in subs:
        _check_schema(sub, root, where + "/" + "*")


def _resolve(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise ValueError(f"$ref {ref!r}: only local references are supported")
    node: Any = root
    for token in ref[1:].split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or key not in node:
            raise ValueError(f"$ref {ref!r} names nothing in the schema")
        node = node[key]
    return node


def _join(where: str, key: Any) -> str:
    return f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _name(where: str) -> str:
    """The key or index a pointer ends in (what a message calls the value)."""
    last = where.rsplit("/", 1)[-1] if where else ""
    return last.replace("~1", "/").replace("~0", "~") or "the document"


def _is_type(value: Any, kinds: str | list[str]) -> bool:
    return any(_TYPE_CHECKS[kind](value) for kind in ([kinds] if isinstance(kinds, str) else kinds))


_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


def _json_type(value: Any) -> str:
    for kind in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _TYPE_CHECKS[kind](value):
            return _TYPE_NAMES[kind]
    return type(value).__name__  # a Python object a builder passed (no JSON value)


def _same(value: Any, expected: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1.0`` is ``1``."""
    if isinstance(value, bool) or isinstance(expected, bool):
        return type(value) is type(expected) and value == expected
    if isinstance(value, dict) and isinstance(expected, dict):
        return value.keys() == expected.keys() and all(_same(value[k], expected[k]) for k in value)
    if isinstance(value, list) and isinstance(expected, list):
        return len(value) == len(expected) and all(map(_same, value, expected))
    return bool(value == expected) and isinstance(value, str) == isinstance(expected, str)


def _describe(schema: Any) -> str:
    """What a schema wants, in a few words (``str``, ``one of a, b``...)."""
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    if "const" in schema:
        return _show(schema["const"])
    kinds = schema.get("type")
    if kinds is None:
        return "a value of the form described in the schema"
    names = [_TYPE_NAMES[k] for k in ([kinds] if isinstance(kinds, str) else kinds)]
    return " or ".join(names)


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def schema_text() -> str:
    """The shipped script schema file, as text."""
    return resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@functools.cache
def script_schema() -> Mapping[str, Any]:
    """The shipped script schema (parsed once)."""
    schema: dict[str, Any] = json.loads(schema_text())
    return schema


@functools.cache
def validator() -> _Validator:
    return _Validator(script_schema())


def problems(document: Any, schema: Mapping[str, Any] | None = None) -> list[SchemaProblem]:
    """Every way ``document`` breaks ``schema`` (default: the script schema), in order.

    Raises ``ValueError`` for a schema using a keyword this validator does not implement.
    """
    check = validator() if schema is None else _Validator(schema)
    found: list[SchemaProblem] = []
    check.collect(document, check.root, "", found)
    # One problem once, even when two parts of the schema (a property and a branch that
    # narrows it) both catch it.
    return list(dict.fromkeys(found))


def check_document(document: Any, path: str | None, error: Callable[..., Exception]) -> Any:
    """Validate a script document against the schema; return it without ``$schema``.

    ``$schema`` names the schema for an editor and means nothing to the loader. Raises
    ``error(message, path=path, location=pointer)`` (the loader passes its
    :class:`~callgate.mock.ScriptError`) for the first problem.
    """
    found: list[SchemaProblem] = []
    validator().collect(document, validator().root, "", found)
    if found:
        raise error(found[0].message, path=path, location=found[0].location)
    if isinstance(document, dict) and "$schema" in document:
        return {k: v for k, v in document.items() if k != "$schema"}
    return document
