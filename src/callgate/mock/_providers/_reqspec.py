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
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "KIND_OF", "Key", "Overlay", "Problem", "RequestSpec", "Tag", "compile_spec", "merge_specs",
]  # fmt: skip

KIND_OF: Final[dict[type, str]] = {
    str: "str", int: "int", float: "float", bool: "bool", type(None): "null",
    list: "list", dict: "dict",
}  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class Tag:
    """A path segment naming the member of a tagged union the walk went into: the
    discriminator's name and value."""

    key: str
    value: str


@dataclasses.dataclass(frozen=True, slots=True)
class Key:
    """A path segment for a map's entry: its key and its position in the object."""

    name: str
    position: int


Segment = str | int | Tag | Key


@dataclasses.dataclass(slots=True)
class Problem:
    """Why a request is refused.

    ``kind``: ``missing`` (a required field), ``type`` (a JSON kind not allowed; the
    allowed kinds are in ``expected``), ``enum`` (a value not in ``allowed``), ``tag``
    (a discriminator value no member has; ``allowed`` lists the known ones),
    ``unknown`` (a field the type does not name: ``value`` is its name), ``below`` /
    ``above`` (a number out of its documented range; the limit is ``bound``).
    ``path`` leads from the body to the offending field, the unknown field's object or
    the tagged union's discriminator.
    """

    kind: str
    path: list[Segment]
    expected: tuple[str, ...] = ()
    value: Any = None
    allowed: tuple[Any, ...] = ()
    bound: float | int | None = None


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


# -- the compiled graph -------------------------------------------------------------------


class _Node:
    __slots__ = ()

    kinds: tuple[str, ...] = ()

    def check(self, value: Any) -> Problem | None:  # pragma: no cover - abstract
        raise NotImplementedError


class _Any(_Node):
    __slots__ = ()
    kinds = ("any",)

    def check(self, value: Any) -> Problem | None:
        return None


class _Scalar(_Node):
    """One JSON kind (``str``, ``int``, ``float``, ``bool``, ``null``), maybe an enum."""

    __slots__ = ("allowed", "enum", "fold", "kind", "kinds", "proto")

    def __init__(self, kind: str, enum: Iterable[Any] | None, proto: bool) -> None:
        self.kind = kind
        self.kinds = (kind,)
        self.proto = proto
        self.allowed: tuple[Any, ...] = tuple(enum) if enum is not None else ()
        self.enum: frozenset[Any] | None = None
        self.fold = False
        if enum is not None:
            self.fold = proto and kind == "str"
            self.enum = frozenset(v.upper() if self.fold else v for v in self.allowed)

    def check(self, value: Any) -> Problem | None:
        enum = self.enum
        if enum is None:
            return None
        if self.fold:
            if type(value) is int or value.upper() in enum:
                return None  # proto JSON: case-insensitive, or the enum's number
        elif value in enum:
            return None
        return Problem("enum", [], (self.kind,), value, self.allowed)


class _List(_Node):
    __slots__ = ("item",)
    kinds = ("list",)

    def __init__(self, item: _Node) -> None:
        self.item = item

    def check(self, value: Any) -> Problem | None:
        node = self.item
        if node.__class__ is _Union:
            by_type = node.by_type
            if all(by_type.get(type(item)) is _EMPTY for item in value):
                return None  # plain scalars of allowed kinds
        check = node.check
        for n, item in enumerate(value):
            problem = check(item)
            if problem is not None:
                problem.path.append(n)
                return problem
        return None


class _Map(_Node):
    __slots__ = ("item",)
    kinds = ("dict",)

    def __init__(self, item: _Node) -> None:
        self.item = item

    def check(self, value: Any) -> Problem | None:
        check = self.item.check
        for n, (key, item) in enumerate(value.items()):
            problem = check(item)
            if problem is not None:
                problem.path.append(Key(key, n))
                return problem
        return None


