"""Canonical JSON bytes and their SHA-256 digest.

The canonical form, precisely (so another implementation can reproduce it):

- Values are JSON values only: ``dict`` with ``str`` keys, ``list`` or ``tuple`` (both
  arrays), ``str``, ``int``, ``float``, ``bool``, ``None``. Anything else, a non-``str``
  key, a non-finite float, a string holding a lone surrogate, an integer of more than
  4,300 decimal digits, or nesting deeper than ``max_depth`` raises :class:`UsageError`
  (nothing is coerced).
- Object members are sorted by key, comparing keys as sequences of Unicode code points.
- No insignificant whitespace: separators are exactly ``,`` and ``:``.
- Strings are written as UTF-8 with only the escapes JSON requires: ``\\"``, ``\\\\``, the
  short forms ``\\b \\f \\n \\r \\t``, and ``\\u00XX`` (lowercase hex) for the other
  control characters U+0000..U+001F. Everything else, non-ASCII included, is literal.
- ``true``, ``false``, ``null``; integers in decimal without a leading ``+`` or zeros;
  floats in Python's ``repr`` form (the shortest string that round-trips the IEEE-754
  double, e.g. ``1.0``, ``0.1``, ``1e+16``, ``1.5e-07``); ``-0.0`` is written ``-0.0``.

``canonical_digest(obj)`` is the lowercase hex SHA-256 of those bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from ._errors import UsageError

__all__ = ["canonical_bytes", "canonical_digest"]

_ENCODER = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
)
_MAX_DEPTH = 512
# Python's default int-to-str bound, fixed here so the canonical form does not depend on
# the interpreter's setting (sys.set_int_max_str_digits) and never fails with a bare
# ValueError while writing.
_MAX_INT_DIGITS = 4300
_INT_BOUND = 10**_MAX_INT_DIGITS


def _validate(obj: Any, max_depth: int) -> None:
    """Walk ``obj`` without recursion, refusing anything that is not canonical JSON."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth = pop()
        kind = type(value)
        if kind is str:
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise UsageError("string with a lone surrogate cannot be canonical") from None
        elif kind is dict:
            if depth > max_depth:
                raise UsageError(f"value nests deeper than {max_depth}")
            for key, member in value.items():
                if type(key) is not str:
                    raise UsageError(f"object key {key!r} is not a str")
                push((key, depth))
                push((member, depth + 1))
        elif kind is list or kind is tuple:
            if depth > max_depth:
                raise UsageError(f"value nests deeper than {max_depth}")
            for member in value:
                push((member, depth + 1))
        elif kind is float:
            if not math.isfinite(value):
                raise UsageError(f"non-finite number {value!r} cannot be canonical")
        elif kind is int:
            if not -_INT_BOUND < value < _INT_BOUND:
                raise UsageError(
                    f"integer of more than {_MAX_INT_DIGITS} digits cannot be canonical"
                )
        elif kind is bool or value is None:
            pass
        else:
            raise UsageError(f"{kind.__name__} is not a JSON value")


def canonical_bytes(obj: Any, *, max_depth: int = _MAX_DEPTH) -> bytes:
    """The canonical JSON encoding of ``obj`` (see the module docstring).

    Raises :class:`UsageError` if ``obj`` is not a JSON value as described there.
    """
    _validate(obj, max_depth)
    try:
        return _ENCODER.encode(obj).encode("utf-8")
    except ValueError as exc:  # an int past a lower sys.set_int_max_str_digits bound
        raise UsageError(f"value cannot be written canonically: {exc}") from None


def canonical_digest(obj: Any, *, max_depth: int = _MAX_DEPTH) -> str:
    """Lowercase hex SHA-256 of :func:`canonical_bytes` of ``obj``.

    Raises :class:`UsageError` if ``obj`` is not a JSON value.
    """
    return hashlib.sha256(canonical_bytes(obj, max_depth=max_depth)).hexdigest()
