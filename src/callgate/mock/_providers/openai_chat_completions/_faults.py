"""OpenAI Chat Completions in the mock:
fault roles of wire chunks, the in-stream error chunk, truncation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .._kit import Event, cut_deltas
from ._rendering import DONE_EVENT, call_index, is_done

_SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"


def _finish(event: Mapping[str, Any]) -> bool:
    choices = event.get("choices")
    return (
        isinstance(choices, list) and bool(choices) and choices[0].get("finish_reason") is not None
    )


def _first(event: Mapping[str, Any]) -> bool:
    """Whether a tool-call chunk is a call's first delta (it carries the id; a profile's
    later deltas may repeat it as ``""``)."""
    return bool(event["choices"][0]["delta"]["tool_calls"][0].get("id"))


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is its first delta (id, name) then argument fragments; no chunk ends a call,
    so every chunk of a call marks it done so far. The terminal is the finish chunk."""
    if is_done(event):
        return ()
    index = call_index(event)
    if index is not None:
        return (("start" if _first(event) else "delta", index), ("done", index))
    return (("terminal", None),) if _finish(event) else ()


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    """``{"error": {"message", "type", "param", "code"}}``: the openai SDK raises
    ``APIError`` on it (``docs/contracts/openai-chat-completions.md`` §1)."""
    error = {
        "message": fault.get("message") or _SERVER_ERROR,
        "type": fault.get("error_type", "server_error"),
        "param": None,
        "code": fault.get("code"),
    }
    return {"error": error}


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut call ``fault["call"]``'s argument fragments after ``keep`` chars, then finish
    with ``length`` (the usage chunk, if any, and ``[DONE]`` follow)."""
    starts = [e for e in events if call_index(e) is not None and _first(e)]
    index = call_index(starts[fault.get("call", 0)])
    out = cut_deltas(
        events,
        lambda e: call_index(e) == index and not _first(e),
        lambda e: str(e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]),
        lambda e, text: _with_arguments(e, text),
        fault.get("keep"),
    )
    finish = copy.deepcopy(next(e for e in events if _finish(e)))
    finish["choices"][0]["finish_reason"] = "length"
    out.append(finish)
    out.extend(e for e in events if not is_done(e) and e.get("choices") == [])
    out.append(dict(DONE_EVENT))
    return out


def _with_arguments(event: Event, text: str) -> Event:
    out = copy.deepcopy(event)
    out["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = text
    return out
