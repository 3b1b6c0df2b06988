"""LangChain's ``ChatGoogleGenerativeAI`` (``langchain-google-genai``) against the callgate mock
(Gemini generateContent, a Gemini 3 model): two parallel calls, their results, the answer;
streamed (``--stream``) or not.

Run: ``python examples/frameworks/langchain_google_weather.py [--stream]`` (needs
``langchain-google-genai`` and ``callgate[server]``). Checked by hand (see README: "Use with
agent frameworks").
"""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_google_genai import ChatGoogleGenerativeAI

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_gemini_parallel.json")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def run(gemini_base_url: str, *, stream: bool = False) -> str:
    llm = ChatGoogleGenerativeAI(
        model="gemini-3-flash-preview",
        google_api_key="test",
        base_url=gemini_base_url,
        streaming=stream,
    ).bind_tools([get_weather])
    messages = [HumanMessage("What is the weather in Paris and in Rome?")]
    reply = llm.invoke(messages)
    messages.append(reply)
    messages += [get_weather.invoke(call) for call in reply.tool_calls]  # ToolMessages
    return str(llm.invoke(messages).text)


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.gemini_base_url, stream="--stream" in sys.argv))
        server.assert_script_done()
