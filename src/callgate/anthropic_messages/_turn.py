"""The parsed turn, its call projections, the execution gate and the digest.

The gate (invariant 4 of the design): a ``tool_use`` block is released in ``Turn.calls`` only
when its input parsed as a strict JSON object, the message's final ``stop_reason`` is
``tool_use`` and the stream reached ``message_stop``. Every other client ``tool_use`` of a
complete turn goes to ``Turn.recovery_calls`` (a callgate concept, not a provider field) with
a reason, so the continuation builder can answer it with an ``is_error`` result and the
conversation stays valid. ``server_tool_use`` blocks are the provider's own calls and never
appear in either. A ``tool_use`` made by code in the code-execution container (programmatic
tool calling, a ``caller`` of type ``code_execution_*``) is released like any other and
keeps its ``caller``; a caller the SDK types do not define fails the parse instead.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from .._digest import canonical_digest
from .._errors import CallgateError, SchemaError
from . import _events as ev
from ._checks import SDK_HINT

__all__ = [
    "REASON_INVALID_JSON",
    "REASON_LIMIT",
    "REASON_MAX_TOKENS",
    "REASON_NON_OBJECT",
    "REASON_NOT_RELEASED",
    "RecoveryCall",
    "ToolUse",
    "Turn",
    "build_turn",
    "turn_snapshot",
]

REASON_INVALID_JSON = "invalid_json"  # not strict JSON: syntax, incomplete, duplicate key, ...
REASON_LIMIT = "limit_exceeded"  # strict JSON over a Limits bound (depth, string, digits)
REASON_NON_OBJECT = "non_object"  # strict JSON but not an object
REASON_MAX_TOKENS = "max_tokens"  # parsed fine, but the turn stopped at max_tokens
REASON_NOT_RELEASED = "not_released"  # any other non-tool_use stop reason


@dataclasses.dataclass(frozen=True, slots=True)
class ToolUse:
    """An executable client call: a ``tool_use`` block released by the gate.

    ``call_id`` is the block's ``id`` (the ``tool_use_id`` a result must carry), ``index``
    the block's position in ``Turn.content``, ``block`` the raw block (same object as
    ``Turn.content[index]``; ``arguments`` is its ``input``). ``caller`` is the block's
    ``caller`` (``None`` when absent): ``{"type": "direct"}`` or, for programmatic tool
    calling, ``{"type": "code_execution_20250825" | "code_execution_20260120", "tool_id"}``
    (code running in the turn's container waits for this result; see ``programmatic``).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int
    block: dict[str, Any]
    caller: dict[str, Any] | None = None

    @property
    def programmatic(self) -> bool:
        """Whether code in the code-execution container made this call (not the model)."""
        return self.caller is not None and self.caller.get("type") != ev.CALLER_DIRECT


@dataclasses.dataclass(frozen=True, slots=True)
class RecoveryCall:
    """A client ``tool_use`` that must not execute but still needs an ``is_error`` result.

    ``partial_input`` is the raw accumulated ``partial_json`` text (``""`` when none was
    streamed); ``reason`` is one of the ``REASON_*`` strings and ``detail`` says more.
    """

    call_id: str
    name: str
    index: int
    partial_input: str
    reason: str
    detail: str
    block: dict[str, Any]
    caller: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One parsed assistant Message.

    ``content`` holds the raw blocks in order (thinking, signatures and redacted data exactly
    as received; unknown extra fields kept). ``message`` is the Message's other top-level
    fields (``id``, ``type``, ``role``, ``model``, ``stop_reason``, ``stop_sequence``,
    ``stop_details``, ``container``, ``usage``, extras); ``usage`` is the same dict as
    ``message["usage"]``. ``telemetry`` holds what ``message_delta`` events carried beside the
    message fields (top-level keys other than ``type``/``delta``/``usage``, and unknown
    ``delta`` keys under ``"delta"``; last non-null value wins): it is kept for inspection and
    never merged into ``message``, so it cannot change what the gate decides.
    ``complete`` is true only for a turn that reached ``message_stop`` (partial turns are
    attached to errors as ``err.turn`` and always have ``calls == ()``). ``digest`` is the
    canonical digest of :func:`turn_snapshot`; builders recompute it to detect mutation.
    """

    message_id: str
    model: str
    stop_reason: str | None
    stop_sequence: str | None
    content: tuple[dict[str, Any], ...]
    calls: tuple[ToolUse, ...]
    recovery_calls: tuple[RecoveryCall, ...]
    usage: dict[str, Any]
    message: dict[str, Any]
    telemetry: dict[str, Any]
    complete: bool
    baseline: str
    digest: str

    @property
    def send_back_unchanged(self) -> bool:
        """True for ``pause_turn``: resend the assistant content unchanged, run no tools."""
        return self.complete and self.stop_reason == "pause_turn"

    @property
    def known_stop_reason(self) -> bool:
        """Whether ``stop_reason`` is one the turn's baseline knows (unknown still parses)."""
        reason = self.stop_reason
        return type(reason) is str and reason in ev.STOP_REASONS[self.baseline]

    @property
    def container_id(self) -> str | None:
        """The ``container.id`` the message reported (code execution, programmatic tool
        calling), which the next request must send as ``container`` to reuse it."""
        container = self.message.get("container")
        return container["id"] if type(container) is dict else None

    def to_message(self) -> dict[str, Any]:
        """The Message as a new dict (like a non-streaming response body)."""
        message = dict(self.message)
        message["content"] = list(self.content)
        return cast(dict[str, Any], _json_copy(message))


def _json_copy(value: Any) -> Any:
    # Values in a turn are JSON by construction; a structural copy is enough.
    if type(value) is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_json_copy(v) for v in value]
    return value


