"""LiteLLM's ``completion`` (OpenAI Chat shapes, translated to Anthropic Messages) against
the callgate mock: a tool call, its result, the answer.

Run: ``python examples/frameworks/litellm_weather.py`` (needs ``litellm`` and
``callgate[server]``). Checked by hand (see docs/frameworks.md).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
import litellm  # noqa: E402

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_anthropic.json")
TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]},
    },
}]  # fmt: skip


def run(anthropic_base_url: str) -> str:
    options = {"model": "anthropic/claude-sonnet-4-5", "api_base": anthropic_base_url,
               "api_key": "test", "tools": TOOLS}  # fmt: skip
    messages: list[dict] = [{"role": "user", "content": "What is the weather in Paris?"}]
    reply = litellm.completion(messages=messages, **options).choices[0].message
    messages.append(reply.model_dump())
    for call in reply.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
    return str(litellm.completion(messages=messages, **options).choices[0].message.content)


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.anthropic_base_url))
        server.assert_script_done()
