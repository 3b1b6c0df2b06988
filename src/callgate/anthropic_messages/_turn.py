"""The parsed turn, its call projections, the execution gate and the digest.

The gate (:func:`release_calls`, invariant 4 of the design): a ``tool_use`` block is
released in ``Turn.calls`` only when its input parsed as a strict JSON object, the message's
final ``stop_reason`` is ``tool_use`` and the stream reached ``message_stop``. Every other
client ``tool_use`` of a complete turn goes to ``Turn.recovery_calls`` (a callgate concept,
not a provider field) with a reason, so the continuation builder can answer it with an
``is_error`` result and the conversation stays valid. ``server_tool_use`` blocks are the
provider's own calls and never appear in either. A ``tool_use`` made by code in the
code-execution container (programmatic tool calling, a ``caller`` of type
``code_execution_*``) is released like any other and keeps its ``caller``; a caller the SDK
types do not define fails the parse instead.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from .._digest import canonical_digest
from .._errors import CallgateError, JSONError
from .._hosted import Citation, HostedCall
from . import _events as ev
from ._hosted import project

__all__ = [
    "REASON_INVALID_JSON",
    "REASON_LIMIT",
    "REASON_MAX_TOKENS",
    "REASON_NON_OBJECT",
    "REASON_NOT_RELEASED",
    "RECOVERY_ERROR_TEXT",
    "SDK_HINT",
    "RecoveryCall",
    "ToolUse",
    "Turn",
    "make_turn",
    "release_calls",
    "turn_digest",
]

REASON_INVALID_JSON = "invalid_json"  # not strict JSON: syntax, incomplete, duplicate key, ...
REASON_LIMIT = "limit_exceeded"  # strict JSON over a Limits bound (depth, string, digits)
REASON_NON_OBJECT = "non_object"  # strict JSON but not an object
REASON_MAX_TOKENS = "max_tokens"  # parsed fine, but the turn stopped at max_tokens
REASON_NOT_RELEASED = "not_released"  # any other non-tool_use stop reason
# What the builder answers a recovery call with, by reason: stable texts, so a model (and a
# test) can rely on them across releases.
_PREFIX = "callgate did not execute this tool call: "
RECOVERY_ERROR_TEXT: dict[str, str] = {
    REASON_INVALID_JSON: _PREFIX + "its input was not complete, valid JSON.",
    REASON_LIMIT: _PREFIX + "its input exceeded a size or nesting limit.",
    REASON_NON_OBJECT: _PREFIX + "its input was not a JSON object.",
    REASON_MAX_TOKENS: _PREFIX + "the response stopped at max_tokens, so the call may be cut off.",
    REASON_NOT_RELEASED: _PREFIX + "the response did not stop for tool use.",
}
# The fix for a dict made by plain to_dict(), which keeps datetimes (container.expires_at).
SDK_HINT = (
    'pass the SDK object itself, or its .to_dict(mode="json"); plain .to_dict() keeps '
    "datetimes such as container.expires_at"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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
    canonical digest of the turn (:func:`turn_digest`); builders recompute it to detect
    mutation. ``text`` is the concatenated text of the ``text`` blocks (``""`` when none).

    ``hosted_calls``/``citations``: the hosted-tool projection (:class:`callgate.HostedCall`,
    :class:`callgate.Citation`), derived from the raw output; never executable.
    ``warnings``: what the parser found inconsistent in telemetry it does not gate on
    (citations, usage that went down, hosted result pairing), one short string each; not
    digested. ``model`` is ``None`` when the message named none; ``usage`` is ``{}`` when
    it carried none.
    """

    message_id: str
    model: str | None
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
    hosted_calls: tuple[HostedCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """The turn's id in every room's name: here ``message_id``."""
        return self.message_id

    @property
    def text(self) -> str:
        """The turn's output text: its ``text`` blocks joined, ``""`` when it has none."""
        return "".join(b.get("text") or "" for b in self.content if b.get("type") == ev.TEXT)

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
        # Values in a turn are JSON by construction (and may exceed the default Limits):
        # a structural copy, not a validated json_copy.
        return copy.deepcopy(message)


def _snapshot(turn: Turn) -> dict[str, Any]:
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


def turn_digest(turn: Turn) -> str:
    """The canonical digest of ``turn`` (without its ``digest`` field). Raises
    :class:`~callgate.UsageError` when the turn holds a value that is not JSON."""
    return canonical_digest(_snapshot(turn))


# index -> (partial_input, failure reason or None, detail)
ToolInfo = dict[int, tuple[str, str | None, str]]


def release_calls(
    content: list[dict[str, Any]], tool_info: ToolInfo, stop_reason: Any
) -> tuple[tuple[ToolUse, ...], tuple[RecoveryCall, ...]]:
    """The gate for a complete turn: which ``tool_use`` blocks are released (``calls``)
    and which must be answered with an error instead (``recovery_calls``)."""
    calls: list[ToolUse] = []
    recovery: list[RecoveryCall] = []
    for index, block in enumerate(content):
        if block.get("type") != ev.CLIENT_TOOL_BLOCK:
            continue
        partial, failure, detail = tool_info.get(index, ("", None, ""))
        caller = block.get("caller")
        if failure is None and stop_reason == "tool_use":
            calls.append(
                ToolUse(
                    call_id=block["id"],
                    name=block["name"],
                    arguments=block["input"],
                    index=index,
                    block=block,
                    caller=caller,
                )
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
                call_id=block["id"],
                name=block["name"],
                index=index,
                partial_input=partial,
                reason=failure,
                detail=detail,
                block=block,
                caller=caller,
            )
        )
    return tuple(calls), tuple(recovery)


def make_turn(
    message: dict[str, Any],
    content: list[dict[str, Any]],
    tool_info: ToolInfo,
    telemetry: dict[str, Any],
    *,
    complete: bool,
    baseline: str,
    warnings: tuple[str, ...] = (),
) -> Turn:
    """Apply the gate (complete turns only: a partial turn releases nothing) and freeze the
    turn. Raises :class:`JSONError` if the turn holds a value that is not JSON (only
    possible through ``feed_event``)."""
    stop_reason = message.get("stop_reason")
    calls, recovery = release_calls(content, tool_info, stop_reason) if complete else ((), ())
    hosted_calls, citations = project(content)
    usage = message.get("usage")
    turn = Turn(
        message_id=message["id"],
        model=message.get("model"),
        stop_reason=stop_reason,
        stop_sequence=message.get("stop_sequence"),
        content=tuple(content),
        calls=calls,
        recovery_calls=recovery,
        usage=usage if type(usage) is dict else {},
        message=message,
        telemetry=telemetry,
        complete=complete,
        baseline=baseline,
        digest="",
        hosted_calls=hosted_calls,
        citations=citations,
        warnings=warnings,
    )
    try:
        digest = turn_digest(turn)
    except CallgateError as exc:
        raise JSONError(f"turn holds a value that is not JSON: {exc.message}; {SDK_HINT}") from None
    return dataclasses.replace(turn, digest=digest)
