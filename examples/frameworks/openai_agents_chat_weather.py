"""The OpenAI Agents SDK's tool loop against the callgate mock (OpenAI Chat Completions):
``OpenAIChatCompletionsModel``, two parallel calls, streamed or not.

Run: ``python examples/frameworks/openai_agents_chat_weather.py`` (needs ``openai-agents``
and ``callgate[server]``). ``tests/test_frameworks.py`` runs it in ``make test``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_chat_parallel.json")


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def ask(openai_base_url: str, stream: bool) -> str:
    set_tracing_disabled(True)  # no trace upload to api.openai.com
    async with AsyncOpenAI(base_url=openai_base_url, api_key="test") as client:
        agent = Agent(
            name="weather",
            instructions="Use the tool.",
            model=OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=client),
            tools=[get_weather],
        )
        question = "What is the weather in Paris and in Rome?"
        if not stream:
            return str((await Runner.run(agent, question)).final_output)
        running = Runner.run_streamed(agent, question)
        async for _ in running.stream_events():
            pass
        return str(running.final_output)


def run(openai_base_url: str, stream: bool = False) -> str:
    return asyncio.run(ask(openai_base_url, stream))


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.openai_base_url))
        server.assert_script_done()
