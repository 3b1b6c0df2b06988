"""CrewAI (an ``Agent`` with ``LLM("openai/...")``, Chat Completions) through the fault
matrix of ``chat_matrix.py``: one agent, one task, one tool, streamed (``LLM(stream=True)``)
and not.

Run against a running mock (``callgate serve --port 8765``), in a venv with ``crewai``:
``python examples/frameworks/crewai_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

for _name in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_TRACKING"):
    os.environ.setdefault(_name, "true")  # no telemetry upload
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
from chat_matrix import QUESTION, Tool, main  # noqa: E402
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool as crew_tool  # noqa: E402


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    @crew_tool("get_weather")
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return tool(city)

    llm = LLM(model="openai/gpt-4.1", base_url=base_url, api_key="test", stream=stream)
    agent = Agent(role="forecaster", goal="Answer weather questions.", backstory="A forecaster.",
                  tools=[get_weather], llm=llm, max_iter=3, verbose=False)  # fmt: skip
    task = Task(description=QUESTION, expected_output="The weather.", agent=agent)
    return str(Crew(agents=[agent], tasks=[task], verbose=False).kickoff())


if __name__ == "__main__":
    main("CrewAI Agent + LLM(openai/)", f"crewai {version('crewai')}", ask)
