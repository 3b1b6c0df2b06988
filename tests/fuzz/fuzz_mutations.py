"""Mutation operators for the fuzzer: bytes, SSE frames, events and JSON values.

Every operator takes a ``random.Random`` and returns (or applies) its change together with
a short description, so a failure prints the exact recipe that produced its input.

Values that JSON text and Python objects cannot both hold directly (ints over 4,300
digits, 10,000-deep arrays, ``NaN``, lone surrogates, ``tuple``...) are :class:`Raw`
leaves: ``text`` is what goes on the wire, ``make()`` builds the Python object that goes
through ``feed_event``/``parse_response(dict)``.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .fuzz_readings import DONE


@dataclass(frozen=True)
class Raw:
    """A leaf written as ``text`` on the wire and built by ``make`` for Python input."""

    label: str
    text: str
    make: Callable[[], Any]


class _Str(str):
    """A ``str`` subclass: equal to a real string, but not exactly a ``str``."""


def _nested(depth: int, kind: type) -> Any:
    value: Any = kind()
    for _ in range(depth - 1):
        value = [value] if kind is list else {"a": value}
    return value


def _huge(digits: int) -> Raw:
    return Raw(f"int{digits}", "9" * digits, lambda: 10**digits - 1)


def _deep(depth: int, kind: type) -> Raw:
    text = (
        "[" * depth + "]" * depth
        if kind is list
        else '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)
    )
    return Raw(f"deep-{kind.__name__}{depth}", text, lambda: _nested(depth, kind))


def _raw(label: str, text: str, make: Callable[[], Any]) -> Raw:
    return Raw(label, text, make)


# Wrong-typed replacements: plain JSON first, then the Raw leaves.
PLAIN_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**31, 2**63, 2**64 + 1, -(2**63) - 1, 1.5, -0.0, 1e308,
    "", "x", "tool_use", "\u2028\u00fc\U0001f326", "\x00", "a" * 70_000,
    [], {}, [1, "x"], {"a": 1}, [[]], {"type": None}, [{}], {"": ""},
)  # fmt: skip
RAW_VALUES: tuple[Raw, ...] = (
    _huge(4301),
    _huge(5000),
    _huge(1001),
    _deep(5000, list),
    _deep(1200, dict),
    _deep(200, list),
    _raw("nan", "NaN", lambda: float("nan")),
    _raw("inf", "Infinity", lambda: float("inf")),
    _raw("1e400", "1e400", lambda: float("inf")),
    _raw("lone-surrogate", '"\\ud800x"', lambda: "\ud800x"),
    _raw("tuple", "[1,2]", lambda: (1, 2)),
    _raw("int-key", '{"1":"a"}', lambda: {1: "a"}),
    _raw("str-subclass", '"tool_use"', lambda: _Str("tool_use")),
    _raw("bytes", '"eA=="', lambda: b"x"),
    _raw("set", "[]", lambda: set()),
)


def wrong_value(rng: random.Random) -> Any:
    if rng.random() < 0.35:
        return rng.choice(RAW_VALUES)
    return copy.deepcopy(rng.choice(PLAIN_VALUES))


def describe(value: Any) -> str:
    if isinstance(value, Raw):
        return f"<{value.label}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- JSON text and Python objects from a tree that may hold Raw leaves -------------------


def to_text(tree: Any) -> str:
    raws: list[Raw] = []

    def hold(obj: Any) -> str:
        if isinstance(obj, Raw):
            raws.append(obj)
            return f"@@RAW{len(raws) - 1}@@"
        raise TypeError(f"not JSON: {type(obj).__name__}")

    text = json.dumps(tree, ensure_ascii=False, separators=(",", ":"), default=hold)
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw.text, 1)
    return text


def to_python(tree: Any) -> Any:
    """A fresh Python object with every Raw leaf built (trees stay shallow: deep values
    are Raw leaves)."""
    if isinstance(tree, Raw):
        return tree.make()
    if isinstance(tree, dict):
        return {k: to_python(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [to_python(v) for v in tree]
    return tree


# -- JSON value mutations -----------------------------------------------------------------


def _slots(tree: Any) -> list[tuple[Any, Any, str]]:
    """Every (container, key, path) below ``tree``."""
    out: list[tuple[Any, Any, str]] = []
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for key, child in items:
            sub = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"
            out.append((node, key, sub))
            stack.append((child, sub))
    return out


Vocab = dict[str, list[Any]]
# Keys that decide what is released: added and re-valued more often.
HOT_KEYS = (
    "stop_reason", "status", "type", "event_type", "error", "index", "id", "call_id", "name",
    "arguments", "input", "output", "content", "steps", "delta", "response", "message",
    "interaction", "partial_json", "caller", "sequence_number", "output_index", "item_id",
)  # fmt: skip


def build_vocab(trees: list[Any]) -> Vocab:
    """key -> the distinct scalar values (and small objects) seen under it."""
    vocab: dict[str, list[Any]] = {}
    for tree in trees:
        for container, key, _ in _slots(tree):
            if not isinstance(key, str):
                continue
            value = container[key]
            seen = vocab.setdefault(key, [])
            small = not isinstance(value, dict | list) or len(json.dumps(value)) < 200
            if small and value not in seen and len(seen) < 24:
                seen.append(value)
    return {k: v for k, v in vocab.items() if v}


# Values that make a turn releasable: picked more often when a key has seen one.
RELEASING = ("tool_use", "requires_action", "completed", "function_call")


def _seen_value(rng: random.Random, vocab: Vocab, key: str) -> Any:
    values = vocab[key]
    hot = [v for v in values if isinstance(v, str) and v in RELEASING]
    return copy.deepcopy(rng.choice(hot if hot and rng.random() < 0.5 else values))


def mutate_json(rng: random.Random, tree: Any, vocab: Vocab) -> str:
    """Change ``tree`` in place once; return what was done."""
    slots = _slots(tree)
    dicts = [tree] if isinstance(tree, dict) else []
    dicts += [c[k] for c, k, _ in slots if isinstance(c[k], dict)]
    op = rng.choice(
        ("delete", "retype", "retype", "vocab", "vocab", "add", "add", "nudge", "hoist")
    )
    nested = [(k, p) for c, k, p in slots if isinstance(k, str) and p.count(".") > 1]
    if op == "hoist" and nested and isinstance(tree, dict) and vocab:
        # A nested field repeated at the top level, with a value seen under its name:
        # the shape of "extra top-level keys merged into the state" bugs.
        key, path = rng.choice(nested)
        value = _seen_value(rng, vocab, key) if key in vocab else wrong_value(rng)
        tree[key] = value
        return f"hoist {path} to top level ={describe(value)}"
    if op == "add" and dicts:
        target = dicts[0] if rng.random() < 0.4 else rng.choice(dicts)
        hot = [k for k in HOT_KEYS if k in vocab]
        key = rng.choice(hot if hot and rng.random() < 0.6 else sorted(vocab))
        value = _seen_value(rng, vocab, key) if rng.random() < 0.8 else wrong_value(rng)
        target[key] = value
        return f"add {key!r}={describe(value)}"
    if not slots:
        return "no-op (empty)"
    container, key, path = rng.choice(slots)
    if op == "delete":
        del container[key]
        return f"delete {path}"
    if op == "vocab" and isinstance(key, str) and vocab.get(key):
        value = _seen_value(rng, vocab, key)
    elif op == "nudge" and type(container[key]) is int:
        value = container[key] + rng.choice((-1, 1, -(2**53), 2**53))
    else:
        value = wrong_value(rng)
    container[key] = value
    return f"set {path}={describe(value)}"


# -- SSE frames ---------------------------------------------------------------------------


@dataclass
class Frame:
    """One SSE event: its name and its data as JSON text, or decoded (``tree``)."""

    name: str | None
    tree: Any  # a JSON tree (may hold Raw leaves) or the string "[DONE]"

    def encode(self) -> bytes:
        text = DONE if self.tree == DONE else to_text(self.tree)
        head = "" if self.name is None else f"event: {self.name}\n"
        body = "".join(f"data: {line}\n" for line in text.split("\n"))
        return (head + body + "\n").encode("utf-8", "surrogatepass")

    def python(self) -> Any:
        return DONE if self.tree == DONE else to_python(self.tree)


def encode_frames(frames: list[Frame]) -> bytes:
    return b"".join(f.encode() for f in frames)


def mutate_frames(
    rng: random.Random, frames: list[Frame], vocab: Vocab, donors: list[Frame]
) -> str:
    """One event-level change in place: drop, duplicate, swap, move, cut the tail, splice
    in a donor event, rename, or a JSON change inside one event."""
    n = len(frames)
    op = rng.choice(
        ("json", "json", "json", "json", "drop", "dup", "swap", "move", "tail", "splice", "name")
    )
    if n == 0:
        frames.append(copy.deepcopy(rng.choice(donors)))
        return "splice into empty"
    i = rng.randrange(n)
    if op == "drop":
        del frames[i]
        return f"drop event {i}"
    if op == "dup":
        j = rng.choice((i + 1, rng.randrange(n + 1)))
        frames.insert(j, copy.deepcopy(frames[i]))
        return f"duplicate event {i} at {j}"
    if op in ("swap", "move"):
        j = rng.choice((min(i + 1, n - 1), rng.randrange(n)))
        if op == "swap":
            frames[i], frames[j] = frames[j], frames[i]
            return f"swap events {i},{j}"
        frames.insert(j, frames.pop(i))
        return f"move event {i} to {j}"
    if op == "tail":
        del frames[i:]
        return f"cut events from {i}"
    if op == "splice":
        donor = copy.deepcopy(rng.choice(donors))
        frames.insert(i, donor)
        return f"splice donor {_type_of(donor)} at {i}"
    if op == "name":
        frames[i].name = rng.choice((None, "error", _type_of(rng.choice(donors))))
        return f"rename event {i} to {frames[i].name!r}"
    if rng.random() < 0.5:  # the last events decide what is released: change them more
        i = rng.randrange(max(0, n - 3), n)
    if frames[i].tree == DONE:
        frames[i].tree = {}
        return f"event {i}: [DONE] -> {{}}"
    return f"event {i} ({_type_of(frames[i])}): {mutate_json(rng, frames[i].tree, vocab)}"


def _type_of(frame: Frame) -> str:
    tree = frame.tree
    if isinstance(tree, dict):
        kind = tree.get("type", tree.get("event_type"))
        return kind if isinstance(kind, str) else "?"
    return str(tree)[:20]


# -- raw bytes ----------------------------------------------------------------------------

_LINE_END = re.compile(rb"\r\n|\r|\n")


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One byte-level change: flips, cuts, range edits, line-end and framing variants."""
    n = len(data)
    op = rng.choice(
        ("flip", "flip", "set", "cut", "delete", "dup", "insert", "eol", "eol", "frame")
    )
    if n == 0:
        return b"\n", "empty -> newline"
    i = rng.randrange(n)
    if op == "flip":
        bit = 1 << rng.randrange(8)
        return data[:i] + bytes([data[i] ^ bit]) + data[i + 1 :], f"flip bit {bit:#x} at {i}"
    if op == "set":
        b = rng.choice((0, 0x0A, 0x0D, 0x22, 0x5C, 0x7B, 0x80, 0xC3, 0xFF, rng.randrange(256)))
        return data[:i] + bytes([b]) + data[i + 1 :], f"set byte {i}={b:#04x}"
    if op == "cut":
        return data[:i], f"truncate at {i}"
    j = min(n, i + rng.choice((1, 2, 8, 64, 512)))
    if op == "delete":
        return data[:i] + data[j:], f"delete [{i}:{j}]"
    if op == "dup":
        return data[:j] + data[i:j] + data[j:], f"duplicate [{i}:{j}]"
    if op == "insert":
        junk = rng.choice((b"\n", b"\n\n", b"\r", b"data: x\n", b"\xef\xbb\xbf", b'"', b"}"))
        return data[:i] + junk + data[i:], f"insert {junk!r} at {i}"
    if op == "eol":
        return line_end_variant(rng, data)
    return framing_variant(rng, data)


