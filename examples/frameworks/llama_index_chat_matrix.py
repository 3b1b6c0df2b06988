"""llama-index ``OpenAI`` (Chat Completions) in a ``FunctionAgent`` through the fault matrix
of ``chat_matrix.py``, streamed (the agent's default, ``streaming=True``) and not.

Run against a running mock (``callgate serve --port 8765``), in a venv with
``llama-index-core`` and ``llama-index-llms-openai``:
``python examples/frameworks/llama_index_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

from chat_matrix import QUESTION, TOOL_DOC, Tool, main
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    def get_weather(city: str) -> str:
        return tool(city)

    weather = FunctionTool.from_defaults(get_weather, name="get_weather", description=TOOL_DOC)
    llm = OpenAI(model="gpt-4.1", api_base=base_url, api_key="test")
    agent = FunctionAgent(tools=[weather], llm=llm, streaming=stream)

    async def run() -> str:
        return str(await agent.run(user_msg=QUESTION))  # run() needs a running loop

    return asyncio.run(run())


if __name__ == "__main__":
    main("llama-index OpenAI + FunctionAgent", f"llama-index-llms-openai "
         f"{version('llama-index-llms-openai')}, llama-index-core {version('llama-index-core')}",
         ask)  # fmt: skip
