"""What agents do under faults: each light framework's tool loop through the mock's faults,
judged by the mock's verdicts (docs/verdicts.md). Run it to print the table of
docs/frameworks.md ("What agents do under faults")::

    .venv/bin/python examples/frameworks/under_faults.py

Every run is one agent asking for the weather in Paris with one ``get_weather`` tool,
streamed. The mock answers with order-free fixtures: the first request without a tool
result gets the call turn with the fault; any later one without a result gets the call
again, whole (new call ids); a request carrying a result gets the answer. A row says how
the run ended, how often the tool ran, and the verdicts the mock gave.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
from collections.abc import Awaitable, Callable
from typing import Any

from callgate.mock import MockServer, Script

QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris."
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
FAULTS: dict[str, dict[str, Any]] = {
    "truncated arguments": {"type": "truncate", "call": 0, "keep": 5},
    "cut after the call": {"type": "disconnect", "after_call": 0},
    "cut before the terminal": {"type": "disconnect", "before_terminal": True},
    "in-stream error": {"type": "error_event", "before_terminal": True},
    "429 Retry-After 1 s": {"type": "http_error", "status": 429, "retry_after": 1},
    "500": {"type": "http_error", "status": 500},
}


def script(protocol: str, fault: dict[str, Any]) -> Script:
    """The fixtures of one run (see the module docstring)."""
    ask = {"calls": [WEATHER], "chunking": {"fixed": 4}}
    return Script.from_dict({
        "fixtures": [
            {"protocol": protocol, "match": {"has_tool_results": True},
             "respond": {"text": ANSWER}},
            {"protocol": protocol, "match": {"has_tool_results": False}, "times": 1,
             "respond": {**ask, "fault": fault}},
        ],
        "fallback": {"protocol": protocol, "respond": ask},
    })  # fmt: skip


class Ran:
    """How often the tool ran."""

    def __init__(self) -> None:
        self.count = 0

    def get_weather(self, city: str) -> str:
        """The weather in a city."""
        self.count += 1
        return "sunny"


# -- the frameworks: each runs the loop against ``url`` with ``tool``, returns the answer ---


async def openai_responses_stream(url: str, ran: Ran) -> str:
    """openai ``client.responses.stream`` (the SDK's stream helper) in a hand-written loop:
    run the calls of ``get_final_response()``, send the results back."""
    from openai import AsyncOpenAI

    tools = [{"type": "function", "name": "get_weather",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip
    async with AsyncOpenAI(base_url=url, api_key="k") as client:
        items: list[Any] = [{"role": "user", "content": QUESTION}]
        for _ in range(4):
            async with client.responses.stream(model="m", input=items, tools=tools) as stream:
                final = await stream.get_final_response()
            calls = [i for i in final.output if i.type == "function_call"]
            if not calls:
                return final.output_text
            items += [c.model_dump(exclude_none=True) for c in calls]
            items += [{"type": "function_call_output", "call_id": c.call_id,
                       "output": ran.get_weather(**json.loads(c.arguments))} for c in calls]  # fmt: skip
    raise RuntimeError("no answer")


async def openai_chat_stream(url: str, ran: Ran) -> str:
    """openai ``client.chat.completions.stream`` (the SDK's stream helper), hand-written loop."""
    from openai import AsyncOpenAI

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]  # fmt: skip
    async with AsyncOpenAI(base_url=url, api_key="k") as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        for _ in range(4):
            async with client.chat.completions.stream(
                model="m", messages=messages, tools=tools
            ) as stream:
                final = await stream.get_final_completion()
            message = final.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls]})  # fmt: skip
            for c in message.tool_calls:
                output = ran.get_weather(**json.loads(c.function.arguments))
                messages.append({"role": "tool", "tool_call_id": c.id, "content": output})
    raise RuntimeError("no answer")


