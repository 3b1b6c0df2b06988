"""The benchmark turn of ``server_throughput.py`` on each protocol both servers speak.

One streamed turn with two function calls, as each client family sends it: the request
body, its credentials, the mock's path and aimock's path for it, and how to read the two
calls back. callgate's own parser reads the mock's stream (strict); aimock's stream is
read strictly too where callgate accepts it, else loosely off its call events (its
OpenAI stream has no sequence numbers and reuses no item ids; its generateContent stream
ends with ``finishReason: "FUNCTION_CALL"``, which no contract revision knows).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

MODEL = "bench-model"
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    {"name": "get_time", "arguments": {"tz": "Europe/Paris"}},
]
QUESTION = "What are the weather and the time in Paris?"
Calls = list[tuple[str, Any]]


@dataclasses.dataclass(frozen=True)
class Wire:
    """One protocol's benchmark request and how its answer is checked."""

    protocol: str
    mock_path: str
    aimock_path: str
    request: dict[str, Any]
    headers: dict[str, str]
    loose: Callable[[bytes], Calls]  # the calls of an aimock stream callgate refuses

    def body(self) -> str:
        return json.dumps(self.request, separators=(",", ":"))


def _events(content: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:])
        for block in content.split(b"\n\n")
        for line in block.split(b"\n")
        if line.startswith(b"data: {")
    ]


def _openai_loose(content: bytes) -> Calls:
    return [
        (e["item"]["name"], json.loads(e["item"]["arguments"]))
        for e in _events(content)
        if e.get("type") == "response.output_item.done"
    ]


def _gemini_loose(content: bytes) -> Calls:
    return [
        (part["functionCall"]["name"], part["functionCall"]["args"])
        for e in _events(content)
        for candidate in e.get("candidates", ())
        for part in candidate["content"]["parts"]
        if "functionCall" in part
    ]


def _chat_loose(content: bytes) -> Calls:
    calls: dict[int, list[str]] = {}
    for e in _events(content):  # (``data: [DONE]`` is no JSON object: skipped below)
        for choice in e.get("choices", ()):
            for delta in choice.get("delta", {}).get("tool_calls") or ():
                entry = calls.setdefault(delta.get("index", len(calls)), ["", ""])
                function = delta.get("function") or {}
                entry[0] = function.get("name") or entry[0]
                entry[1] += function.get("arguments") or ""
    return [(name, json.loads(args)) for name, args in calls.values()]


def _strict_only(content: bytes) -> Calls:
    raise RuntimeError("this stream should have parsed strictly")


WIRES: dict[str, Wire] = {
    "openai_responses": Wire(
        "openai_responses", "/openai/v1/responses", "/v1/responses",
        {"model": MODEL, "stream": True, "input": QUESTION,
         "tools": [{"type": "function", "name": c["name"], "parameters": {"type": "object"}}
                   for c in CALLS]},
        {"authorization": "Bearer bench"}, _openai_loose,
    ),
    "anthropic_messages": Wire(
        "anthropic_messages", "/anthropic/v1/messages", "/v1/messages",
        {"model": MODEL, "max_tokens": 1024, "stream": True,
         "messages": [{"role": "user", "content": QUESTION}],
         "tools": [{"name": c["name"], "input_schema": {"type": "object"}} for c in CALLS]},
        {"x-api-key": "bench", "anthropic-version": "2023-06-01"}, _strict_only,
    ),
    "gemini_generate_content": Wire(
        "gemini_generate_content",
        f"/gemini/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
         "tools": [{"functionDeclarations": [{"name": c["name"]} for c in CALLS]}]},
        {"x-goog-api-key": "bench"}, _gemini_loose,
    ),
    "openai_chat_completions": Wire(
        "openai_chat_completions", "/openai/v1/chat/completions", "/v1/chat/completions",
        {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": QUESTION}],
         "tools": [{"type": "function", "function": {"name": c["name"],
                                                      "parameters": {"type": "object"}}}
                   for c in CALLS]},
        {"authorization": "Bearer bench"}, _chat_loose,
    ),
    "gemini_interactions": Wire(
        "gemini_interactions", "/gemini/v1beta/interactions", "/v1beta/interactions",
        {"model": MODEL, "stream": True, "input": QUESTION,
         "tools": [{"type": "function", "name": c["name"]} for c in CALLS]},
        {"x-goog-api-key": "bench"}, _strict_only,
    ),
}  # fmt: skip


def calls_of(wire: Wire, content: bytes, strict: bool) -> Calls:
    """The (name, arguments) of the stream's calls; ``strict``: callgate's parser only."""
    from callgate import CallgateError
    from callgate._protocols import room

    try:
        turn = room(wire.protocol).parse_stream(content)
    except CallgateError:
        if strict:
            raise
        return wire.loose(content)
    return [(c.name, c.arguments) for c in turn.calls]
