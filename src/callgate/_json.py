"""Strict JSON: the only decoder of untrusted JSON in callgate.

``loads_strict`` is RFC 8259 JSON with every ambiguity refused: duplicate keys at any
depth, ``NaN``/``Infinity``, numbers that overflow to infinity, lone surrogates (escaped
or raw), a BOM, invalid or overlong UTF-8, trailing data, empty input. Size, depth,
string length and integer length are bounded by :class:`callgate.Limits` and checked
without recursion, so a 200,000-deep array bomb is a :class:`LimitExceededError`.

The decoding itself is the standard library's C scanner with hooks. The extra checks
are guarded by cheap fast paths (``str.count``, ``in``) and, when they run, are a few
linear C passes (``bytes.replace``/``split``/``translate``, one encode of the value), so
their cost is linear in the input for any input, hostile ones included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import accumulate, compress, repeat
from operator import add, lshift, methodcaller, sub
from typing import Any, NoReturn, cast

from ._digest import canonical_bytes
from ._errors import CallgateError, JSONError, LimitExceededError, UsageError
from ._limits import DEFAULT_LIMITS, Limits

__all__ = ["json_copy", "loads_arguments", "loads_strict"]

# The pre-scan reads UTF-8 bytes: `"`, `\\`, brackets and hex digits are single bytes
# there and never part of a multi-byte sequence, so offsets found in them are exact.
_INERT = b"\x7f\x7f"
_PAREN = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_HEX_CLASS = bytes.maketrans(b"0123456789abABcefCEFdD", b"x" * 8 + b"h" * 6 + b"l" * 6 + b"dd")
_COUNT_OPEN = methodcaller("count", b"(")
_HIGH, _LOW = b"\\udh", b"\\udl"  # a surrogate escape as seen through _HEX_CLASS
_LONE_SURROGATE = re.compile(rb"\\udh..(?!\\udl)|\\udl(?<!\\udh..\\udl)", re.DOTALL)
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


def _fail(message: str, pos: int | None = None) -> NoReturn:
    raise JSONError(message, byte_offset=pos)


def _reject_constant(name: str) -> NoReturn:
    _fail(f"non-finite number {name} is not JSON")


def _make_decoder(limits: Limits, *, int_hook: bool = True) -> json.JSONDecoder:
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
        parse_int=parse_int if int_hook else None,  # None: the C scanner's own int()
        parse_constant=_reject_constant,
        strict=True,
    )


_INF = float("inf")
_WS = " \t\n\r"
_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_Scanner = Callable[[str, int], tuple[Any, int]]
# (limits, scanner with every hook, scanner without the integer hook) per Limits object.
_Scanners = tuple[Limits, _Scanner, _Scanner]
_BY_VALUE: dict[Limits, _Scanners] = {}
# The same entries keyed by id(): a call then costs no hash of the 13-field Limits. An
# entry holds its Limits, so that id cannot be reused while the entry lives.
_BY_ID: dict[int, _Scanners] = {}


def _scanners_for(limits: Limits) -> _Scanners:
    """The C scanners of the hooked decoders for ``limits``, built once per value."""
    entry = _BY_ID.get(id(limits))
    if entry is not None and entry[0] is limits:
        return entry
    if len(_BY_ID) > 64 or len(_BY_VALUE) > 64:
        _BY_ID.clear()
        _BY_VALUE.clear()
    entry = _BY_VALUE.get(limits)
    if entry is None:
        hooked = _make_decoder(limits).scan_once  # type: ignore[attr-defined]
        bare_ints = _make_decoder(limits, int_hook=False).scan_once  # type: ignore[attr-defined]
        entry = _BY_VALUE[limits] = (limits, cast(_Scanner, hooked), cast(_Scanner, bare_ints))
    entry = _BY_ID[id(limits)] = (limits, entry[1], entry[2])
    return entry


def _neutral(raw: bytes) -> bytes:
    """``raw`` with every ``\\\\`` and ``\\"`` pair overwritten by two inert bytes.

    ``bytes.replace`` pairs backslashes left to right, as a JSON string does, so in the
    result every ``"`` delimits a string and every ``\\`` starts an escape. Offsets are
    unchanged. Two linear C passes; this is what keeps the whole pre-scan linear.
    """
    return raw.replace(b"\\\\", _INERT).replace(b'\\"', _INERT)


def _max_depth(outside: bytes) -> int:
    """Deepest nesting in ``outside`` (the text between strings): the highest running
    count of openers minus closers. A depth of 0 reads as 1.

    One C pass deletes every adjacent opener-closer pair; that lowers a depth of 1 or
    more by exactly one (the closer appended lets a final opener pair too). The rest is
    cut at its valleys ``)(`` into mountains ``(^a )^b`` and the highest peak is summed
    with C iterators, so the cost is per mountain left, never per bracket in Python.
    """
    steps = outside.translate(_PAREN, _NOT_BRACKET) + b")"
    mountains = steps.replace(b"()", b"").split(b")(")
    ups: list[int] = list(map(_COUNT_OPEN, mountains))
    # Depth before mountain i; a valley's ")" and "(" are cut away, so they cancel.
    starts = accumulate(map(sub, map(lshift, ups, repeat(1)), map(len, mountains)), initial=0)
    peaks: Iterator[int] = map(add, starts, ups)
    return 1 + max(0, max(peaks, default=0))


def _long_strings(raw: bytes, parts: list[bytes], bound: int) -> tuple[int, int] | None:
    """(offset, decoded length) of the first string literal longer than ``bound``.

    ``parts`` is the neutral text split at its quotes, so the odd parts are the written
    contents of the strings (the last one unterminated if the quotes are odd). Only a
    content written longer than ``bound`` can decode longer; those few are decoded.
    """
    lengths = list(map(len, parts))
    if max(lengths[1::2], default=0) <= bound:
        return None
    before = list(accumulate(lengths))
    # An unterminated last string is left to the real decode, which reports it.
    last = len(parts) - 1 if len(parts) % 2 else len(parts) - 2
    for k in compress(range(1, last + 1, 2), map(bound.__lt__, lengths[1::2])):
        start = before[k - 1] + k - 1  # the opening quote
        try:
            decoded: str = json.loads(raw[start : start + lengths[k] + 2])
        except ValueError:
            continue  # malformed; the real decode reports it with its position
        if len(decoded) > bound:
            return start, len(decoded)
    return None


def _quote_free_block(neutral: bytes, bound: int) -> bool:
    """False if no string of ``neutral`` can be written longer than ``bound``.

    Such a string holds a quote-free run of ``bound + 1`` bytes, which covers one of the
    aligned blocks of ``(bound + 2) // 2`` bytes; with the default bounds that is at most
    four C ``find`` calls, each ending at the first quote, instead of a split into parts.
    """
    block = (bound + 2) // 2
    if len(neutral) > 64 * block:
        return True  # small bound: the split is the cheaper test
    return any(neutral.find(b'"', at, at + block) < 0 for at in range(0, len(neutral), block))


def _check_surrogates(value: Any, raw: bytes, from_str: bool) -> None:
    """Refuse a decoded value that holds a surrogate code point.

    Only a lone surrogate escape can leave one (raw surrogates fail UTF-8 first), so one
    C-speed encode of the whole value finds it. Only then is the first lone escape looked
    up, in one regex pass over the escapes as seen through ``_HEX_CLASS``.
    """
    try:
        _ENCODE(value).encode("utf-8")
    except UnicodeEncodeError:
        view = _neutral(raw).translate(_HEX_CLASS).replace(b"\\udd", _LOW)
        match = _LONE_SURROGATE.search(view)
        if match is None:  # pragma: no cover - an escape the decoder read otherwise
            _fail("lone surrogate escape")
        kind = "high" if match[0].startswith(_HIGH) else "low"
        _fail(f"lone {kind} surrogate escape", _offset(raw, match.start(), from_str))


def _prescan(text: str, raw: bytes | None, limits: Limits, from_str: bool) -> None:
    """Nesting depth and string length, before the C decoder runs.

    Each check runs only when a cheap test on ``text`` says it could fail. Then the text
    is read once left to right as :func:`_neutral` leaves it, split at its quotes: a few
    linear C passes over the UTF-8 bytes whatever the input (no regex that can restart).
    """
    depth_bound, string_bound = limits.max_json_depth, limits.max_json_string_chars
    deep = len(text) > depth_bound and text.count("[") + text.count("{") > depth_bound
    long = len(text) > string_bound + 2
    if not (deep or long):
        return
    if raw is None:
        raw = text.encode("utf-8")
    neutral = _neutral(raw)
    long = long and _quote_free_block(neutral, string_bound)
    if not (deep or long):
        return
    parts = neutral.split(b'"')
    if deep:
        depth = _max_depth(b"".join(parts[::2]))
        if depth > depth_bound:
            raise LimitExceededError(
                "JSON nesting is too deep",
                limit="max_json_depth",
                bound=depth_bound,
                observed=depth,
            )
    if long and (found := _long_strings(raw, parts, string_bound)) is not None:
        raise LimitExceededError(
            "JSON string is too long",
            limit="max_json_string_chars",
            bound=string_bound,
            observed=found[1],
            byte_offset=_offset(raw, found[0], from_str),
        )


def _offset(raw: bytes, pos: int, from_str: bool) -> int:
    """A byte offset of the pre-scan, as a character offset for ``str`` input."""
    return len(raw[:pos].decode("utf-8")) if from_str else pos


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
    raw: bytes | None = None
    from_str = isinstance(data, str)
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
                raw = text.encode("utf-8")
            except UnicodeEncodeError as exc:
                _fail("lone surrogate in JSON text", exc.start)
            if (size := len(raw)) > limits.max_json_bytes:
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
    size, depth_bound = len(text), limits.max_json_depth
    # _prescan's own cheap test, inlined: most documents skip the call altogether.
    if (
        size > depth_bound and text.count("[") + text.count("{") > depth_bound
    ) or size > limits.max_json_string_chars + 2:
        _prescan(text, raw, limits, from_str)
    start = 0 if text[0] not in _WS else len(text) - len(text.lstrip(_WS))
    entry = _BY_ID.get(id(limits))
    if entry is None or entry[0] is not limits:
        entry = _scanners_for(limits)
    # An integer literal is no longer than the text: in a text of at most
    # max_json_int_digits characters the digit bound cannot be crossed, so the C
    # scanner's own int() (the same value) replaces one Python hook call per integer.
    scanner = entry[2] if size <= limits.max_json_int_digits else entry[1]
    try:
        value, end = scanner(text, start)
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
    if "\\u" in text and _SURROGATE_HINT.search(text) is not None:
        _check_surrogates(value, text.encode("utf-8") if raw is None else raw, from_str)
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


def loads_arguments(text: Any, where: str, *, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A call's ``arguments`` string decoded strictly into a JSON object.

    Raises the :func:`loads_strict` error with ``arguments of <where>:`` in front, or
    :class:`JSONError` if the document is not an object. The rooms whose calls carry their
    arguments as JSON text (OpenAI Responses and Chat Completions) use it.
    """
    try:
        arguments = loads_strict(text, limits=limits)
    except CallgateError as exc:
        exc.message = f"arguments of {where}: {exc.message}"
        exc.args = (exc.message,)
        raise
    if type(arguments) is not dict:
        raise JSONError(
            f"arguments of {where} are a JSON {type(arguments).__name__}, not an object"
        )
    return arguments
