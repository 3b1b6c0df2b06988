"""Request specs: what a provider's create request may hold, checked in one walk.

A spec is plain JSON data (generated from the official SDKs' request param types, one
file per protocol and SDK generation, see ``tests/mock/request_spec_gen.py``):
``{"root": T, "types": {name: {"fields": {wire name: T}, "required": [...]}}}`` where a
type expression ``T`` is ``"str" | "int" | "float" | "bool" | "null" | "any"``,
``{"enum": [...]}``, ``{"list": T}``, ``{"map": T}``, ``{"ref": name}`` or
``{"union": [T, ...]}``. :func:`compile_spec` merges the generations (a field either
one names is known; a field is required only when every one requires it), applies a
provider's :class:`Overlay` (documented ranges, conditional requirements) and compiles
the graph once; :meth:`RequestSpec.problem` then walks a request body and returns the
first :class:`Problem`, or ``None``.

The rules the walk applies:

* a JSON value must have one of the kinds its type allows (a number with no fraction is
  an integer; ``true`` is never a number);
* an object refuses a field its type does not name, and a missing required field;
* ``null`` for a field that is not required is the field left out;
* a union of objects is told apart by a discriminator (a field, ``type`` in practice,
  that every member types as an enum); members without it are tried in order, and when
  none fits, the problem found deepest is reported;
* ``proto=True`` (Google's proto JSON): a field may be spelled in snake_case or
  lowerCamelCase, an enum value matches case-insensitively or as its number, and a
  number may be sent as a decimal string.

No provider name appears here: providers hand their spec and overlay in, and render a
:class:`Problem` in their own error shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ._reqspec_walk import (
    KIND_OF,
    AnyNode,
    Key,
    ListNode,
    MapNode,
    Node,
    ObjectNode,
    Problem,
    RangedNode,
    ScalarNode,
    Tag,
    UnionNode,
)

__all__ = [
    "KIND_OF", "Key", "Overlay", "Problem", "RequestSpec", "Tag", "compile_spec", "merge_specs",
]  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Overlay:
    """What a provider adds to its generated spec, each fact with its source in the
    provider's module: ``ranges[(type, field)] = (low, high)`` (inclusive, ``None`` for
    no bound), ``required_unless[(type, field)] = other`` (required unless ``other`` is
    present) and ``enums[(type, field)] = values``."""

    ranges: Mapping[tuple[str, str], tuple[float | None, float | None]] = dataclasses.field(
        default_factory=dict
    )
    required_unless: Mapping[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    # the values a plain-string field takes (the API's rule, not the type's)
    enums: Mapping[tuple[str, str], tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # forms the API accepts beyond the types: more members for a field's type (for a list,
    # for its items), and the named types they refer to
    extend: Mapping[tuple[str, str], Any] = dataclasses.field(default_factory=dict)
    types: Mapping[str, Any] = dataclasses.field(default_factory=dict)


# -- merging generations ------------------------------------------------------------------


def merge_specs(specs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One spec accepting what any of ``specs`` accepts."""
    types: dict[str, dict[str, Any]] = {}
    for spec in specs:
        for name, obj in spec["types"].items():
            found = types.get(name)
            if found is None:
                types[name] = {"fields": dict(obj["fields"]), "required": list(obj["required"])}
                continue
            for field, expr in obj["fields"].items():
                old = found["fields"].get(field)
                found["fields"][field] = expr if old is None else _either(old, expr)
            found["required"] = [r for r in found["required"] if r in obj["required"]]
    root: Any = None
    for spec in specs:
        root = spec["root"] if root is None else _either(root, spec["root"])
    return {"root": root, "types": types}


def _either(a: Any, b: Any) -> Any:
    if a == b:
        return a
    return {"union": [a, b]}


# -- compiling ----------------------------------------------------------------------------


