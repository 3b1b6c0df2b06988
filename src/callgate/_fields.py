"""Typed field getters for wire objects, and the one ``(limits, baseline)`` argument check.

Every protocol room reads provider objects through these, so a missing field and a field
of the wrong type read the same in every room (``SchemaError``: "<where> lacks required
field 'x'" / "<where> field 'x' has type list"). ``kinds`` are exact types: ``bool`` is not
an ``int`` here, as on the wire.

``need`` is for the fields the gate decides on (release, refuse, bind) and nothing else;
every other field the parser reads goes through ``opt`` (``null`` is absent), and telemetry
through neither (docs/required-fields.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from ._errors import SchemaError, UsageError
from ._limits import Limits

__all__ = [
    "NONE",
    "check_limits_and_baseline",
    "need",
    "need_str",
    "opt",
    "opt_str",
]

NONE: Final = type(None)


def need(obj: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    """``obj[key]`` when its exact type is one of ``kinds``; ``SchemaError`` otherwise."""
    value = obj.get(key)
    if type(value) not in kinds:
        if key not in obj:
            raise SchemaError(f"{where} lacks required field {key!r}")
        raise SchemaError(f"{where} field {key!r} has type {type(value).__name__}")
    return value


def opt(obj: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    """``obj.get(key)``: ``None`` when absent (or null); ``SchemaError`` on another type."""
    value = obj.get(key)
    if value is not None and type(value) not in kinds:
        raise SchemaError(f"{where} field {key!r} has type {type(value).__name__}")
    return value


def need_str(obj: Mapping[str, Any], key: str, where: str, *, empty: bool = True) -> str:
    """A required string field; with ``empty=False`` the empty string is refused too."""
    value: str = need(obj, key, (str,), where)
    if not empty and not value:
        raise SchemaError(f"{where} field {key!r} must be a non-empty string")
    return value


def opt_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    """An optional string field (absent or null gives ``None``)."""
    value: str | None = opt(obj, key, (str,), where)
    return value


def check_limits_and_baseline(limits: Any, baseline: Any, known: Collection[str]) -> None:
    """Raise :class:`UsageError` unless ``limits`` is a Limits and ``baseline`` is one of
    ``known`` (the room's baselines). Every parser, ``parse_response`` and builder that
    takes these two arguments checks them here, with the same words."""
    if not isinstance(limits, Limits):
        raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
    if type(baseline) is not str or baseline not in known:
        raise UsageError(f"baseline must be one of {sorted(known)}, got {baseline!r}")
