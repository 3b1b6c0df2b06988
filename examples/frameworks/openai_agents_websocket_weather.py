"""The OpenAI Agents SDK's tool loop over its Responses WebSocket transport, against the
callgate mock: both model calls travel as ``response.create`` messages on one socket.

Run: ``python examples/frameworks/openai_agents_websocket_weather.py`` (needs
``openai-agents`` and ``callgate[server]``). ``tests/test_frameworks.py`` runs it in
``make test``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents import Agent, OpenAIProvider, RunConfig, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_openai.json")


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


async def ask(openai_base_url: str) -> str:
    set_tracing_disabled(True)  # no trace upload to api.openai.com
    async with AsyncOpenAI(base_url=openai_base_url, api_key="test") as client:
        provider = OpenAIProvider(openai_client=client, use_responses_websocket=True)
        agent = Agent(name="weather", instructions="Use the tool.", tools=[get_weather])
        try:
            result = await Runner.run(
                agent,
                "What is the weather in Paris?",
                run_config=RunConfig(model="gpt-4.1", model_provider=provider),
            )
        finally:
            await provider.aclose()  # closes the model's socket
        return str(result.final_output)


def run(openai_base_url: str) -> str:
    return asyncio.run(ask(openai_base_url))


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.openai_base_url))
        server.assert_script_done()
