"""LangChain ``ChatOpenAI`` (Chat Completions, default settings) through the fault matrix
of ``chat_matrix.py``: the tool loop LangChain documents for a chat model
(``bind_tools``, then each ``AIMessage.tool_calls`` entry run and answered with a
``ToolMessage``), streamed (``streaming=True``) and not.

Run against a running mock (``callgate serve --port 8765``), in a venv with
``langchain-openai``: ``python examples/frameworks/langchain_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from chat_matrix import QUESTION, TOOL_DOC, Tool, main
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    def get_weather(city: str) -> str:
        return tool(city)

    weather = StructuredTool.from_function(get_weather, description=TOOL_DOC)
    llm = ChatOpenAI(model="gpt-4.1", base_url=base_url, api_key="test", streaming=stream)
    model = llm.bind_tools([weather])
    messages: list[Any] = [HumanMessage(QUESTION)]
    for _ in range(4):
        reply = model.invoke(messages)
        tool.notes.append(
            f"finish_reason={reply.response_metadata.get('finish_reason')!r} "
            f"tool_calls={[c['args'] for c in reply.tool_calls]} "
            f"invalid_tool_calls={[c['args'] for c in reply.invalid_tool_calls]}"
        )
        if not reply.tool_calls:
            return reply.text
        messages.append(reply)
        for call in reply.tool_calls:
            messages.append(ToolMessage(weather.invoke(call["args"]), tool_call_id=call["id"]))
    return None


if __name__ == "__main__":
    main("langchain-openai ChatOpenAI", f"langchain-openai {version('langchain-openai')}, "
         f"langchain-core {version('langchain-core')}", ask)  # fmt: skip
