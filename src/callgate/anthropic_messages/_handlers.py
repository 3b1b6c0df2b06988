"""The transition handlers: one ``_on_<x>`` per row of ``_state.TRANSITIONS``.

:class:`Handlers` checks what an event says about the stream (indexes, the message's
identity, usage that only grows, one stop reason) and hands the content to its
:class:`~._assembly.Assembly`. The parser holds one ``Handlers`` and binds the table's
handler names to it; a handler returns nothing (the table names the next state).
"""

from __future__ import annotations

from typing import Any

from .._errors import ProviderError, SchemaError, SequenceError, UnsupportedProviderState
from .._fields import need_str, opt_str
from . import _events as ev
from ._assembly import DELTA_FIELDS, Assembly, check_delta_field

__all__ = ["Handlers", "provider_error"]

# Message fields a message_delta.delta may not carry (usage comes from the event's `usage`).
_PROTECTED = frozenset({"id", "role", "model", "content", "usage"})
_EVENT_KEYS = frozenset({"type", "delta", "usage"})


def provider_error(obj: dict[str, Any], where: str) -> ProviderError:
    """The :class:`ProviderError` for an error object ``{"type": "error", "error": {...}}``:
    the ``error`` event of a stream or the API's error body (``where`` says which). Its
    details are read when they are strings; none of them is required."""
    error = obj.get("error")
    error = error if type(error) is dict else {}
    etype, message = error.get("type"), error.get("message")
    details = error.get("details")
    code = details.get("error_code") if type(details) is dict else None
    etype = etype if type(etype) is str else None
    message = message if type(message) is str else None
    return ProviderError(
        f"{where}: {etype}: {message}",
        error_type=etype,
        error_code=code if type(code) is str else None,
        provider_message=message,
    )


