"""pydantic-ai's agent loop against the callgate mock (OpenAI Chat Completions):
``OpenAIChatModel``, two parallel calls, streamed or not.

Run: ``python examples/frameworks/pydantic_ai_chat_weather.py`` (needs
``pydantic-ai-slim[openai]`` and ``callgate[server]``). ``tests/test_frameworks.py`` runs it
in ``make test``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_chat_parallel.json")


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def ask(openai_base_url: str, stream: bool) -> str:
    async with AsyncOpenAI(base_url=openai_base_url, api_key="test") as client:
        model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, tools=[get_weather])
        question = "What is the weather in Paris and in Rome?"
        if not stream:
            return (await agent.run(question)).output
        async with agent.run_stream(question) as running:
            return await running.get_output()


def run(openai_base_url: str, stream: bool = False) -> str:
    return asyncio.run(ask(openai_base_url, stream))


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.openai_base_url))
        server.assert_script_done()