async def anthropic_tool_runner(url: str, ran: Ran) -> str:
    """anthropic ``beta.messages.tool_runner`` (streamed), with a ``beta_async_tool``."""
    from anthropic import AsyncAnthropic, beta_async_tool

    @beta_async_tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return ran.get_weather(city)

    async with AsyncAnthropic(base_url=url, api_key="k") as client:
        runner = client.beta.messages.tool_runner(
            model="claude-haiku-4-5", max_tokens=256, tools=[get_weather], stream=True,
            messages=[{"role": "user", "content": QUESTION}],
        )  # fmt: skip
        text = ""
        async for stream in runner:
            message = await stream.get_final_message()
            text = "".join(b.text for b in message.content if b.type == "text")
        return text


async def pydantic_ai_responses(url: str, ran: Ran) -> str:
    """pydantic-ai ``Agent.run`` over ``OpenAIResponsesModel``, streamed (an event handler)."""
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def events(ctx: Any, stream: Any) -> None:
        async for _ in stream:
            pass

    async with AsyncOpenAI(base_url=url, api_key="k") as client:
        model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
        result = await Agent(model, tools=[ran.get_weather]).run(
            QUESTION, event_stream_handler=events
        )
    return str(result.output)


async def openai_agents_streamed(url: str, ran: Ran) -> str:
    """OpenAI Agents SDK ``Runner.run_streamed`` over ``OpenAIResponsesModel``."""
    from agents import (
        Agent,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    tool = function_tool(ran.get_weather)
    async with AsyncOpenAI(base_url=url, api_key="k") as client:
        agent = Agent(name="weather", instructions="Use the tool.", tools=[tool],
                      model=OpenAIResponsesModel(model="gpt-4.1", openai_client=client))  # fmt: skip
        result = Runner.run_streamed(agent, QUESTION)
        async for _ in result.stream_events():
            pass
    return str(result.final_output)


Runner_ = Callable[[str, Ran], Awaitable[str]]
# name -> (protocol, base URL attribute, package whose version is reported, runner)
FRAMEWORKS: dict[str, tuple[str, str, str, Runner_]] = {
    "openai responses.stream": ("openai_responses", "openai_base_url", "openai",
                                openai_responses_stream),
    "openai chat.completions.stream": ("openai_chat_completions", "openai_base_url", "openai",
                                       openai_chat_stream),
    "anthropic tool_runner": ("anthropic_messages", "anthropic_base_url", "anthropic",
                              anthropic_tool_runner),
    "pydantic-ai (Responses)": ("openai_responses", "openai_base_url", "pydantic-ai-slim",
                                pydantic_ai_responses),
    "openai-agents (Responses)": ("openai_responses", "openai_base_url", "openai-agents",
                                  openai_agents_streamed),
}  # fmt: skip


def run(framework: str, fault: str) -> dict[str, Any]:
    """One run: how it ended, how often the tool ran, the verdict ids."""
    protocol, base, _, runner = FRAMEWORKS[framework]
    ran = Ran()
    with MockServer(script(protocol, FAULTS[fault])) as server:
        try:
            text = asyncio.run(runner(getattr(server, base), ran))
            ended = "answered" if text == ANSWER else f"returned {text[:30]!r}, no exception"
        except Exception as exc:  # noqa: BLE001 - what the framework raised is the finding
            ended = f"raised {type(exc).__name__}"
        verdicts = [v["id"] for v in server.verdicts()]
        requests = len(server.journal.requests(protocol=protocol))
    return {"ended": ended, "tool_ran": ran.count, "requests": requests, "verdicts": verdicts}


def version(framework: str) -> str:
    return importlib.metadata.version(FRAMEWORKS[framework][2])


def table(frameworks: list[str], faults: list[str]) -> str:
    lines = ["| framework (version) | fault | ended | tool ran | requests | verdicts |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for framework in frameworks:
        for fault in faults:
            row = run(framework, fault)
            verdicts = ", ".join(f"`{v}`" for v in row["verdicts"]) or "none"
            lines.append(
                f"| {framework} ({version(framework)}) | {fault} | {row['ended']} | "
                f"{row['tool_ran']} | {row['requests']} | {verdicts} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(list(FRAMEWORKS), list(FAULTS)))
