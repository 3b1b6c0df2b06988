"""One adapter per protocol, one module each: how the loop talks to a room.

Each adapter knows its endpoint and headers, how tools are declared, the first request
body, the event that names the provider turn (R5), how a turn is classified (calls, final
answer or refusal), the continuation builder to call and whether a lost turn can be fetched
again from the provider instead of re-asking the model. What every room's Turn projects
alike (``turn.id``, ``turn.text``) the loop reads from the turn itself. Only the rooms'
public packages are used (looked up through :func:`callgate._protocols.room`).

A new protocol is one module here defining ``ADAPTER`` and one line in ``ADAPTERS``.
"""

from __future__ import annotations

from ..._errors import UsageError
from ..._protocols import room
from . import (
    anthropic_messages,
    gemini_generate_content,
    gemini_interactions,
    openai_chat_completions,
    openai_responses,
)
from ._base import Adapter, Config

__all__ = ["ADAPTERS", "Adapter", "Config", "adapter_for"]

ADAPTERS: dict[str, Adapter] = {
    module.ADAPTER.protocol: module.ADAPTER
    for module in (
        openai_responses,
        anthropic_messages,
        gemini_interactions,
        gemini_generate_content,
        openai_chat_completions,
    )
}


def adapter_for(protocol: str) -> Adapter:
    room(protocol)  # UsageError for a name that is not a room
    try:
        return ADAPTERS[protocol]
    except KeyError:
        raise UsageError(f"the host loop does not drive {protocol!r} yet") from None
