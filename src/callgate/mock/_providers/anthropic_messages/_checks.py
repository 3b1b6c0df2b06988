"""Anthropic Messages: the API keeps no state, so the whole replayed history is checked.

Messages are walked in order. For an assistant message: each ``thinking`` block must carry
a signature this session's mock emitted for exactly that thinking text
(``anthropic_thinking_signature``); then the next message is checked: its ``tool_result``
blocks come before any other block (``anthropic_tool_result_first``), each names a
``tool_use`` of this assistant message (``anthropic_tool_result_has_tool_use``), and every
``tool_use`` is answered (``anthropic_tool_use_has_result``). A user message that does not
follow an assistant message may hold no ``tool_result`` at all. Last, with ``thinking``
enabled in the request, the final assistant message of a tool turn whose emitted message
started with thinking must still start with a ``thinking``/``redacted_thinking`` block
(``anthropic_thinking_kept``). ``redacted_thinking`` blocks are passed through unchecked
(the mock never emits them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .._kit import Reply

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["Emitted", "anthropic_400", "check", "emitted_index"]

_PROTOCOL = "anthropic_messages"


@dataclasses.dataclass(slots=True)
class Emitted:
    """The thinking this session's mock emitted, for replayed blocks to be checked."""

    thinking: set[tuple[str, str]] = dataclasses.field(default_factory=set)  # (signature, text)
    # tool_use id -> whether the message that emitted it started with a thinking block
    thinking_first: dict[str, bool] = dataclasses.field(default_factory=dict)


def emitted_index(store: SessionStore) -> Emitted:
    """This session's index (filled by the provider's ``index``)."""
    found: Emitted | None = store.indexes.get(_PROTOCOL)
    if found is None:
        found = store.indexes[_PROTOCOL] = Emitted()
    return found


_THINKING = ("thinking", "redacted_thinking")
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def anthropic_400(message: str) -> Reply:
    """``{"type": "error", "error": {"type": "invalid_request_error", "message"}}``."""
    return Reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                  "message": message}})  # fmt: skip


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _typed(blocks: list[Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(k, b) for k, b in enumerate(blocks) if isinstance(b, dict) and b.get("type") == kind]


def _signature_problem(i: int, blocks: list[Any], store: SessionStore) -> Reply | None:
    for k, block in _typed(blocks, "thinking"):
        if (block.get("signature"), block.get("thinking")) not in emitted_index(store).thinking:
            return anthropic_400(
                f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
            )
    return None


def _results_problem(
    j: int, blocks: list[Any], uses: list[Any], on: Collection[str]
) -> Reply | None:
    """Problems of message ``j``'s ``tool_result`` blocks, given the ``tool_use`` ids before."""
    results = _typed(blocks, "tool_result")
    if not results:
        return None
    if "anthropic_tool_result_first" in on:
        last_result = results[-1][0]
        for k, block in enumerate(blocks[:last_result]):
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                found = block.get("type") if isinstance(block, dict) else type(block).__name__
                return anthropic_400(
                    f"messages.{j}.content.{k}: `tool_result` blocks must come first in the "
                    f"`user` message content, before any other block; found `{found}` before "
                    "them."
                )
    if "anthropic_tool_result_has_tool_use" in on:
        for k, block in results:
            if block.get("tool_use_id") not in uses:
                return anthropic_400(
                    f"messages.{j}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
    return None


def _unanswered(i: int, uses: list[Any], following: list[Any]) -> Reply | None:
    answered = {b.get("tool_use_id") for _, b in _typed(following, "tool_result")}
    missing = [u for u in uses if u not in answered]
    if not missing:
        return None
    return anthropic_400(
        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(str(m) for m in missing)}. Each `tool_use` block must have a "
        "corresponding `tool_result` block in the next message."
    )


def _thinking_enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _dropped_thinking(messages: list[Any], store: SessionStore) -> Reply | None:
    last = max((i for i, m in enumerate(messages) if _role(m) == "assistant"), default=None)
    if last is None:
        return None
    blocks = _blocks(messages[last])
    uses = [b.get("id") for _, b in _typed(blocks, "tool_use")]
    if not any(emitted_index(store).thinking_first.get(str(u)) for u in uses):
        return None
    first = blocks[0] if blocks else None
    found = first.get("type") if isinstance(first, dict) else None
    if found in _THINKING:
        return None
    return anthropic_400(
        f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        f"requirement, disable `thinking`. Please consult our documentation at {_DOCS}"
    )


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The first problem the enabled checks find, as Anthropic's 400; ``None`` if none."""
    raw = body.get("messages")
    messages: list[Any] = raw if isinstance(raw, list) else []
    if "anthropic_thinking_signature" in on or "anthropic_thinking_kept" in on:
        store.index()
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if _role(message) == "user":
            if i == 0 or _role(messages[i - 1]) != "assistant":
                problem = _results_problem(i, blocks, [], on)
                if problem is not None:
                    return problem
            continue
        if _role(message) != "assistant":
            continue
        if "anthropic_thinking_signature" in on:
            problem = _signature_problem(i, blocks, store)
            if problem is not None:
                return problem
        uses = [b.get("id") for _, b in _typed(blocks, "tool_use")]
        following = _blocks(messages[i + 1]) if i + 1 < len(messages) else []
        if i + 1 < len(messages) and _role(messages[i + 1]) == "user":
            problem = _results_problem(i + 1, following, uses, on)
            if problem is not None:
                return problem
        if uses and "anthropic_tool_use_has_result" in on:
            problem = _unanswered(i, uses, following)
            if problem is not None:
                return problem
    if "anthropic_thinking_kept" in on and _thinking_enabled(body):
        return _dropped_thinking(messages, store)
    return None
