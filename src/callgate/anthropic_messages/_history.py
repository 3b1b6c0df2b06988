"""The caller's history for an Anthropic Messages continuation, checked against the
conversation rules the API enforces.

Roles alternate (``_RULES``, a ``(previous role, role) -> checks`` table walked by
:class:`_History`), ``system`` messages only where the model is declared to take them
(:class:`SystemMessageCapability`), every client ``tool_use`` answered exactly by the next
user message, consecutive assistant messages only after a paused server-tool loop
(``pause_turn``). :class:`UsageError` for a message that is not of the documented shape,
:class:`~callgate.ContinuationError` for a history that breaks a rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .._errors import ContinuationError, UsageError
from . import _events as ev

__all__ = ["Blocks", "SystemMessageCapability", "blocks_of", "check_history"]

_ROLES = frozenset({"user", "assistant", "system"})
_SERVER_BLOCKS = ev.SERVER_TOOL_RESULT_BLOCKS | {"server_tool_use"}
Blocks = list[dict[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class SystemMessageCapability:
    """The caller's explicit statement that ``model`` accepts ``role: "system"`` messages
    inside ``messages`` (documented for some models only). Raises :class:`UsageError` for
    an empty model name."""

    model: str

    def __post_init__(self) -> None:
        if type(self.model) is not str or not self.model:
            raise UsageError("SystemMessageCapability.model must be a non-empty str")


def blocks_of(message: dict[str, Any], where: str) -> Blocks:
    content = message.get("content")
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is not list or any(
        type(b) is not dict or type(b.get("type")) is not str for b in content
    ):
        raise UsageError(f"{where}: content must be a string or a list of typed blocks")
    return content


def _paused(blocks: Blocks) -> bool:
    """Whether an assistant message ends inside a server-tool loop (how pause_turn ends)."""
    return bool(blocks) and blocks[-1]["type"] in _SERVER_BLOCKS


class _History:
    """The walk over the caller's history; each method is one check a rule may name."""

    __slots__ = ("capability", "model", "pending", "prev", "prev_blocks", "uses")

    def __init__(self, model: str, capability: SystemMessageCapability | None) -> None:
        self.model, self.capability = model, capability
        self.uses: Blocks = []  # every client tool_use of the history
        self.pending: list[str] = []  # tool_use ids of the last assistant message, unanswered
        self.prev: str | None = None
        self.prev_blocks: Blocks = []

    def refuse_start(self, blocks: Blocks, where: str) -> None:
        raise ContinuationError("history must start with a user message")

    def refuse_user(self, blocks: Blocks, where: str) -> None:
        raise ContinuationError(f"{where}: a user message cannot follow a {self.prev} message")

    def answers(self, blocks: Blocks, where: str) -> None:
        """tool_result blocks come first and answer the pending tool_use ids exactly."""
        answered = [b.get("tool_use_id") for b in blocks if b["type"] == "tool_result"]
        leading = [b["type"] == "tool_result" for b in blocks]
        if leading != sorted(leading, reverse=True):
            raise ContinuationError(f"{where}: tool_result blocks must come first")
        if sorted(answered, key=repr) != sorted(self.pending, key=repr):
            raise ContinuationError(
                f"{where}: tool_result ids {answered!r} do not answer the tool_use ids "
                f"{self.pending!r} of the previous assistant message exactly"
            )
        self.pending = []

    def no_pending(self, blocks: Blocks, where: str) -> None:
        if self.pending:
            raise ContinuationError(
                f"{where}: an assistant message cannot follow a {self.prev} message "
                "with unanswered tool_use"
            )

    def after_pause(self, blocks: Blocks, where: str) -> None:
        # pause_turn: the API merges consecutive assistant messages.
        if not _paused(self.prev_blocks):
            raise ContinuationError(
                f"{where}: an assistant message can follow another only after a "
                "paused server-tool loop"
            )

    def calls(self, blocks: Blocks, where: str) -> None:
        """The assistant message's client tool_use blocks become the pending ones."""
        self.pending = []
        for block in blocks:
            if block["type"] == ev.CLIENT_TOOL_BLOCK:
                if type(block.get("id")) is not str or type(block.get("name")) is not str:
                    raise UsageError(f"{where}: tool_use without id/name")
                self.pending.append(block["id"])
                self.uses.append(block)

    def system_allowed(self, blocks: Blocks, where: str) -> None:
        if self.capability is None or self.capability.model != self.model:
            raise ContinuationError(
                f"{where}: a system message needs SystemMessageCapability for {self.model!r}"
            )

    def after_server_result(self, blocks: Blocks, where: str) -> None:
        prev = self.prev_blocks
        if not prev or prev[-1]["type"] not in ev.SERVER_TOOL_RESULT_BLOCKS:
            raise ContinuationError(
                f"{where}: a system message must follow a user turn or an assistant turn "
                "that ends in a server tool result"
            )

    def text_only(self, blocks: Blocks, where: str) -> None:
        if any(b["type"] != "text" for b in blocks):
            raise UsageError(f"{where}: system content must be text")


_H = _History
# (previous role, role) -> the checks, in order; None is the start of the history.
_RULES: dict[tuple[str | None, str], tuple[Callable[[_History, Blocks, str], None], ...]] = {
    (None, "user"): (_H.answers,),
    (None, "assistant"): (_H.refuse_start,),
    (None, "system"): (_H.refuse_start,),
    ("user", "user"): (_H.refuse_user,),
    ("user", "assistant"): (_H.calls,),
    ("user", "system"): (_H.system_allowed, _H.text_only),
    ("assistant", "user"): (_H.answers,),
    ("assistant", "assistant"): (_H.no_pending, _H.after_pause, _H.calls),
    ("assistant", "system"): (_H.system_allowed, _H.after_server_result, _H.text_only),
    ("system", "user"): (_H.refuse_user,),
    ("system", "assistant"): (_H.no_pending, _H.calls),
    ("system", "system"): (_H.system_allowed, _H.text_only),
}


def check_history(
    history: list[Any], model: str, capability: SystemMessageCapability | None
) -> Blocks:
    """Validate roles, alternation, system placement and tool_use answers; return the
    history's client tool_use blocks."""
    if not history:
        raise ContinuationError("history must start with a user message; it is empty")
    walk = _History(model, capability)
    for position, message in enumerate(history):
        where = f"history[{position}]"
        if type(message) is not dict or message.get("role") not in _ROLES:
            raise UsageError(f"{where}: not a message with role user/assistant/system")
        blocks = blocks_of(message, where)
        for check in _RULES[walk.prev, message["role"]]:
            check(walk, blocks, where)
        walk.prev, walk.prev_blocks = message["role"], blocks
    if walk.prev == "assistant" and not _paused(walk.prev_blocks):
        raise ContinuationError(
            "history must end with a user or system message, or a paused server-tool loop"
        )
    if walk.pending:
        raise ContinuationError("history ends with unanswered tool_use blocks")
    return walk.uses
