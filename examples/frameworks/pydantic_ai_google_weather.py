"""pydantic-ai's ``GoogleModel`` agent loop against the callgate mock (Gemini generateContent,
a Gemini 3 model): two parallel calls, their results, the answer; streamed or not.

The mock signs the first call as a Gemini 3 model does, so the replayed history carries a
real thought signature (pydantic-ai would otherwise attach Google's placeholder).

Run: ``python examples/frameworks/pydantic_ai_google_weather.py`` (needs
``pydantic-ai-slim`` with ``google-genai`` and ``callgate[server]``). ``tests/test_frameworks.py``
runs it in ``make test``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

from google import genai
from pydantic_ai import Agent
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_gemini_parallel.json")
MODEL = "gemini-3-flash-preview"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def _drain(_: Any, events: AsyncIterable[Any]) -> None:
    async for _event in events:  # streaming: each model request is a streamed one
        pass


async def ask(gemini_base_url: str, *, stream: bool) -> str:
    client = genai.Client(api_key="test", http_options={"base_url": gemini_base_url})
    model = GoogleModel(MODEL, provider=GoogleProvider(client=client))
    agent = Agent(model, tools=[get_weather])
    prompt = "What is the weather in Paris and in Rome?"
    result = await agent.run(prompt, event_stream_handler=_drain if stream else None)
    return result.output


def run(gemini_base_url: str, *, stream: bool = False) -> str:
    return asyncio.run(ask(gemini_base_url, stream=stream))


if __name__ == "__main__":
    for streamed in (False, True):
        with MockServer(load_script(SCRIPT)) as server:
            print(run(server.gemini_base_url, stream=streamed))
            server.assert_script_done()
