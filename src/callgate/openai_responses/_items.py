"""Output items: shape checks, the terminal comparison and the release of function calls.

Used by the stream parser and by :func:`parse_response` alike, so a streamed turn and a
non-streamed body pass exactly the same gate.
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    CallgateError,
    JSONError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
)
from .._json import loads_strict
from .._limits import Limits
from ._state import SUPPORTED_ITEM_TYPES
from ._turn import FunctionCall

__all__ = ["check_item", "release_calls", "same_item"]

_NONE = type(None)


def _need(item: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    value = item.get(key)
    if type(value) not in kinds:
        if key not in item:
            raise SchemaError(f"{where} lacks required field {key!r}")
        raise SchemaError(f"{where} field {key!r} has type {type(value).__name__}")
    return value


def check_item(item: dict[str, Any], where: str) -> str:
    """Check one output item's type and required fields; return its type.

    Raises :class:`UnsupportedProviderState` for item types or call metadata callgate does
    not implement (unknown types, MCP, programs, custom/shell/computer tools, a
    programmatic caller, a namespaced or async function) and :class:`SchemaError` for a
    missing or mistyped required field.
    """
    kind = item.get("type")
    if type(kind) is not str:
        raise SchemaError(f"{where} has no string 'type'")
    if kind not in SUPPORTED_ITEM_TYPES:
        raise UnsupportedProviderState(f"{where} has unsupported item type {kind[:80]!r}")
    if kind == "function_call":
        for key in ("arguments", "call_id", "name"):
            _need(item, key, (str,), where)
        if "id" in item:
            _need(item, "id", (str, _NONE), where)
        caller = item.get("caller")
        # Only a direct call is executed by the host; a program's call belongs to a
        # server-side program whose semantics callgate does not implement.
        if caller is not None and (type(caller) is not dict or caller.get("type") != "direct"):
            raise UnsupportedProviderState(f"{where} has a non-direct caller {caller!r:.120}")
        if item.get("namespace") is not None:
            raise UnsupportedProviderState(f"{where} calls a namespaced tool")
        # Identity, not ==: 0 == False, so a membership test would pass "async": 0.
        flag = item.get("async")
        if flag is not None and flag is not False:
            raise UnsupportedProviderState(f"{where} is an asynchronous function call")
    else:
        _need(item, "id", (str,), where)
        if kind == "message":
            _need(item, "content", (list,), where)
            _need(item, "role", (str,), where)
        elif kind == "reasoning":
            _need(item, "summary", (list,), where)
    return kind


def same_item(done: dict[str, Any], final: dict[str, Any]) -> bool:
    """Whether the terminal Response's item equals the streamed ``output_item.done`` item.

    Two differences are allowed because the API produces them (the SDK's own tool runner
    allows the same): reasoning ``encrypted_content`` may be re-encrypted between the
    events (both non-empty strings), and a ``function_call`` may gain its optional ``id``.
    """
    if done == final:
        return True
    kind = done.get("type")
    if kind != final.get("type"):
        return False
    if kind == "reasoning":
        before, after = done.get("encrypted_content"), final.get("encrypted_content")
        if type(before) is str and before and type(after) is str and after:
            return {**done, "encrypted_content": after} == final
    elif kind == "function_call" and done.get("id") is None and type(final.get("id")) is str:
        return {**done, "id": final["id"]} == final
    return False


def release_calls(items: tuple[dict[str, Any], ...], limits: Limits) -> tuple[FunctionCall, ...]:
    """Turn the function-call items of a completed response into executable calls.

    Raises :class:`SequenceError` for a call that is not ``completed`` or a duplicate
    ``call_id``; :class:`JSONError` / :class:`LimitExceededError` /
    :class:`SchemaError` (naming the call) when arguments are not a strict JSON object.
    """
    calls: list[FunctionCall] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.get("type") != "function_call":
            continue
        call_id, name = item["call_id"], item["name"]
        where = f"function call {name!r} (call_id={call_id!r}, output_index={index})"
        if item.get("status") not in (None, "completed"):
            raise SequenceError(f"{where} has status {item.get('status')!r}")
        if call_id in seen:
            raise SequenceError(f"{where} repeats a call_id")
        seen.add(call_id)
        try:
            arguments = loads_strict(item["arguments"], limits=limits)
        except CallgateError as exc:
            exc.message = f"arguments of {where}: {exc.message}"
            exc.args = (exc.message,)
            raise
        if type(arguments) is not dict:
            raise JSONError(
                f"arguments of {where} are a JSON {type(arguments).__name__}, not an object"
            )
        caller = item.get("caller")
        calls.append(
            FunctionCall(
                call_id=call_id,
                name=name,
                arguments=arguments,
                item_id=item.get("id"),
                output_index=index,
                item=item,
                caller=caller if type(caller) is dict else None,
            )
        )
    return tuple(calls)
