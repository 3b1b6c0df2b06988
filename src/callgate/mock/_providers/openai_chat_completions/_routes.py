"""OpenAI Chat Completions in the mock: credentials, error bodies and paths (OpenAI's,
shared with Responses), and what a ``respond`` block may hold on this wire."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._openai_common import auth, auth_azure, error_body, http_error

__all__ = [
    "AZURE_PATH",
    "PATH",
    "PROTOCOL",
    "RESPOND_KEYS",
    "auth",
    "auth_azure",
    "check_respond",
    "error_body",
    "http_error",
]

PROTOCOL: Final = "openai_chat_completions"
PATH: Final = "/openai/v1/chat/completions"
AZURE_PATH: Final = "/azure-openai/openai/v1/chat/completions"
RESPOND_KEYS: Final = frozenset({"refusal"})


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """``refusal`` is text; reasoning and hosted tools have no place on this wire."""
    if "refusal" in respond and not isinstance(respond["refusal"], str):
        return "refusal is the refusal text (a string)"
    for key in ("reasoning", "hosted"):
        if key in respond:
            return f"openai_chat_completions carries no {key} (use openai_responses)"
    return None
