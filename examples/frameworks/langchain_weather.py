"""LangChain (``langchain-anthropic``) tool calling against the callgate mock (Anthropic
Messages, streamed): the model asks for a tool, the result goes back, the model answers.

Run: ``python examples/frameworks/langchain_weather.py`` (needs ``langchain-anthropic`` and
``callgate[server]``). Checked by hand (see docs/frameworks.md).
"""

from __future__ import annotations

from pathlib import Path

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_anthropic.json")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def run(anthropic_base_url: str) -> str:
    llm = ChatAnthropic(
        model="claude-sonnet-4-5", base_url=anthropic_base_url, api_key="test", streaming=True
    ).bind_tools([get_weather])
    messages = [HumanMessage("What is the weather in Paris?")]
    reply = llm.invoke(messages)
    messages.append(reply)
    messages += [get_weather.invoke(call) for call in reply.tool_calls]  # ToolMessages
    return str(llm.invoke(messages).text)


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.anthropic_base_url))
        server.assert_script_done()
