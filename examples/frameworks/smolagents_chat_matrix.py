"""smolagents ``ToolCallingAgent`` with ``OpenAIServerModel`` (Chat Completions) through the
fault matrix of ``chat_matrix.py``, streamed (``stream_outputs=True``) and not. The agent
ends a run with its own ``final_answer`` tool, so the closing turns call it.

Run against a running mock (``callgate serve --port 8765``), in a venv with
``smolagents[openai]``:
``python examples/frameworks/smolagents_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from chat_matrix import QUESTION, Tool, main, turn
from smolagents import OpenAIServerModel, ToolCallingAgent
from smolagents import tool as smol_tool


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    @smol_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        return tool(city)

    model = OpenAIServerModel(model_id="gpt-4.1", api_base=base_url, api_key="test")
    agent = ToolCallingAgent(tools=[get_weather], model=model, max_steps=3,
                             stream_outputs=stream, verbosity_level=0)  # fmt: skip
    return agent.run(QUESTION)


def final_answer(text: str, expect: Any) -> dict[str, Any]:
    """smolagents ends on its ``final_answer`` tool: the closing turn calls it."""
    call = {"name": "final_answer", "arguments": {"answer": text}}
    return turn({"calls": [call]}, expect)


if __name__ == "__main__":
    main("smolagents ToolCallingAgent + OpenAIServerModel", f"smolagents {version('smolagents')}",
         ask, final=final_answer,
         loop_expect={"text_contains": "sunny in Rome"})  # fmt: skip
