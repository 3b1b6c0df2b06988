"""A small JSONPath subset for fixture predicates: compiled once at load, run per request.

Supported (and nothing else; anything else is refused when the script loads)::

    $                 the request body (the root; every path starts with it)
    .name  ['name']   a member of an object ("name" quoted with ' or ", \\ escapes the quote)
    [n]  [-n]         an element of an array (negative counts from the end)
    .*  [*]           every member of an object / every element of an array

A path yields the list of nodes it reaches (possibly empty): a step that does not fit the
value (a member of an array, an index past the end) reaches nothing, never an error.
Filters (``[?(...)]``), slices (``[a:b]``), unions (``[a,b]``), recursive descent
(``..``) and functions are not supported: their results would differ between JSONPath
dialects, so a script using one gets a clear error instead of a guess.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["JSONPathError", "compile_path", "select"]

Step = tuple[str, Any]  # ("key", name) | ("index", n) | ("all", None)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEX = re.compile(r"-?(0|[1-9][0-9]*)")
MAX_PATH_CHARS = 1024


class JSONPathError(ValueError):
    """A path outside the supported subset; the message says what and where."""


@functools.lru_cache(maxsize=512)
def compile_path(path: str) -> tuple[Step, ...]:
    """The steps of ``path``. Raises :class:`JSONPathError` for syntax outside the subset."""
    if len(path) > MAX_PATH_CHARS:
        raise JSONPathError(f"a path is at most {MAX_PATH_CHARS} characters")
    if not path.startswith("$"):
        raise JSONPathError("a path starts with '$' (the request body)")
    steps: list[Step] = []
    pos = 1
    while pos < len(path):
        step, pos = _step(path, pos)
        steps.append(step)
    return tuple(steps)


def _step(path: str, pos: int) -> tuple[Step, int]:
    char = path[pos]
    if char == ".":
        if path.startswith("..", pos):
            raise _unsupported(path, pos, "recursive descent '..'")
        if path.startswith(".*", pos):
            return ("all", None), pos + 2
        found = _NAME.match(path, pos + 1)
        if found is None:
            raise JSONPathError(f"expected a member name after '.' at offset {pos} of {path!r}")
        return ("key", found.group()), found.end()
    if char == "[":
        return _bracket(path, pos)
    raise JSONPathError(f"unexpected {char!r} at offset {pos} of {path!r}")


def _bracket(path: str, pos: int) -> tuple[Step, int]:
    inner = pos + 1
    if path.startswith("*]", inner):
        return ("all", None), inner + 2
    if inner < len(path) and path[inner] in "'\"":
        name, end = _quoted(path, inner)
        if not path.startswith("]", end):
            raise _unsupported(path, pos, "a union or anything after a quoted name")
        return ("key", name), end + 1
    if path.startswith("?", inner):
        raise _unsupported(path, pos, "a filter '[?(...)]'")
    found = _INDEX.match(path, inner)
    if found is not None and path.startswith("]", found.end()):
        return ("index", int(found.group())), found.end() + 1
    close = path.find("]", inner)
    body = path[inner:close] if close >= 0 else path[inner:]
    if ":" in body:
        raise _unsupported(path, pos, "a slice '[a:b]'")
    if "," in body:
        raise _unsupported(path, pos, "a union '[a,b]'")
    raise JSONPathError(f"expected [n], [*] or ['name'] at offset {pos} of {path!r}")


def _quoted(path: str, pos: int) -> tuple[str, int]:
    quote, out, i = path[pos], [], pos + 1
    while i < len(path):
        char = path[i]
        if char == "\\" and i + 1 < len(path):
            out.append(path[i + 1])
            i += 2
            continue
        if char == quote:
            return "".join(out), i + 1
        out.append(char)
        i += 1
    raise JSONPathError(f"unterminated quoted name at offset {pos} of {path!r}")


def _unsupported(path: str, pos: int, what: str) -> JSONPathError:
    return JSONPathError(
        f"{what} at offset {pos} of {path!r} is not in the supported JSONPath subset "
        "($, .name, ['name'], [n], [*], .*)"
    )


def select(steps: tuple[Step, ...], document: Any) -> list[Any]:
    """Every node ``steps`` reach in ``document`` (in document order)."""
    nodes = [document]
    for kind, arg in steps:
        nodes = list(_apply(kind, arg, nodes))
        if not nodes:
            break
    return nodes


def _apply(kind: str, arg: Any, nodes: list[Any]) -> Iterator[Any]:
    for node in nodes:
        if kind == "key":
            if isinstance(node, dict) and arg in node:
                yield node[arg]
        elif kind == "index":
            if isinstance(node, list) and -len(node) <= arg < len(node):
                yield node[arg]
        elif isinstance(node, dict):
            yield from node.values()
        elif isinstance(node, list):
            yield from node
