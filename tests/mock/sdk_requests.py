"""Create requests built from an official SDK's typed params, as the SDK sends them.

:func:`requests` draws params from the SDK's request TypedDicts (whichever SDK generation
is installed) and records, for each object field it drew, its wire path, whether the
types require it and the JSON kinds they allow; :func:`wire` serializes the params with
the SDK's own transform. The mock's specs are checked against both, independently of the
specs themselves: a body the SDK builds must be accepted, and a body with a recorded
field removed or given a wrong kind must be refused naming that field.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import json
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import typing_extensions as te
from hypothesis import strategies as st

# Values the checks take from the docs rather than the types (the mock's overlays):
# drawn inside their documented ranges and enums, by field name.
RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0, 1), "top_p": (0, 1), "top_logprobs": (0, 20), "top_k": (0, 40),
    "max_output_tokens": (16, 4096), "max_tokens": (0, 4096), "budget_tokens": (1024, 4096),
}  # fmt: skip
MAX_DEPTH = 3


@dataclasses.dataclass(frozen=True)
class Field:
    """One drawn object field: its wire path, whether the types require it (and not as
    nullable), the JSON kinds its type allows, and whether its object was told apart from
    its union's other members by a tag of its own (so a mutation cannot make it another)."""

    path: tuple[str | int, ...]
    required: bool
    kinds: frozenset[str]
    distinct: bool


@dataclasses.dataclass
class Drawn:
    params: dict[str, Any]
    fields: list[Field]


def _unwrap(hint: Any) -> Any:
    while True:
        origin = typing.get_origin(hint)
        if origin in (te.Required, te.NotRequired, te.Annotated, typing.ClassVar):
            hint = typing.get_args(hint)[0]
        elif type(hint).__name__ == "TypeAliasType":
            hint = hint.__value__
        else:
            return hint


def _alias(hint: Any, key: str) -> str:
    for item in typing.get_args(hint)[1:] if typing.get_origin(hint) is te.Annotated else ():
        alias = getattr(item, "alias", None)
        if isinstance(alias, str):
            return alias
    for inner in typing.get_args(hint):
        if typing.get_origin(inner) is te.Annotated:
            return _alias(inner, key)
    return key


