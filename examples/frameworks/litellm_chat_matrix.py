"""LiteLLM ``completion("openai/...")`` (Chat Completions) through the fault matrix of
``chat_matrix.py``: the tool loop of LiteLLM's function-calling docs (each
``message.tool_calls`` entry's ``json.loads(arguments)`` run and answered with a
``role: "tool"`` message), streamed (chunks joined by ``litellm.stream_chunk_builder``)
and not.

Run against a running mock (``callgate serve --port 8765``), in a venv with ``litellm``:
``python examples/frameworks/litellm_chat_matrix.py http://127.0.0.1:8765``.
Checked by hand (docs/frameworks.md); not part of the test suite.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
import litellm
from chat_matrix import OPENAI_TOOLS, QUESTION, Tool, main


def ask(base_url: str, stream: bool, tool: Tool) -> Any:
    options = {"model": "openai/gpt-4.1", "api_base": base_url, "api_key": "test",
               "tools": OPENAI_TOOLS}  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    for _ in range(4):
        if stream:
            chunks = list(litellm.completion(messages=messages, stream=True, **options))
            response = litellm.stream_chunk_builder(chunks, messages=messages)
        else:
            response = litellm.completion(messages=messages, **options)
        choice = response.choices[0]
        calls = choice.message.tool_calls or []
        tool.notes.append(
            f"finish_reason={choice.finish_reason!r} "
            f"arguments={[c.function.arguments for c in calls]}"
        )
        if not calls:
            return choice.message.content
        messages.append(choice.message.model_dump())
        for call in calls:
            result = tool(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return None


if __name__ == "__main__":
    main("LiteLLM completion(openai/)", f"litellm {version('litellm')}", ask)