def turn_snapshot(turn: Turn) -> dict[str, Any]:
    """The canonical snapshot the digest covers: everything a builder copies or trusts."""
    return {
        "baseline": turn.baseline,
        "complete": turn.complete,
        "message": turn.message,
        "telemetry": turn.telemetry,
        "message_id": turn.message_id,
        "model": turn.model,
        "stop_reason": turn.stop_reason,
        "stop_sequence": turn.stop_sequence,
        "usage": turn.usage,
        "content": list(turn.content),
        "calls": [[c.call_id, c.name, c.arguments, c.index, c.block, c.caller] for c in turn.calls],
        "recovery_calls": [
            [r.call_id, r.name, r.index, r.partial_input, r.reason, r.detail, r.block, r.caller]
            for r in turn.recovery_calls
        ],
    }


# index -> (partial_input, failure reason or None, detail)
ToolInfo = dict[int, tuple[str, str | None, str]]


def build_turn(
    message: dict[str, Any],
    content: list[dict[str, Any]],
    tool_info: ToolInfo,
    telemetry: dict[str, Any],
    *,
    complete: bool,
    baseline: str,
) -> Turn:
    """Apply the gate and freeze the turn. Raises :class:`SchemaError` if the turn holds a
    value that is not JSON (only possible through ``feed_event``)."""
    calls: list[ToolUse] = []
    recovery: list[RecoveryCall] = []
    stop_reason = message.get("stop_reason")
    if complete:
        for index, block in enumerate(content):
            if block.get("type") != ev.CLIENT_TOOL_BLOCK:
                continue
            partial, failure, detail = tool_info.get(index, ("", None, ""))
            caller = block.get("caller")
            if failure is None and stop_reason == "tool_use":
                calls.append(
                    ToolUse(block["id"], block["name"], block["input"], index, block, caller)
                )
                continue
            if failure is None:
                if stop_reason == "max_tokens":
                    failure, detail = REASON_MAX_TOKENS, "the turn stopped at max_tokens"
                else:
                    failure = REASON_NOT_RELEASED
                    detail = f"stop_reason {stop_reason!r} releases no call"
            recovery.append(
                RecoveryCall(
                    block["id"], block["name"], index, partial, failure, detail, block, caller
                )
            )
    usage = message["usage"]
    turn = Turn(
        message_id=message["id"],
        model=message["model"],
        stop_reason=stop_reason,
        stop_sequence=message.get("stop_sequence"),
        content=tuple(content),
        calls=tuple(calls),
        recovery_calls=tuple(recovery),
        usage=usage,
        message=message,
        telemetry=telemetry,
        complete=complete,
        baseline=baseline,
        digest="",
    )
    try:
        digest = canonical_digest(turn_snapshot(turn))
    except CallgateError as exc:
        raise SchemaError(
            f"turn holds a value that is not JSON: {exc.message}; {SDK_HINT}"
        ) from None
    return dataclasses.replace(turn, digest=digest)
