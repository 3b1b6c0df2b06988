"""agno ``Agent`` with ``OpenAIChat`` (Chat Completions) through the fault matrix of
``chat_matrix.py``, streamed (``run(..., stream=True)``) and not.

Run against a running mock (``callgate serve --port 8765``), in a venv with ``agno`` and
``openai``: ``python examples/frameworks/agno_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no telemetry upload
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from chat_matrix import QUESTION, Tool, main


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        return tool(city)

    model = OpenAIChat(id="gpt-4.1", base_url=base_url, api_key="test")
    agent = Agent(model=model, tools=[get_weather], telemetry=False)
    if not stream:
        run = agent.run(QUESTION)
        tool.notes.append(f"status={getattr(run, 'status', None)!r}")
        return run.content
    pieces = []
    for event in agent.run(QUESTION, stream=True):
        kind = type(event).__name__
        if kind in ("RunErrorEvent", "RunCancelledEvent") or "Error" in kind:
            tool.notes.append(f"{kind}: {getattr(event, 'content', None)!r}")
        elif kind == "RunContentEvent" and isinstance(event.content, str):
            pieces.append(event.content)
    return "".join(pieces)


if __name__ == "__main__":
    main("agno Agent + OpenAIChat", f"agno {version('agno')}", ask)
