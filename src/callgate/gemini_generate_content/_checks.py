"""Room-private typed getters and argument checks (to be swapped for a kernel ``_fields``)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .._errors import SchemaError, UsageError
from .._limits import Limits
from ..contracts import REVISIONS

__all__ = [
    "PROVIDER",
    "check_limits_and_baseline",
    "decode_signature",
    "opt_dict",
    "opt_str",
    "req_str",
]

PROVIDER = "google"
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def check_limits_and_baseline(limits: Any, baseline: Any) -> None:
    """Raise :class:`UsageError` unless ``limits`` is a Limits and ``baseline`` a revision."""
    if not isinstance(limits, Limits):
        raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
    if type(baseline) is not str or baseline not in REVISIONS:
        raise UsageError(f"baseline must be one of {REVISIONS}, got {baseline!r}")


def opt_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and type(value) is not str:
        raise SchemaError(f"{where} '{key}' must be a string")
    return value


def req_str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if type(value) is not str or not value:
        raise SchemaError(f"{where} needs a non-empty string '{key}'")
    return value


def opt_dict(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = obj.get(key)
    if value is not None and type(value) is not dict:
        raise SchemaError(f"{where} '{key}' must be an object")
    return value


def decode_signature(value: Any) -> bytes:
    """The bytes of a base64 ``thoughtSignature`` in either alphabet, padded or not, the
    way the SDK decodes it. Raises :class:`SchemaError` if it is not such a string."""
    if type(value) is not str or not value or not value.isascii():
        raise SchemaError("'thoughtSignature' must be a non-empty base64 string")
    raw = value.encode("ascii").translate(_URLSAFE)
    raw += b"=" * (-len(raw) % 4)
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise SchemaError("'thoughtSignature' is not valid base64") from None
