"""Field checks shared by the Anthropic handlers: small, table-driven, typed errors only."""

from __future__ import annotations

from typing import Any, NoReturn

from .._errors import SchemaError, UnsupportedProviderState
from . import _events as ev

__all__ = [
    "DELTA_FIELDS",
    "SDK_HINT",
    "check_caller",
    "check_delta_field",
    "check_opt_str",
    "need_str",
    "unknown_block",
]

# The message fields a message_delta sets, all from `delta` (SDK 2.14.0
# `types/raw_message_delta_event.py` `Delta`), with the JSON type each must have. A
# message_start's message is checked against the same table.
DELTA_FIELDS: dict[str, type] = {
    "stop_reason": str,
    "stop_sequence": str,
    "stop_details": dict,
    "container": dict,
}
# How SDK objects must be turned into dicts: to_dict() keeps datetimes (container.expires_at).
SDK_HINT = (
    'from an SDK object pass .to_dict(mode="json"); plain .to_dict() keeps datetimes '
    "such as container.expires_at"
)


def need_str(obj: dict[str, Any], key: str, where: str) -> None:
    value = obj.get(key)
    if type(value) is not str or not value:
        raise SchemaError(f"{where}.{key} is missing or not a non-empty string")


def check_opt_str(obj: dict[str, Any], key: str, where: str) -> None:
    value = obj.get(key)
    if value is not None and type(value) is not str:
        raise SchemaError(f"{where}.{key} is not a string")


def check_delta_field(obj: dict[str, Any], key: str, where: str) -> None:
    value: Any = obj.get(key)
    if value is None:
        return
    kind = DELTA_FIELDS[key]
    if type(value) is not kind:
        raise SchemaError(f"{where}.{key} is not a {'string' if kind is str else 'object'}")
    if key == "container":
        container: dict[str, Any] = obj[key]
        need_str(container, "id", f"{where}.container")
        check_opt_str(container, "expires_at", f"{where}.container")


def check_caller(block: dict[str, Any]) -> None:
    """``caller`` is absent or one of the SDK's callers; a code-execution caller names the
    server tool call (``tool_id``) whose running code waits for this call's result."""
    if "caller" not in block:
        return
    caller = block["caller"]
    if type(caller) is not dict or type(caller.get("type")) is not str:
        raise SchemaError("tool_use block: `caller` is not an object with a string `type`")
    needs_tool_id = ev.CALLERS.get(caller["type"])
    if needs_tool_id is None:
        raise UnsupportedProviderState(
            f"tool_use block: unknown caller type {caller['type'][:80]!r}"
        )
    if needs_tool_id:
        need_str(caller, "tool_id", "tool_use block caller")


def unknown_block(btype: str) -> NoReturn:
    reason = ev.KNOWN_UNSUPPORTED_BLOCKS.get(btype)
    if reason is not None:
        raise UnsupportedProviderState(f"content block {btype!r} is not supported ({reason})")
    raise UnsupportedProviderState(f"unknown content block type {btype[:80]!r}")
