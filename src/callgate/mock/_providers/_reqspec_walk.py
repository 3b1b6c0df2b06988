"""Request specs, compiled: the graph of nodes whose ``check`` is the one walk of a body.

:func:`~._reqspec.compile_spec` builds the graph from a spec's JSON; each node checks one
value and returns the first :class:`Problem` found under it (its path built from the
inside out, reversed once by :meth:`~._reqspec.RequestSpec.problem`), or ``None``. The
rules the walk applies are listed in :mod:`._reqspec`. No provider name appears here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

__all__ = [
    "KIND_OF", "AnyNode", "Key", "ListNode", "MapNode", "Node", "ObjectNode", "Problem",
    "RangedNode", "ScalarNode", "Segment", "Tag", "UnionNode",
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


# -- the compiled graph -------------------------------------------------------------------


class Node:
    __slots__ = ()

    kinds: tuple[str, ...] = ()

    def check(self, value: Any) -> Problem | None:  # pragma: no cover - abstract
        raise NotImplementedError


class AnyNode(Node):
    __slots__ = ()
    kinds = ("any",)

    def check(self, value: Any) -> Problem | None:
        return None


class ScalarNode(Node):
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


class ListNode(Node):
    __slots__ = ("item",)
    kinds = ("list",)

    def __init__(self, item: Node) -> None:
        self.item = item

    def check(self, value: Any) -> Problem | None:
        node = self.item
        if node.__class__ is UnionNode:
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


class MapNode(Node):
    __slots__ = ("item",)
    kinds = ("dict",)

    def __init__(self, item: Node) -> None:
        self.item = item

    def check(self, value: Any) -> Problem | None:
        check = self.item.check
        for n, (key, item) in enumerate(value.items()):
            problem = check(item)
            if problem is not None:
                problem.path.append(Key(key, n))
                return problem
        return None


class ObjectNode(Node):
    """A closed object: named fields (each maybe spelled two ways), some required."""

    __slots__ = ("fields", "name", "required", "unless")
    kinds = ("dict",)

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[str, tuple[str, Node]] = {}  # spelling -> (name, node)
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
            if node.__class__ is UnionNode and node.by_type.get(type(item)) is _EMPTY:
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
        members = node.members if isinstance(node, UnionNode) else (node,)
        values: list[Any] = []
        for member in members:
            if isinstance(member, ScalarNode) and member.kind == "null":
                continue
            if not (isinstance(member, ScalarNode) and member.enum is not None):
                return None
            values += member.allowed
        return tuple(values)

    def requires(self, name: str) -> bool:
        return any(n == name for n, _ in self.required)


def _given(value: dict[str, Any], spellings: tuple[str, ...]) -> bool:
    return any(value.get(s) is not None for s in spellings)


class RangedNode(Node):
    __slots__ = ("high", "inner", "kinds", "low")

    def __init__(self, inner: Node, low: float | None, high: float | None) -> None:
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


class UnionNode(Node):
    """Members told apart by the JSON kind of the value, then (objects) by a tag.

    ``by_type`` maps a Python type to the members to try; an empty tuple accepts the
    value as it is (a plain scalar), a missing type refuses it."""

    __slots__ = ("any", "by_type", "kinds", "members", "proto", "tag_key", "tagged",
                 "untagged")  # fmt: skip

    def __init__(self, members: list[Node], proto: bool) -> None:
        self.members = tuple(members)
        self.proto = proto
        self.kinds = tuple(dict.fromkeys(k for m in members for k in m.kinds))
        self.any = False
        self.by_type: dict[type, tuple[Node, ...]] = {}
        self.tag_key: str | None = None
        self.tagged: dict[Any, tuple[ObjectNode, ...]] = {}
        self.untagged: tuple[ObjectNode, ...] = ()

    def finish(self) -> None:
        """Build the dispatch tables (after every referenced object is filled in)."""
        if any(isinstance(m, AnyNode) for m in self.members):
            self.any, self.kinds = True, ("any",)
            return
        table: dict[type, list[Node]] = {}
        plain: set[type] = set()  # types some member accepts with no further check
        kinds = set(self.kinds)
        for member in self.members:
            for kind in member.kinds:
                for python_type in _ACCEPTS[kind]:
                    table.setdefault(python_type, []).append(member)
                    if isinstance(member, ScalarNode) and member.enum is None:
                        plain.add(python_type)
                    elif isinstance(member, MapNode) and isinstance(member.item, AnyNode):
                        plain.add(python_type)  # a free-form object admits any object
        if float in table and "float" not in kinds:
            table[float] = [_INTEGRAL]  # an integer may be written 3.0, never 3.5
            plain.discard(float)
        if self.proto:
            if "str" not in kinds and kinds & {"int", "float"}:
                table[str] = [_DECIMAL_TEXT]  # proto JSON: a number as a decimal string
            if any(isinstance(m, ScalarNode) and m.enum is not None for m in self.members):
                plain.add(int)  # proto JSON: an enum by its number
                table.setdefault(int, [])
        self.by_type = {
            t: _EMPTY if t in plain else tuple(dict.fromkeys(nodes)) for t, nodes in table.items()
        }
        objects = [m for m in self.members if isinstance(m, ObjectNode)]
        if len(objects) > 1:
            self._discriminate(objects)

    def _discriminate(self, objects: list[ObjectNode]) -> None:
        for key in ("type", *sorted({f for o in objects for f in o.fields} - {"type"})):
            tags = [o.tag_values(key) for o in objects]
            if any(t is None for t in tags) or not any(tags):
                continue
            tagged: dict[Any, list[ObjectNode]] = {}
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


class _IntegralFloat(Node):
    __slots__ = ()
    kinds = ("int",)

    def check(self, value: Any) -> Problem | None:
        return None if value.is_integer() else Problem("type", [], ("int",), value)


class _DecimalText(Node):
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


def _first_fit(candidates: Sequence[Node], value: Any) -> Problem | None:
    best: Problem | None = None
    for node in candidates:
        problem = node.check(value)
        if problem is None:
            return None
        if best is None or len(problem.path) > len(best.path):
            best = problem
    return best