def kinds_of(hint: Any) -> frozenset[str]:
    """The JSON kinds a value of ``hint`` may have."""
    hint = _unwrap(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return frozenset().union(*(kinds_of(a) for a in typing.get_args(hint)))
    if origin is typing.Literal:
        return frozenset(
            "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "str"
            for v in typing.get_args(hint)
        )
    if hint is type(None):
        return frozenset({"null"})
    if hint is str or hint is bytes:
        return frozenset({"str"})
    if hint is bool:
        return frozenset({"bool"})
    if hint is int:
        return frozenset({"int"})
    if hint is float:
        return frozenset({"int", "float"})
    if hint is typing.Any or hint is object:
        return frozenset({"any"})
    if origin in (list, tuple, set, Iterable, Sequence) or _named(hint, "SequenceNotStr"):
        return frozenset({"list"})
    if origin in (dict, Mapping) or te.is_typeddict(hint):
        return frozenset({"dict"})
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return frozenset({"str"})
    if inspect.isclass(hint) and hint.__name__ == "UnrecognizedStr":
        return frozenset({"str"})
    return frozenset({"any"})


def _named(hint: Any, name: str) -> bool:
    origin = typing.get_origin(hint)
    return getattr(origin, "__name__", "") == name or getattr(hint, "__name__", "") == name


_TEXT = st.text(alphabet="abcxyz", min_size=1, max_size=6)


@st.composite
def requests(draw: Callable[..., Any], root: type, *, fixed: Mapping[str, Any] = ()) -> Drawn:
    """Params of TypedDict ``root`` (``fixed`` keys set as given), with their fields."""
    fields: list[Field] = []
    params = _typeddict(draw, root, (), 0, fields, distinct=True, fixed=dict(fixed))
    return Drawn(params, fields)


def _typeddict(
    draw: Any, cls: type, path: tuple[Any, ...], depth: int, fields: list[Field],
    *, distinct: bool, fixed: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    hints = _hints(cls)
    required = set(getattr(cls, "__required_keys__", ()))
    out: dict[str, Any] = {}
    for key, hint in hints.items():
        marker = typing.get_origin(hint)
        is_required = marker is te.Required or (key in required and marker is not te.NotRequired)
        wire = _alias(hint, key)
        if "-" in wire or key in ("betas", "user_profile_id", "workspace_id"):
            continue  # sent as a header
        if fixed and key in fixed:
            out[key] = fixed[key]
            continue
        if not is_required and (depth >= MAX_DEPTH or not draw(st.booleans())):
            continue
        kinds = kinds_of(hint)
        mark = len(fields)
        value = _value(draw, hint, (*path, wire), depth + 1, fields, key)
        if value is None and not is_required:
            del fields[mark:]
            continue
        fields.insert(mark, Field((*path, wire), is_required and "null" not in kinds, kinds,
                                  distinct))  # fmt: skip
        out[key] = value
    return out


def _value(draw: Any, hint: Any, path: tuple[Any, ...], depth: int, fields: list[Field],
           key: str) -> Any:  # fmt: skip
    hint = _unwrap(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        # (an SDK response model is accepted as input too; drawn as its TypedDict twin)
        members = [a for a in args if _unwrap(a) is not type(None) and not _model(a)]
        if not members:
            return None  # only response models (or null) here: leave the field out
        if depth >= MAX_DEPTH:  # prefer what ends the recursion
            flat = [m for m in members if not _deep(m)]
            members = flat or members
        choice = draw(st.sampled_from(members))
        tds = [_unwrap(m) for m in members if te.is_typeddict(_unwrap(m))]
        if te.is_typeddict(_unwrap(choice)):
            # (a union that also takes any mapping, e.g. Interactions' response_format,
            # accepts the member with a field removed or mistyped: nothing to refuse)
            free = any(typing.get_origin(_unwrap(m)) in (dict, Mapping) for m in members)
            distinct = not free and _distinct_tag(_unwrap(choice), tds)
            return _typeddict(draw, _unwrap(choice), path, depth, fields, distinct=distinct)
        return _value(draw, choice, path, depth, fields, key)
    if origin is typing.Literal:
        return draw(st.sampled_from(args))
    if te.is_typeddict(hint):
        return _typeddict(draw, hint, path, depth, fields, distinct=True)
    if hint is str:
        return draw(_TEXT)
    if hint is bytes or origin is typing.IO or _named(hint, "PathLike"):
        return "aGk="
    if hint is bool:
        return draw(st.booleans())
    if hint is int:
        low, high = RANGES.get(key, (0, 1000))
        return draw(st.integers(int(low), int(high)))
    if hint is float:
        low, high = RANGES.get(key, (0, 1000))
        return draw(st.floats(low, high, allow_nan=False, allow_infinity=False))
    if hint is typing.Any or hint is object:
        return draw(st.sampled_from(["x", 1, {"k": "v"}]))
    if origin in (list, tuple, set, Iterable, Sequence) or _named(hint, "SequenceNotStr"):
        item = args[0] if args else str
        size = 0 if depth >= MAX_DEPTH else draw(st.integers(0, 2))
        return [_value(draw, item, (*path, n), depth + 1, fields, key) for n in range(size)]
    if origin in (dict, Mapping):
        value = args[1] if len(args) == 2 else str
        if _unwrap(value) in (object, typing.Any):
            return {"k": "v"}
        return {"k": _value(draw, value, (*path, "k"), depth + 1, [], key)}
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return draw(st.sampled_from([m.value for m in hint]))
    if inspect.isclass(hint) and hint.__name__ in ("UnrecognizedStr",):
        return draw(_TEXT)
    raise TypeError(f"no strategy for {hint!r}")


def _model(hint: Any) -> bool:
    hint = _unwrap(hint)
    return inspect.isclass(hint) and hasattr(hint, "model_fields")


def _deep(hint: Any) -> bool:
    hint = _unwrap(hint)
    return te.is_typeddict(hint) or typing.get_origin(hint) in (list, Iterable, Sequence)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


@functools.cache
def _tag(cls: type) -> tuple[Any, ...] | None:
    hints = {k: _unwrap(v) for k, v in _hints(cls).items()}
    hint = _unwrap(hints["type"]) if "type" in hints else None
    if hint is None:
        return None
    values = [a for a in typing.get_args(hint) if a is not None]
    if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType):
        values = [v for a in typing.get_args(hint) for v in typing.get_args(_unwrap(a))]
    return tuple(values) or None


def _distinct_tag(cls: type, members: list[type]) -> bool:
    """Whether ``cls`` is the only member of its union with its ``type`` tag."""
    if len(members) <= 1:
        return True
    mine = _tag(cls)
    if mine is None:
        return False
    return all(other is cls or not set(mine) & set(_tag(other) or ()) for other in members)


# -- wrong values -----------------------------------------------------------------------------


def wrong_value(kinds: frozenset[str], *, proto: bool = False) -> Any:
    """A JSON value of a kind ``kinds`` does not allow (``None`` if every kind is)."""
    for value, kind in ((True, "bool"), ({"x": 1}, "dict"), ([7], "list"), ("text", "str"),
                        (12345, "int"), (1.5, "float")):  # fmt: skip
        if "any" in kinds or kind in kinds:
            continue
        if kind == "int" and ("float" in kinds or (proto and "str" in kinds)):
            continue  # an int is a number; a proto enum may be its number
        if kind == "str" and proto and kinds & {"int", "float"}:
            continue  # proto JSON: a number may be a string (but not "text": kept simple)
        return value
    return None


def at(body: Any, path: Sequence[Any]) -> Any:
    for segment in path:
        body = body[segment]
    return body


def mutated(body: dict[str, Any], path: Sequence[Any], value: Any = ...) -> dict[str, Any]:
    """A copy of ``body`` with the field at ``path`` removed (or set to ``value``)."""
    copy = json.loads(json.dumps(body))
    parent = at(copy, path[:-1])
    if value is ...:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


def present(body: Any, path: Sequence[Any]) -> bool:
    try:
        at(body, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True
