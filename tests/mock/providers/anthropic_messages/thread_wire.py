"""What the message-thread tests share: the model, tools and first message, strict
anthropic clients on a mock server, and a thread's create and continue requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from callgate.mock import MockServer

BETA = "message-threads-2026-08-12"
MODEL = "thread-model"
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]
RESULTS = [{"name": "get_weather", "output": "sunny"}]
FIRST = [{"role": "user", "content": "Weather in Paris?"}]

needs_threads = pytest.mark.skipif(
    tuple(int(p) for p in anthropic.__version__.split(".")[:2]) < (2, 14),
    reason="message threads arrived in anthropic 2.14.0",
)


_OPEN: list[anthropic.Anthropic] = []


def client_for(server: MockServer, conversation: str) -> anthropic.Anthropic:
    """A strict client on ``server`` for one conversation (closed by :func:`serve`)."""
    client = anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=0,
        _strict_response_validation=True,
        default_headers={"x-callgate-conversation": conversation},
    )  # fmt: skip
    _OPEN.append(client)
    return client


def serve(script: Any) -> Iterator[MockServer]:
    """A running server for ``script`` (a fixture body); its clients closed after."""
    with MockServer(script) as running:
        yield running
        while _OPEN:
            _OPEN.pop().close()


def create(client: anthropic.Anthropic, **extra: Any) -> Any:
    extra.setdefault("betas", [BETA])
    return client.beta.messages.create(
        model=MODEL, max_tokens=256, system="Be brief.", tools=TOOLS, messages=FIRST,
        thread={"type": "create"}, **extra,
    )  # fmt: skip


def answer(message: Any) -> list[dict[str, Any]]:
    """The user message answering ``message``'s one tool_use."""
    (use,) = [b for b in message.content if b.type == "tool_use"]
    return [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]}]  # fmt: skip


def continue_(client: anthropic.Anthropic, previous: Any, **extra: Any) -> Any:
    extra.setdefault("betas", [BETA])
    extra.setdefault("messages", answer(previous))
    return client.beta.messages.create(
        model=MODEL, max_tokens=256,
        thread={"type": "continue", "previous_message_id": previous.id}, **extra,
    )  # fmt: skip


def details(exc: anthropic.APIStatusError) -> Any:
    assert isinstance(exc.body, dict)
    return exc.body["error"].get("details", {})
