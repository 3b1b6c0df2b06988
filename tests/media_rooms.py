"""One tool call per room and a builder call with fixed arguments, for the media tests:
``ROOMS[protocol].turn(baseline)`` parses a one-call response body of that baseline,
``ROOMS[protocol].build(turn, results, **kw)`` returns the continuation request body, and
``results_of(request)`` finds the rendered tool results in it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from callgate import (
    anthropic_messages as am,
)
from callgate import (
    gemini_generate_content as ggc,
)
from callgate import (
    gemini_interactions as gi,
)
from callgate import (
    openai_chat_completions as occ,
)
from callgate import (
    openai_responses as oar,
)

SCHEMA = {"type": "object", "properties": {}}


def _oar_turn(baseline: str) -> Any:
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-test",
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_shot",
                "name": "shot",
                "arguments": "{}",
                "status": "completed",
            }
        ],
    }
    return oar.parse_response(body, baseline=baseline)


def _oar_build(turn: Any, results: Any, **kw: Any) -> dict[str, Any]:
    return oar.build_stateful_continuation(
        turn,
        results,
        previous_response_was_stored=True,
        store=True,
        model="gpt-test",
        instructions=None,
        tools=[{"type": "function", "name": "shot", "parameters": SCHEMA, "strict": False}],
        **kw,
    )


def _am_turn(baseline: str) -> Any:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_shot", "name": "shot", "input": {}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return am.parse_response(body, baseline=baseline)


def _am_build(turn: Any, results: Any, **kw: Any) -> dict[str, Any]:
    return am.build_continuation(
        turn,
        results,
        history=[{"role": "user", "content": "shoot"}],
        model="claude-test",
        max_tokens=64,
        tools=[{"name": "shot", "input_schema": SCHEMA}],
        **kw,
    )


def _gi_turn(baseline: str) -> Any:
    body = {
        "id": "int_1",
        "status": "requires_action",
        "steps": [
            {"type": "function_call", "id": "fc_shot", "name": "shot", "arguments": {}},
        ],
    }
    return gi.parse_interaction(body, source="create", baseline=baseline)


def _gi_build(turn: Any, results: Any, **kw: Any) -> dict[str, Any]:
    return gi.build_stateful_continuation(
        turn,
        results,
        previous_interaction_was_stored=True,
        store=True,
        model="gemini-3-flash-preview",
        tools=[{"type": "function", "name": "shot", "parameters": SCHEMA}],
        **kw,
    )


def _ggc_turn(baseline: str) -> Any:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"id": "fc_shot", "name": "shot", "args": {}}}],
                },
                "finishReason": "STOP",
            }
        ],
        "responseId": "r1",
    }
    return ggc.parse_response(body, baseline=baseline)


def _ggc_build(turn: Any, results: Any, **kw: Any) -> dict[str, Any]:
    kw.setdefault("model", "gemini-3-flash-preview")
    kw.setdefault("history", [{"role": "user", "parts": [{"text": "shoot"}]}])
    return ggc.build_continuation(
        turn,
        results,
        tools=[{"functionDeclarations": [{"name": "shot"}]}],
        tool_config=None,
        system_instruction=None,
        generation_config=None,
        safety_settings=None,
        **kw,
    )


def _occ_turn(baseline: str) -> Any:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_shot",
                            "type": "function",
                            "function": {"name": "shot", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
    }
    return occ.parse_response(body, baseline=baseline)


def _occ_build(turn: Any, results: Any, **kw: Any) -> dict[str, Any]:
    return occ.build_continuation(
        turn,
        results,
        messages=[{"role": "user", "content": "shoot"}],
        model="gpt-test",
        tools=[
            {
                "type": "function",
                "function": {"name": "shot", "parameters": SCHEMA, "strict": False},
            }
        ],
        tool_choice=None,
        parallel_tool_calls=None,
        response_format=None,
        max_completion_tokens=None,
        **kw,
    )


@dataclasses.dataclass(frozen=True)
class Room:
    turn: Callable[[str], Any]
    build: Callable[..., dict[str, Any]]
    call_id: str


ROOMS = {
    "openai_responses": Room(_oar_turn, _oar_build, "call_shot"),
    "anthropic_messages": Room(_am_turn, _am_build, "toolu_shot"),
    "gemini_interactions": Room(_gi_turn, _gi_build, "fc_shot"),
    "gemini_generate_content": Room(_ggc_turn, _ggc_build, "fc_shot"),
    "openai_chat_completions": Room(_occ_turn, _occ_build, "call_shot"),
}


def rendered(protocol: str, request: dict[str, Any]) -> Any:
    """The rendered tool result (the native object) in a request built by ``ROOMS``."""
    if protocol == "openai_responses":
        return request["input"][-1]
    if protocol == "anthropic_messages":
        return request["messages"][-1]["content"][0]
    if protocol == "gemini_interactions":
        return request["input"][-1]
    if protocol == "gemini_generate_content":
        return request["body"]["contents"][-1]["parts"][0]["functionResponse"]
    return request["messages"][-1]