class _Object(_Node):
    """A closed object: named fields (each maybe spelled two ways), some required."""

    __slots__ = ("fields", "name", "required", "unless")
    kinds = ("dict",)

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[str, tuple[str, _Node]] = {}  # spelling -> (name, node)
        self.required: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, spellings)
        self.unless: dict[str, tuple[str, ...]] = {}  # name -> spellings that excuse it

    def check(self, value: Any) -> Problem | None:
        fields = self.fields
        for key, item in value.items():
            entry = fields.get(key)
            if entry is None:
                return Problem("unknown", [], value=key)
            if item is None:
                continue  # null: absent (a required field is caught below)
            node = entry[1]
            if node.__class__ is _Union and node.by_type.get(type(item)) is _EMPTY:
                continue  # a plain scalar of an allowed kind: nothing more to check
            problem = node.check(item)
            if problem is not None:
                problem.path.append(entry[0])
                return problem
        for name, spellings in self.required:
            if value.get(name) is None and not _given(value, spellings):
                excuse = self.unless.get(name)
                if excuse is not None and _given(value, excuse):
                    continue
                return Problem("missing", [name], self.fields[name][1].kinds)
        return None

    def tag_values(self, key: str) -> tuple[Any, ...] | None:
        """The enum values this object allows for ``key`` (``()`` if it has no such
        field), or ``None`` when ``key`` is a field of another type (no tag)."""
        entry = self.fields.get(key)
        if entry is None:
            return ()
        node = entry[1]
        members = node.members if isinstance(node, _Union) else (node,)
        values: list[Any] = []
        for member in members:
            if isinstance(member, _Scalar) and member.kind == "null":
                continue
            if not (isinstance(member, _Scalar) and member.enum is not None):
                return None
            values += member.allowed
        return tuple(values)

    def requires(self, name: str) -> bool:
        return any(n == name for n, _ in self.required)


def _given(value: dict[str, Any], spellings: tuple[str, ...]) -> bool:
    return any(value.get(s) is not None for s in spellings)


class _Ranged(_Node):
    __slots__ = ("high", "inner", "kinds", "low")

    def __init__(self, inner: _Node, low: float | None, high: float | None) -> None:
        self.inner = inner
        self.kinds = inner.kinds
        self.low = low
        self.high = high

    def check(self, value: Any) -> Problem | None:
        problem = self.inner.check(value)
        if problem is not None:
            return problem
        number = _number(value)
        if number is None:
            return None
        if self.low is not None and number < self.low:
            return Problem("below", [], self.kinds, value, bound=self.low)
        if self.high is not None and number > self.high:
            return Problem("above", [], self.kinds, value, bound=self.high)
        return None


def _number(value: Any) -> float | None:
    if type(value) in (int, float):
        return float(value)
    if type(value) is str:
        try:
            return float(value)
        except ValueError:
            return None
    return None


_EMPTY: Final[tuple[()]] = ()  # accept as is (shared: compared by identity)
_DECIMAL = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


class _Union(_Node):
    """Members told apart by the JSON kind of the value, then (objects) by a tag.

    ``by_type`` maps a Python type to the members to try; an empty tuple accepts the
    value as it is (a plain scalar), a missing type refuses it."""

    __slots__ = ("any", "by_type", "kinds", "members", "proto", "tag_key", "tagged",
                 "untagged")  # fmt: skip

    def __init__(self, members: list[_Node], proto: bool) -> None:
        self.members = tuple(members)
        self.proto = proto
        self.kinds = tuple(dict.fromkeys(k for m in members for k in m.kinds))
        self.any = False
        self.by_type: dict[type, tuple[_Node, ...]] = {}
        self.tag_key: str | None = None
        self.tagged: dict[Any, tuple[_Object, ...]] = {}
        self.untagged: tuple[_Object, ...] = ()

    def finish(self) -> None:
        """Build the dispatch tables (after every referenced object is filled in)."""
        if any(isinstance(m, _Any) for m in self.members):
            self.any, self.kinds = True, ("any",)
            return
        table: dict[type, list[_Node]] = {}
        plain: set[type] = set()  # types some member accepts with no further check
        kinds = set(self.kinds)
        for member in self.members:
            for kind in member.kinds:
                for python_type in _ACCEPTS[kind]:
                    table.setdefault(python_type, []).append(member)
                    if isinstance(member, _Scalar) and member.enum is None:
                        plain.add(python_type)
                    elif isinstance(member, _Map) and isinstance(member.item, _Any):
                        plain.add(python_type)  # a free-form object admits any object
        if float in table and "float" not in kinds:
            table[float] = [_INTEGRAL]  # an integer may be written 3.0, never 3.5
            plain.discard(float)
        if self.proto:
            if "str" not in kinds and kinds & {"int", "float"}:
                table[str] = [_DECIMAL_TEXT]  # proto JSON: a number as a decimal string
            if any(isinstance(m, _Scalar) and m.enum is not None for m in self.members):
                plain.add(int)  # proto JSON: an enum by its number
                table.setdefault(int, [])
        self.by_type = {
            t: _EMPTY if t in plain else tuple(dict.fromkeys(nodes)) for t, nodes in table.items()
        }
        objects = [m for m in self.members if isinstance(m, _Object)]
        if len(objects) > 1:
            self._discriminate(objects)

    def _discriminate(self, objects: list[_Object]) -> None:
        for key in ("type", *sorted({f for o in objects for f in o.fields} - {"type"})):
            tags = [o.tag_values(key) for o in objects]
            if any(t is None for t in tags) or not any(tags):
                continue
            tagged: dict[Any, list[_Object]] = {}
            for obj, values in zip(objects, tags, strict=True):
                for value in values or ():
                    tagged.setdefault(value, []).append(obj)
            self.tag_key = key
            self.tagged = {v: tuple(objs) for v, objs in tagged.items()}
            self.untagged = tuple(o for o in objects if not o.requires(key))
            return

    def check(self, value: Any) -> Problem | None:
        candidates = self.by_type.get(type(value))
        if not candidates:
            if candidates is None and not self.any:
                return Problem("type", [], self.kinds, value)
            return None
        if len(candidates) == 1:
            return candidates[0].check(value)
        if self.tag_key is not None and type(value) is dict:
            return self._tagged(value)
        return _first_fit(candidates, value)

    def _tagged(self, value: dict[str, Any]) -> Problem | None:
        key = self.tag_key
        tag = value.get(key) if key is not None else None
        if tag is None:
            if not self.untagged:
                return Problem("missing", [str(key)], ("str",))
            return _first_fit(self.untagged, value)
        if type(tag) is not str:
            return Problem("type", [str(key)], ("str",), tag)
        members = self.tagged.get(tag)
        if members is None:
            return Problem("tag", [str(key)], ("str",), tag, tuple(self.tagged))
        problem = members[0].check(value) if len(members) == 1 else _first_fit(members, value)
        if problem is not None:
            problem.path.append(Tag(str(key), tag))
        return problem