def line_end_variant(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    mode = rng.choice(("crlf", "cr", "lf", "mixed"))
    if mode == "mixed":
        return _LINE_END.sub(lambda _m: rng.choice((b"\r\n", b"\r", b"\n")), data), "eol mixed"
    end = {"crlf": b"\r\n", "cr": b"\r", "lf": b"\n"}[mode]
    return _LINE_END.sub(end, data), f"eol {mode}"


def framing_variant(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Spec-equivalent SSE spellings: BOM, comments, ``data:`` without space, ids."""
    mode = rng.choice(("bom", "comment", "nospace", "id", "retry", "blank"))
    if mode == "bom":
        return b"\xef\xbb\xbf" + data, "bom"
    if mode == "nospace":
        return data.replace(b"data: ", b"data:"), "data without space"
    extra = {"comment": b": keep-alive\n", "id": b"id: 7\n", "retry": b"retry: 10\n"}
    line = extra.get(mode, b"\n")
    ends = [m.end() for m in _LINE_END.finditer(data)]
    at = rng.choice(ends) if ends else 0
    return data[:at] + line + data[at:], f"{mode} line at {at}"


def chunkings(rng: random.Random, data: bytes) -> list[tuple[str, list[bytes]]]:
    """The whole input, plus one other chunking: byte by byte (small inputs), fixed
    sizes, or random cut points."""
    out = [("whole", [data])]
    mode = rng.choice(("bytes", "fixed", "random", "random"))
    if mode == "bytes" and len(data) <= 4096:
        out.append(("byte-by-byte", [data[i : i + 1] for i in range(len(data))]))
    elif mode == "fixed":
        size = rng.choice((2, 3, 7, 64, 1000))
        out.append((f"chunks of {size}", [data[i : i + size] for i in range(0, len(data), size)]))
    else:
        cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(1, 12)))
        parts = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        out.append((f"random cuts {cuts}", parts))
    return out
