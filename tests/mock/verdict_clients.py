"""Scripted clients for the verdict tests: plain httpx requests on each protocol's wire,
correct or committing one fault on purpose (a result for a call the gate withheld, a
retry too soon, a continuation that drops its controls)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from callgate.mock import TEST_ID_HEADER, MockServer, Script

from .conftest import AUTH, path_of

PROTOCOLS = (
    "openai_responses",
    "openai_chat_completions",
    "anthropic_messages",
    "gemini_interactions",
    "gemini_generate_content",
)
STATEFUL = ("openai_responses", "gemini_interactions")
PREVIOUS = {
    "openai_responses": "previous_response_id",
    "gemini_interactions": "previous_interaction_id",
}
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
_PROMPT = "Weather in Paris?"


def call_spec(call_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {"name": name, "arguments": {"city": "Paris"}, "id": call_id}


def script(*turns: dict[str, Any], protocol: str, **options: Any) -> Script:
    return Script.from_dict(
        {"turns": [{"protocol": protocol, "respond": r} for r in turns], **options}
    )


class Client:
    """One test id's requests to ``server`` on ``protocol``."""

    def __init__(self, server: MockServer, protocol: str, test_id: str) -> None:
        self.server = server
        self.protocol = protocol
        self.test_id = test_id
        self.headers = {**AUTH[protocol], TEST_ID_HEADER: test_id}

    def post(self, body: dict[str, Any], *, stream: bool = False) -> httpx.Response:
        if self.protocol != "gemini_generate_content":
            body = {**body, "stream": True} if stream else body
        url = self.server.url + path_of(self.protocol, stream)
        return httpx.post(url, json=body, headers=self.headers, timeout=30)

    def verdicts(self) -> list[dict[str, Any]]:
        return self.server.verdicts(self.test_id)

    def ids(self) -> list[str]:
        return [v["id"] for v in self.verdicts()]

    def turn_id(self) -> str:
        """The id of the last turn served to this test id (from the journal)."""
        entry = self.server.journal.last(test_id=self.test_id, outcome="matched")
        assert entry.facts is not None
        return str(entry.facts["turn"]["id"])


def first(protocol: str, prompt: str = _PROMPT, **extra: Any) -> dict[str, Any]:
    """The opening request: the user's question (and ``extra`` fields)."""
    if protocol == "openai_responses":
        return {"model": "m", "input": prompt, **extra}
    if protocol == "openai_chat_completions":
        return {"model": "m", "messages": [{"role": "user", "content": prompt}], **extra}
    if protocol == "anthropic_messages":
        return {"model": "m", "max_tokens": 64,
                "messages": [{"role": "user", "content": prompt}], **extra}  # fmt: skip
    if protocol == "gemini_interactions":
        return {"model": "m", "input": prompt, **extra}
    return {"contents": [{"role": "user", "parts": [{"text": prompt}]}], **extra}


def answer(
    protocol: str, calls: list[str], *, previous: str | None = None, output: str = "sunny"
) -> dict[str, Any]:
    """A request carrying a result for each call id in ``calls`` (all ``get_weather``):
    by previous id on a stateful protocol when ``previous`` is given, else the history
    replayed with the calls as the model sent them."""
    args = {"city": "Paris"}
    if protocol == "openai_responses":
        results = [{"type": "function_call_output", "call_id": c, "output": output} for c in calls]
        if previous is not None:
            return {"model": "m", "previous_response_id": previous, "input": results}
        items = [{"type": "function_call", "call_id": c, "name": "get_weather",
                  "arguments": json.dumps(args)} for c in calls]  # fmt: skip
        return {"model": "m", "input": [{"role": "user", "content": _PROMPT}, *items, *results]}
    if protocol == "gemini_interactions":
        results = [{"type": "function_result", "call_id": c, "name": "get_weather",
                    "result": output} for c in calls]  # fmt: skip
        if previous is not None:
            return {"model": "m", "previous_interaction_id": previous, "input": results}
        steps = [{"type": "function_call", "id": c, "name": "get_weather", "arguments": args}
                 for c in calls]  # fmt: skip
        user = {"type": "user_input", "content": [{"type": "text", "text": _PROMPT}]}
        return {"model": "m", "store": False, "input": [user, *steps, *results]}
    if protocol == "openai_chat_completions":
        tool_calls = [{"id": c, "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps(args)}} for c in calls]  # fmt: skip
        tools = [{"role": "tool", "tool_call_id": c, "content": output} for c in calls]
        return {"model": "m", "messages": [
            {"role": "user", "content": _PROMPT},
            {"role": "assistant", "content": None, "tool_calls": tool_calls}, *tools]}  # fmt: skip
    if protocol == "anthropic_messages":
        uses = [{"type": "tool_use", "id": c, "name": "get_weather", "input": args} for c in calls]
        results = [{"type": "tool_result", "tool_use_id": c, "content": output} for c in calls]
        return {"model": "m", "max_tokens": 64, "messages": [
            {"role": "user", "content": _PROMPT},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results}]}  # fmt: skip
    parts = [{"functionCall": {"name": "get_weather", "args": args, "id": c}} for c in calls]
    responses = [{"functionResponse": {"name": "get_weather", "id": c,
                                       "response": {"output": output}}} for c in calls]  # fmt: skip
    return {"contents": [{"role": "user", "parts": [{"text": _PROMPT}]},
                         {"role": "model", "parts": parts},
                         {"role": "user", "parts": responses}]}  # fmt: skip
