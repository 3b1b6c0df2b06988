"""OpenAI Chat Completions in the mock: the native 400s of a broken tool history.

The texts and ``param`` shapes are OpenAI's (``docs/contracts/openai-chat-completions.md``
§5): a ``role: "tool"`` message that answers no call of the assistant message before it
(``openai_chat_tool_result_has_call``), and an assistant ``tool_calls`` message not
followed by an answer to every call (``openai_chat_call_has_result``). Both are
``{"error": {..., "type": "invalid_request_error", "param": "messages.[N].role",
"code": null}}``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Final

from .._kit import Reply, list_of
from .._openai_common import openai_error

if TYPE_CHECKING:
    from ..._store_state import SessionStore

__all__ = ["CALL_HAS_RESULT", "RESULT_HAS_CALL", "check"]

RESULT_HAS_CALL: Final = "openai_chat_tool_result_has_call"
CALL_HAS_RESULT: Final = "openai_chat_call_has_result"

_NO_CALL: Final = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)
_UNANSWERED: Final = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    messages = list_of(body.get("messages"))
    n = 0
    while n < len(messages):
        message = messages[n]
        role = _role(message)
        if role == "tool":  # a tool message no assistant tool_calls message precedes
            if RESULT_HAS_CALL in on:
                return openai_error(400, _NO_CALL, param=f"messages.[{n}].role")
            n += 1
            continue
        calls = list_of(message.get("tool_calls")) if role == "assistant" else []
        asked = [c.get("id") for c in calls if isinstance(c, dict)]
        answered: set[Any] = set()
        k = n + 1
        while k < len(messages) and _role(messages[k]) == "tool":
            call_id = messages[k].get("tool_call_id")
            if call_id not in asked and RESULT_HAS_CALL in on:
                return openai_error(400, _NO_CALL, param=f"messages.[{k}].role")
            answered.add(call_id)
            k += 1
        missing = [str(c) for c in asked if c not in answered]
        if missing and CALL_HAS_RESULT in on:
            return openai_error(400, _UNANSWERED + ", ".join(missing), param=f"messages.[{n}].role")
        n = k
    return None
