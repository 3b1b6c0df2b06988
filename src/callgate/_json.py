"""Strict JSON: the only decoder of untrusted JSON in callgate.

``loads_strict`` is RFC 8259 JSON with every ambiguity refused: duplicate keys at any
depth, ``NaN``/``Infinity``, numbers that overflow to infinity, lone surrogates (escaped
or raw), a BOM, invalid or overlong UTF-8, trailing data, empty input. Size, depth,
string length and integer length are bounded by :class:`callgate.Limits` and checked
without recursion, so a 200,000-deep array bomb is a :class:`LimitExceededError`.

The decoding itself is the standard library's C scanner with hooks; the extra checks
are guarded by cheap fast paths (``str.count``, ``in``), so typical small events pay a
few percent over ``json.loads``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any, NoReturn, cast

from ._digest import canonical_bytes
from ._errors import JSONError, LimitExceededError, UsageError
from ._limits import DEFAULT_LIMITS, Limits

__all__ = ["json_copy", "loads_strict"]

# One string literal, as written (unrolled loop: linear, no catastrophic backtracking).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = str.maketrans({"[": "\x01", "{": "\x01", "]": "\x02", "}": "\x02"})
# A backslash escape; `\\` is consumed whole so `\\ud800` is not mistaken for an escape.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")
_INT_RUN = re.compile(r"-?[0-9]+")


def _fail(message: str, pos: int | None = None) -> NoReturn:
    raise JSONError(message, byte_offset=pos)


def _reject_constant(name: str) -> NoReturn:
    _fail(f"non-finite number {name} is not JSON")


def _make_decoder(limits: Limits) -> json.JSONDecoder:
    max_digits = limits.max_json_int_digits

    def parse_int(text: str) -> int:
        digits = len(text) - (text[0] == "-")
        if digits > max_digits:
            raise LimitExceededError(
                "JSON integer has too many digits",
                limit="max_json_int_digits",
                bound=max_digits,
                observed=digits,
            )
        return int(text)

    def parse_float(text: str) -> float:
        if len(text) > max_digits + 32:
            raise LimitExceededError(
                "JSON number literal is too long",
                limit="max_json_int_digits",
                bound=max_digits,
                observed=len(text),
            )
        value = float(text)
        if value in (_INF, -_INF):
            _fail(f"number {text[:40]} overflows to infinity")
        return value

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    _fail(f"duplicate object key {key[:80]!r}")
                seen.add(key)
        return obj

    return json.JSONDecoder(
        object_pairs_hook=pairs_hook,
        parse_float=parse_float,
        parse_int=parse_int,
        parse_constant=_reject_constant,
        strict=True,
    )


_INF = float("inf")
_WS = " \t\n\r"
_Scanner = Callable[[str, int], tuple[Any, int]]
_SCANNERS: dict[Limits, _Scanner] = {}


def _scanner_for(limits: Limits) -> _Scanner:
    """The C scanner of a hooked decoder, cached per ``Limits`` (they are hashable)."""
    scanner = _SCANNERS.get(limits)
    if scanner is None:
        if len(_SCANNERS) > 64:
            _SCANNERS.clear()
        scanner = _SCANNERS[limits] = cast(_Scanner, _make_decoder(limits).scan_once)  # type: ignore[attr-defined]
    return scanner


def _check_depth(text: str, limits: Limits) -> None:
    bound = limits.max_json_depth
    # Fast path: fewer openers than the bound cannot nest deeper than it.
    if text.count("[") + text.count("{") <= bound:
        return
    stripped = _STRING.sub("", text) if '"' in text else text
    steps = "".join(_BRACKET.findall(stripped)).translate(_DEPTH_STEP)
    depth = max(accumulate(1 if c == "\x01" else -1 for c in steps), default=0)
    if depth > bound:
        raise LimitExceededError(
            "JSON nesting is too deep", limit="max_json_depth", bound=bound, observed=depth
        )


def _check_strings(text: str, limits: Limits) -> None:
    bound = limits.max_json_string_chars
    if len(text) <= bound + 2:
        return
    for match in _STRING.finditer(text):
        if match.end() - match.start() - 2 > bound:
            # Written length is an upper bound of the decoded one: decode to be exact.
            try:
                decoded: str = json.loads(match.group())
            except ValueError:
                continue  # malformed; the real decode reports it with its position
            if len(decoded) > bound:
                raise LimitExceededError(
                    "JSON string is too long",
                    limit="max_json_string_chars",
                    bound=bound,
                    observed=len(decoded),
                    byte_offset=match.start(),
                )


def _check_surrogate_escapes(text: str) -> None:
    if _SURROGATE_HINT.search(text) is None:
        return
    pending_high: int | None = None  # end offset of an unpaired high surrogate escape
    for match in _ESCAPE.finditer(text):
        hexdigits = match.group(1)
        unit = int(hexdigits, 16) if hexdigits else -1
        if pending_high is not None:
            if match.start() == pending_high and 0xDC00 <= unit <= 0xDFFF:
                pending_high = None
                continue
            _fail("lone high surrogate escape", pending_high - 6)
        if 0xD800 <= unit <= 0xDBFF:
            pending_high = match.end()
        elif 0xDC00 <= unit <= 0xDFFF:
            _fail("lone low surrogate escape", match.start())
    if pending_high is not None:
        _fail("lone high surrogate escape", pending_high - 6)


def loads_strict(
    data: bytes | bytearray | memoryview | str, *, limits: Limits = DEFAULT_LIMITS
) -> Any:
    """Decode one strict JSON document.

    Returns plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``.

    Raises :class:`JSONError` for anything that is not strict JSON (with ``byte_offset``
    where known: a byte offset for ``bytes`` input, a character offset for ``str``),
    :class:`LimitExceededError` when a bound of ``limits`` is crossed, and
    :class:`UsageError` when ``data`` is neither bytes-like nor ``str``. Stateless: every
    call is independent.
    """
    if isinstance(data, str):
        text = data
        if len(text) > limits.max_json_bytes:
            raise LimitExceededError(
                "JSON document is too large",
                limit="max_json_bytes",
                bound=limits.max_json_bytes,
                observed=len(text),
            )
        if not text.isascii():
            if text[0] == "\ufeff":
                _fail("a byte order mark is not allowed", 0)
            try:
                size = len(text.encode("utf-8"))
            except UnicodeEncodeError as exc:
                _fail("lone surrogate in JSON text", exc.start)
            if size > limits.max_json_bytes:
                raise LimitExceededError(
                    "JSON document is too large",
                    limit="max_json_bytes",
                    bound=limits.max_json_bytes,
                    observed=size,
                )
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > limits.max_json_bytes:
            raise LimitExceededError(
                "JSON document is too large",
                limit="max_json_bytes",
                bound=limits.max_json_bytes,
                observed=len(raw),
            )
        if raw.startswith(b"\xef\xbb\xbf"):
            _fail("a byte order mark is not allowed", 0)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            _fail(f"invalid UTF-8: {exc.reason}", exc.start)
    else:
        raise UsageError(f"loads_strict() takes bytes or str, not {type(data).__name__}")

    if not text or text.isspace():
        _fail("empty JSON document", 0)
    if len(text) > limits.max_json_depth:
        _check_depth(text, limits)
    if len(text) > limits.max_json_string_chars + 2:
        _check_strings(text, limits)
    if "\\u" in text:
        _check_surrogate_escapes(text)
    start = 0 if text[0] not in _WS else len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scanner_for(limits)(text, start)
    except StopIteration as stop:
        _fail_at(data, text, "invalid JSON: Expecting value", stop.value)
    except json.JSONDecodeError as exc:
        _fail_at(data, text, f"invalid JSON: {exc.msg}", exc.pos)
    except RecursionError:
        # Only reachable if the depth pre-check was bypassed; never let it escape bare.
        raise LimitExceededError(
            "JSON nesting is too deep", limit="max_json_depth", bound=limits.max_json_depth
        ) from None
    except (ValueError, OverflowError) as exc:
        _fail(f"invalid JSON number: {exc}")
    if end != len(text) and text[end:].strip(_WS):
        _fail_at(data, text, "invalid JSON: Extra data", end)
    return value


def _fail_at(data: object, text: str, message: str, pos: int) -> NoReturn:
    """Raise with a byte offset for bytes input (the scanner counts characters)."""
    if not isinstance(data, str) and not text.isascii():
        pos = len(text[:pos].encode("utf-8"))
    _fail(message, pos)


def json_copy(value: Any, *, limits: Limits = DEFAULT_LIMITS, what: str = "value") -> Any:
    """A deep copy of ``value`` that also proves it is plain JSON within ``limits``.

    Tuples become lists; anything :func:`callgate.canonical_bytes` refuses, or that
    ``loads_strict`` would refuse on the wire (depth, sizes, lone surrogates), raises
    :class:`UsageError` naming ``what``. Builders copy caller data with it (so a later change
    to the caller's object cannot reach the request); parsers copy SDK objects with it and
    re-raise as their own wire error at the boundary.
    """
    try:
        return loads_strict(canonical_bytes(value), limits=limits)
    except (UsageError, JSONError, LimitExceededError) as exc:
        raise UsageError(f"{what} is not a JSON value: {exc.message}") from None
