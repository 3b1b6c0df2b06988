"""Conversation history checks for the Anthropic continuation builder.

The Messages API keeps no state, so the builder replays the caller's history; these checks
make sure it is a conversation the API accepts: roles alternate, a ``system`` message only
where the model is declared to accept one, every client ``tool_use`` answered exactly by
the next user message, and consecutive assistant messages only after a paused server-tool
loop (``pause_turn``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._errors import ContinuationError, UsageError
from . import _events as ev

__all__ = ["SystemMessageCapability", "blocks_of", "check_history", "paused"]

_ROLES = frozenset({"user", "assistant", "system"})
_SERVER_BLOCKS = ev.SERVER_TOOL_RESULT_BLOCKS | {"server_tool_use"}


@dataclasses.dataclass(frozen=True, slots=True)
class SystemMessageCapability:
    """The caller's explicit statement that ``model`` accepts ``role: "system"`` messages
    inside ``messages`` (documented for some models only). Raises :class:`UsageError` for
    an empty model name."""

    model: str

    def __post_init__(self) -> None:
        if type(self.model) is not str or not self.model:
            raise UsageError("SystemMessageCapability.model must be a non-empty str")


def blocks_of(message: dict[str, Any], where: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is not list or any(
        type(b) is not dict or type(b.get("type")) is not str for b in content
    ):
        raise ContinuationError(f"{where}: content must be a string or a list of typed blocks")
    return content


def paused(blocks: list[dict[str, Any]]) -> bool:
    """Whether an assistant message ends inside a server-tool loop (how pause_turn ends)."""
    return bool(blocks) and blocks[-1]["type"] in _SERVER_BLOCKS


def check_history(
    history: list[Any], model: str, capability: SystemMessageCapability | None
) -> list[dict[str, Any]]:
    """Validate roles, alternation, system placement and tool_use answers; return the
    history's client tool_use blocks."""
    if not history:
        raise ContinuationError("history must start with a user message; it is empty")
    uses: list[dict[str, Any]] = []
    pending: list[str] = []  # tool_use ids of the last assistant message, unanswered
    prev: str | None = None
    prev_blocks: list[dict[str, Any]] = []
    for position, message in enumerate(history):
        where = f"history[{position}]"
        if type(message) is not dict or message.get("role") not in _ROLES:
            raise ContinuationError(f"{where}: not a message with role user/assistant/system")
        role = message["role"]
        blocks = blocks_of(message, where)
        if position == 0 and role != "user":
            raise ContinuationError("history must start with a user message")
        if role == "system":
            if capability is None or capability.model != model:
                raise ContinuationError(
                    f"{where}: a system message needs SystemMessageCapability for {model!r}"
                )
            after_server_result = (
                prev == "assistant"
                and bool(prev_blocks)
                and prev_blocks[-1]["type"] in ev.SERVER_TOOL_RESULT_BLOCKS
            )
            if prev not in ("user", "system") and not after_server_result:
                raise ContinuationError(
                    f"{where}: a system message must follow a user turn or an assistant turn "
                    "that ends in a server tool result"
                )
            if any(b["type"] != "text" for b in blocks):
                raise ContinuationError(f"{where}: system content must be text")
        elif role == "user":
            if prev in ("user", "system"):
                raise ContinuationError(f"{where}: a user message cannot follow a {prev} message")
            answered = [b.get("tool_use_id") for b in blocks if b["type"] == "tool_result"]
            leading = [b["type"] == "tool_result" for b in blocks]
            if leading != sorted(leading, reverse=True):
                raise ContinuationError(f"{where}: tool_result blocks must come first")
            if sorted(answered, key=repr) != sorted(pending, key=repr):
                raise ContinuationError(
                    f"{where}: tool_result ids {answered!r} do not answer the tool_use ids "
                    f"{pending!r} of the previous assistant message exactly"
                )
            pending = []
        else:
            # An assistant message may follow a paused server-tool loop (pause_turn: the
            # API merges consecutive assistant messages), never unanswered client calls.
            if prev == "user" or (prev in ("system", "assistant") and not pending):
                if prev == "assistant" and not paused(prev_blocks):
                    raise ContinuationError(
                        f"{where}: an assistant message can follow another only after a "
                        "paused server-tool loop"
                    )
            else:
                raise ContinuationError(
                    f"{where}: an assistant message cannot follow a {prev} message"
                    + (" with unanswered tool_use" if pending else "")
                )
            pending = []
            for block in blocks:
                if block["type"] == ev.CLIENT_TOOL_BLOCK:
                    if type(block.get("id")) is not str or type(block.get("name")) is not str:
                        raise ContinuationError(f"{where}: tool_use without id/name")
                    pending.append(block["id"])
                    uses.append(block)
        prev, prev_blocks = role, blocks
    if prev == "assistant" and not paused(prev_blocks):
        raise ContinuationError(
            "history must end with a user or system message, or a paused server-tool loop"
        )
    if pending:
        raise ContinuationError("history ends with unanswered tool_use blocks")
    return uses