class RequestSpec:
    """A compiled spec: :meth:`problem` is the one walk of a request body."""

    __slots__ = ("root",)

    def __init__(self, root: Node) -> None:
        self.root = root

    def problem(self, body: Mapping[str, Any]) -> Problem | None:
        """The first problem of ``body`` (its path from the body down), or ``None``."""
        found = self.root.check(body)
        if found is not None:
            found.path.reverse()
        return found


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class _Compiler:
    def __init__(self, spec: Mapping[str, Any], overlay: Overlay, proto: bool) -> None:
        self.spec = spec
        self.overlay = overlay
        self.proto = proto
        self.objects: dict[str, ObjectNode] = {}
        self.unions: list[UnionNode] = []
        self.scalars: dict[tuple[str, tuple[Any, ...] | None], ScalarNode] = {}
        self.any = AnyNode()

    def run(self) -> RequestSpec:
        root = self.expr(self.spec["root"])
        filled: set[str] = set()
        while len(filled) < len(self.objects):  # filling one object may add others
            for name, obj in list(self.objects.items()):
                if name not in filled:
                    filled.add(name)
                    self.fill(obj, self.spec["types"][name])
        overlay = self.overlay
        unused = set(overlay.ranges) | set(overlay.required_unless) | set(overlay.enums)
        unused |= set(overlay.extend)
        unused -= {(name, f) for name, obj in self.objects.items() for f in _names(obj)}
        if unused:
            raise ValueError(f"the overlay names fields the spec does not have: {sorted(unused)}")
        for union in self.unions:
            union.finish()
        return RequestSpec(root)

    def expr(self, expr: Any) -> Node:
        if isinstance(expr, str):
            if expr == "any":
                return self.any
            return self.scalar(expr, None)
        if "ref" in expr:
            return self.ref(expr["ref"])
        if "enum" in expr:
            values = tuple(expr["enum"])
            kind = KIND_OF[type(values[0])]
            return self.scalar(kind, values)
        if "list" in expr:
            return self.wrap(ListNode(self.expr(expr["list"])))
        if "map" in expr:
            return self.wrap(MapNode(self.expr(expr["map"])))
        members = self.flatten(expr["union"])
        if len(members) == 1:
            return members[0]
        union = UnionNode(members, self.proto)
        self.unions.append(union)
        return union

    def wrap(self, node: Node) -> Node:
        """Containers are checked through a union, which first checks the JSON kind."""
        union = UnionNode([node], self.proto)
        self.unions.append(union)
        return union

    def scalar(self, kind: str, enum: tuple[Any, ...] | None) -> Node:
        key = (kind, enum)
        found = self.scalars.get(key)
        if found is None:
            found = ScalarNode(kind, enum, self.proto)
            found = self.scalars[key] = found
        return self.wrap(found)

    def ref(self, name: str) -> Node:
        obj = self.objects.get(name)
        if obj is None:
            if name not in self.spec["types"]:
                raise ValueError(f"the spec refers to an undefined type {name!r}")
            obj = self.objects[name] = ObjectNode(name)
        return self.wrap(obj)

    def flatten(self, exprs: list[Any]) -> list[Node]:
        """A union's members, enums of one kind merged (a plain kind absorbs its enums)."""
        flat: list[Any] = []
        stack = list(reversed(exprs))
        while stack:
            item = stack.pop()
            if isinstance(item, dict) and "union" in item:
                stack += reversed(item["union"])
            else:
                flat.append(item)
        if "any" in flat:
            return [self.any]
        plain = {e for e in flat if isinstance(e, str)}
        enums: dict[str, list[Any]] = {}
        nodes: list[Node] = []
        seen: set[str] = set()
        for item in flat:
            if isinstance(item, dict) and "enum" in item:
                kind = KIND_OF[type(item["enum"][0])]
                if kind not in plain:
                    values = enums.setdefault(kind, [])
                    values += [v for v in item["enum"] if v not in values]
                continue
            key = item["ref"] if isinstance(item, dict) and "ref" in item else repr(item)
            if key not in seen:
                seen.add(key)
                nodes.append(self.expr(item))
        for kind, values in enums.items():
            nodes.append(self.scalar(kind, tuple(values)))
        members: list[Node] = []
        for node in nodes:  # unwrap the kind-check unions: this union checks the kind
            if isinstance(node, UnionNode) and len(node.members) == 1:
                members.append(node.members[0])
            else:
                members.append(node)
        return members

    def fill(self, obj: ObjectNode, spec: Mapping[str, Any]) -> None:
        required = set(spec["required"])
        for field, expr in spec["fields"].items():
            values = self.overlay.enums.get((obj.name, field))
            if values is not None:
                expr = {"union": [{"enum": list(values)}, "null"]}
            more = self.overlay.extend.get((obj.name, field))
            if more is not None:
                expr = _extended(expr, more)
            node = self.expr(expr)
            bounds = self.overlay.ranges.get((obj.name, field))
            if bounds is not None:
                node = RangedNode(node, *bounds)
            spellings = (field, _camel(field)) if self.proto else (field,)
            for spelling in spellings:
                obj.fields.setdefault(spelling, (field, node))
            other = self.overlay.required_unless.get((obj.name, field))
            if other is not None:
                required.add(field)
                obj.unless[field] = (other, _camel(other)) if self.proto else (other,)
        # A required field that may be null is not required: null is the field left out.
        required = {name for name in required if "null" not in obj.fields[name][1].kinds}
        required |= set(obj.unless)
        obj.required = tuple(
            (name, (name, _camel(name)) if self.proto else (name,)) for name in sorted(required)
        )


def _extended(expr: Any, more: Any) -> Any:
    """``expr`` with ``more`` as a further member (of its items, for a list)."""
    members = expr["union"] if isinstance(expr, dict) and "union" in expr else [expr]
    out = []
    for member in members:
        if isinstance(member, dict) and "list" in member:
            member = {"list": {"union": [member["list"], more]}}
        out.append(member)
    return {"union": out}


def _names(obj: ObjectNode) -> set[str]:
    return {name for name, _ in obj.fields.values()}


def compile_spec(
    specs: Sequence[Mapping[str, Any]], overlay: Overlay | None = None, *, proto: bool = False
) -> RequestSpec:
    """Merge ``specs`` (one per SDK generation), apply ``overlay`` and compile.

    Raises ``ValueError`` for a spec that refers to an undefined type or an overlay naming
    a field the spec does not have (so an overlay cannot silently outlive its field).
    """
    overlay = overlay or Overlay()
    merged = merge_specs(specs)
    merged["types"].update(overlay.types)
    return _Compiler(merged, overlay, proto).run()
