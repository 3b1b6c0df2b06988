"""LiteLLM's ``completion(model="gemini/...")`` (OpenAI Chat shapes, translated to Gemini
generateContent) against the callgate mock, a Gemini 3 model: two parallel calls, their
results, the answer; streamed (``--stream``) or not.

Run: ``python examples/frameworks/litellm_google_weather.py [--stream]`` (needs ``litellm``
and ``callgate[server]``). Checked by hand (see README: "Use with agent frameworks").
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
import litellm  # noqa: E402

from callgate.mock import MockServer, load_script

SCRIPT = Path(__file__).with_name("weather_gemini_parallel.json")
TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]},
    },
}]  # fmt: skip


def _complete(messages: list[Any], stream: bool, **options: Any) -> Any:
    if not stream:
        return litellm.completion(messages=messages, **options).choices[0].message
    chunks = list(litellm.completion(messages=messages, stream=True, **options))
    return litellm.stream_chunk_builder(chunks, messages=messages).choices[0].message


def run(gemini_base_url: str, *, stream: bool = False) -> str:
    # LiteLLM appends /models/{model}:{method} to api_base: give it the version segment.
    options = {"model": "gemini/gemini-3-flash-preview", "api_key": "test", "tools": TOOLS,
               "api_base": f"{gemini_base_url}/v1beta"}  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris and in Rome?"}]
    reply = _complete(messages, stream, **options)
    messages.append(reply.model_dump())
    for call in reply.tool_calls:
        city = json.loads(call.function.arguments)["city"]
        messages.append({"role": "tool", "tool_call_id": call.id, "content": f"sunny in {city}"})
    return str(_complete(messages, stream, **options).content)


if __name__ == "__main__":
    with MockServer(load_script(SCRIPT)) as server:
        print(run(server.gemini_base_url, stream="--stream" in sys.argv))
        server.assert_script_done()