class Handlers:
    """The handlers named in ``TRANSITIONS``, over one :class:`Assembly`. Not public."""

    __slots__ = ("_a",)

    def __init__(self, assembly: Assembly) -> None:
        self._a = assembly

    def _on_ping(self, obj: dict[str, Any]) -> None:
        pass

    def _on_error(self, obj: dict[str, Any]) -> None:
        raise provider_error(obj, "provider error in stream")

    def _on_message_start(self, obj: dict[str, Any]) -> None:
        content, message = self._take_message(obj)
        if content or message["stop_reason"] is not None:  # pragma: no cover - table_key
            raise SequenceError("message_start carries a complete message")

    def _on_complete_message_start(self, obj: dict[str, Any]) -> None:
        """A message_start that carries the finished message (the follow-up responses of a
        programmatic tool-calling loop): accept it only when it is self-consistent."""
        content, message = self._take_message(obj)
        reason = message["stop_reason"]
        if reason is None:
            raise SchemaError("message_start.message holds content blocks but no stop_reason")
        if reason not in ev.STOP_REASONS[self._a.baseline]:
            raise UnsupportedProviderState(
                f"message_start carries a complete message with unknown stop_reason {reason!r:.80}"
            )
        # Each block goes through the same checks as a streamed block without deltas.
        for index, block in enumerate(content):
            self._on_block_start({"index": index, "content_block": block})
            self._on_block_stop({"index": index})

    def _take_message(self, obj: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Check ``message_start.message`` and keep it; its content blocks and the message."""
        m = obj.get("message")
        if type(m) is not dict:
            raise SchemaError("message_start.message is not an object")
        need_str(m, "id", "message", empty=False)  # a thread continues from it
        opt_str(m, "model", "message")
        for key, value in (("type", "message"), ("role", "assistant")):
            if m.get(key, value) != value:
                raise SchemaError(f"message_start.message {key} is {m[key]!r:.40}, not {value!r}")
        content = m.get("content", [])
        if type(content) is not list:
            raise SchemaError("message_start.message.content is not a list")
        for key in ("stop_reason", "stop_sequence", "stop_details", "container"):
            check_delta_field(m, key, "message_start.message")
        message = {k: v for k, v in m.items() if k != "content"}
        message.setdefault("stop_reason", None)
        message.setdefault("stop_sequence", None)
        usage = message.get("usage")
        if usage is not None and type(usage) is not dict:
            self._a.warnings.append("message_start usage is not an object")
        self._a.message = message
        return content, message

    def _on_block_start(self, obj: dict[str, Any]) -> None:
        self._a.open_block_at(obj.get("index"), obj.get("content_block"))

    def _on_block_delta(self, obj: dict[str, Any]) -> None:
        a = self._a
        index = obj.get("index")
        if type(index) is not int or index != a.open_index:
            raise SequenceError(
                f"content_block_delta for index {index!r}; the open block is {a.open_index}"
            )
        delta = obj.get("delta")
        if type(delta) is not dict:
            raise SchemaError("content_block_delta.delta is not an object")
        dtype = delta.get("type")
        handler = a.open_deltas.get(dtype) if type(dtype) is str else None
        if handler is None:
            a.bad_delta(dtype)
        handler(delta)

    def _on_block_stop(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        if type(index) is not int or index != self._a.open_index:
            raise SequenceError(
                f"content_block_stop for index {index!r}; the open block is {self._a.open_index}"
            )
        self._a.close_block()

    def _on_message_delta(self, obj: dict[str, Any]) -> None:
        """Message fields come from ``delta`` only, usage from ``usage`` only; every other
        key (top level, or unknown inside ``delta``) is kept in the turn's telemetry and
        never reaches the message, so it cannot change what the gate decides. Usage is
        telemetry: merged, never checked (what looks wrong in it is a warning)."""
        delta = obj.get("delta")
        if delta is None:
            delta = {}
        elif type(delta) is not dict:
            raise SchemaError("message_delta.delta is not an object")
        message = self._message()
        if not _PROTECTED.isdisjoint(delta):
            raise SchemaError("message_delta may not change the message's identity or content")
        for key in DELTA_FIELDS:
            check_delta_field(delta, key, "message_delta.delta")
        reason = delta.get("stop_reason")
        earlier = message["stop_reason"]
        if reason is not None and earlier is not None and earlier != reason:
            raise SequenceError(f"stop_reason changed from {earlier!r} to {reason!r:.80}")
        # Cumulative values overwrite; a null never erases what an earlier event set.
        unknown: dict[str, Any] = {}
        for key, value in delta.items():
            if value is None or key == "type":
                continue
            if key in DELTA_FIELDS:
                message[key] = value
            else:
                unknown[key] = value
        merge_usage(message, obj.get("usage"), self._a.warnings)
        telemetry = self._a.telemetry
        if unknown:
            telemetry.setdefault("delta", {}).update(unknown)
        for key, value in obj.items():
            if key not in _EVENT_KEYS and value is not None:
                telemetry[key] = value

    def _on_message_stop(self, obj: dict[str, Any]) -> None:
        # Like the SDK, message_stop carries nothing; its other keys are not read.
        if self._message()["stop_reason"] is None:
            raise SequenceError("message_stop before any stop_reason")

    def _message(self) -> dict[str, Any]:
        message = self._a.message
        if message is None:  # pragma: no cover - the table only gets here after message_start
            raise SequenceError("no message_start")
        return message


def merge_usage(message: dict[str, Any], usage: Any, warnings: list[str]) -> None:
    """Merge a ``message_delta``'s cumulative ``usage`` into the message's: each non-null
    value overwrites (a null never erases). Usage is telemetry: it never refuses a turn;
    a usage that is no object, or a count that goes down, is a warning."""
    if usage is None:
        return
    if type(usage) is not dict:
        warnings.append("message_delta usage is not an object")
        return
    current = message.get("usage")
    if type(current) is not dict:
        current = message["usage"] = {}
    for key, value in usage.items():
        if value is None:
            continue
        _went_down(f"usage.{key}", current.get(key), value, warnings)
        before = current.get(key)
        if type(value) is dict and type(before) is dict:  # server_tool_use counters
            for name, count in value.items():
                _went_down(f"usage.{key}.{name}", before.get(name), count, warnings)
        current[key] = value


def _went_down(name: str, before: Any, after: Any, warnings: list[str]) -> None:
    if type(before) is int and type(after) is int and after < before:
        warnings.append(f"{name} went down from {before} to {after}")