class _IntegralFloat(_Node):
    __slots__ = ()
    kinds = ("int",)

    def check(self, value: Any) -> Problem | None:
        return None if value.is_integer() else Problem("type", [], ("int",), value)


class _DecimalText(_Node):
    __slots__ = ()
    kinds = ("float",)

    def check(self, value: Any) -> Problem | None:
        return None if _DECIMAL.fullmatch(value) else Problem("type", [], ("float",), value)


_INTEGRAL: Final = _IntegralFloat()
_DECIMAL_TEXT: Final = _DecimalText()
_ACCEPTS: Final[dict[str, tuple[type, ...]]] = {
    "str": (str,), "int": (int, float), "float": (int, float), "bool": (bool,),
    "null": (type(None),), "list": (list,), "dict": (dict,),
}  # fmt: skip


def _first_fit(candidates: Sequence[_Node], value: Any) -> Problem | None:
    best: Problem | None = None
    for node in candidates:
        problem = node.check(value)
        if problem is None:
            return None
        if best is None or len(problem.path) > len(best.path):
            best = problem
    return best


# -- compiling ----------------------------------------------------------------------------


class RequestSpec:
    """A compiled spec: :meth:`problem` is the one walk of a request body."""

    __slots__ = ("root",)

    def __init__(self, root: _Node) -> None:
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
        self.objects: dict[str, _Object] = {}
        self.unions: list[_Union] = []
        self.scalars: dict[tuple[str, tuple[Any, ...] | None], _Scalar] = {}
        self.any = _Any()

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

    def expr(self, expr: Any) -> _Node:
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
            return self.wrap(_List(self.expr(expr["list"])))
        if "map" in expr:
            return self.wrap(_Map(self.expr(expr["map"])))
        members = self.flatten(expr["union"])
        if len(members) == 1:
            return members[0]
        union = _Union(members, self.proto)
        self.unions.append(union)
        return union

    def wrap(self, node: _Node) -> _Node:
        """Containers are checked through a union, which first checks the JSON kind."""
        union = _Union([node], self.proto)
        self.unions.append(union)
        return union

    def scalar(self, kind: str, enum: tuple[Any, ...] | None) -> _Node:
        key = (kind, enum)
        found = self.scalars.get(key)
        if found is None:
            found = _Scalar(kind, enum, self.proto)
            found = self.scalars[key] = found
        return self.wrap(found)

    def ref(self, name: str) -> _Node:
        obj = self.objects.get(name)
        if obj is None:
            if name not in self.spec["types"]:
                raise ValueError(f"the spec refers to an undefined type {name!r}")
            obj = self.objects[name] = _Object(name)
        return self.wrap(obj)

    def flatten(self, exprs: list[Any]) -> list[_Node]:
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
        nodes: list[_Node] = []
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
        members: list[_Node] = []
        for node in nodes:  # unwrap the kind-check unions: this union checks the kind
            if isinstance(node, _Union) and len(node.members) == 1:
                members.append(node.members[0])
            else:
                members.append(node)
        return members

    def fill(self, obj: _Object, spec: Mapping[str, Any]) -> None:
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
                node = _Ranged(node, *bounds)
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


def _names(obj: _Object) -> set[str]:
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
