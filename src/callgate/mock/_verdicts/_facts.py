"""What the mock records in a journal entry for the verdicts (``entry.facts``).

- ``facts["turn"]`` on a served turn: what callgate's gate decides on what the client
  received (the room's own parser is run on the bytes sent, faulted or not): the turn's
  id, its call ids, which of them the gate released, why it withheld them, which calls'
  arguments a fault cut, and whether the cut stream could be resumed.
- ``facts["retry_after"]`` on an HTTP error: the delay (seconds) the answer asked for.
- ``facts["check"]`` on a native refusal: the name of the check that refused.

An unfaulted turn's decision depends only on its rendering: it is computed once per
rendered turn and shared by every entry that served it.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Collection, Iterable, Mapping
from types import ModuleType
from typing import Any

from ..._errors import CallgateError
from .._providers._kit import Rendered, Reply

__all__ = ["recorded_facts", "reply_facts", "turn_facts"]

# Faults after which a stored stream is still whole on the server (resumable).
_CUTS = frozenset({"disconnect", "never_end"})
_MAX_REASON = 200
_memo: dict[int, tuple[Rendered, dict[str, Any]]] = {}
_rooms: dict[str, ModuleType] = {}


def _room(protocol: str) -> ModuleType:
    found = _rooms.get(protocol)
    if found is None:
        found = _rooms[protocol] = importlib.import_module(f"callgate.{protocol}")
    return found


def _decide(protocol: str, rendered: Rendered, sent: bytes | None) -> str | None:
    """``None`` when the gate releases the turn (and all its calls: every room releases
    all of a turn's calls or none) from what was sent, else why it does not."""
    room = _room(protocol)
    try:
        turn = room.parse_response(rendered.body) if sent is None else room.parse_stream(sent)
    except CallgateError as exc:
        return f"{type(exc).__name__}: {str(exc)[:_MAX_REASON]}"
    if turn.calls or not rendered.calls:
        return None
    status = getattr(turn, "status", None) or getattr(turn, "stop_reason", None)
    reason = getattr(turn, "finish_reason", None) or status
    return f"the gate withheld the calls (terminal: {reason})"


def _facts(
    protocol: str, rendered: Rendered, sent: bytes | None, fault: Mapping[str, Any] | None
) -> dict[str, Any]:
    calls = [call_id for call_id, _ in rendered.calls]
    if not calls and fault is None:
        return {"id": rendered.response_id, "calls": [], "released": True}
    reason = _decide(protocol, rendered, sent)
    facts: dict[str, Any] = {
        "id": rendered.response_id,
        "calls": calls,
        "names": [name for _, name in rendered.calls],
        "released": reason is None,
    }
    if reason is not None:
        facts["reason"] = reason
    if fault is not None:
        facts["fault"] = dict(fault)
        facts["partial"] = _partial(calls, fault)
    return facts


def _partial(calls: list[str], fault: Mapping[str, Any]) -> list[str]:
    """The calls whose arguments ``fault`` cut before they were whole."""
    if fault["type"] == "truncate":
        index = fault.get("call", 0)
    elif "after_argument_deltas" in fault:
        index = fault.get("after_call", 0)
    else:
        return []
    return [calls[index]] if isinstance(index, int) and 0 <= index < len(calls) else []


def turn_facts(
    protocol: str,
    rendered: Rendered,
    *,
    sent: bytes | None = None,
    fault: Mapping[str, Any] | None = None,
    request: Mapping[str, Any] | None = None,
    resumable: Collection[str] = (),
) -> dict[str, Any]:
    """``facts["turn"]`` of a served turn; ``sent`` the stream bytes the client received
    when a ``fault`` changed them (``None``: the rendering as it is)."""
    if fault is None:
        key = id(rendered)
        found = _memo.get(key)
        if found is not None and found[0] is rendered:
            return found[1]
        whole = None if rendered.body is not None else rendered.sse
        facts = _facts(protocol, rendered, whole, None)
        if len(_memo) >= 512:
            _memo.clear()  # renderings come and go with scripts: keep the memo bounded
        _memo[key] = (rendered, facts)
        return facts
    facts = _facts(protocol, rendered, sent, fault)
    if fault["type"] in _CUTS and request is not None and protocol in resumable:
        stored = request.get("store") is not False and bool(rendered.response_id)
        facts["resumable"] = stored and _resumable_request(protocol, request)
    return facts


def _resumable_request(protocol: str, request: Mapping[str, Any]) -> bool:
    """A stored stream is resumed by id: always on a protocol that resumes any stored
    stream, only in background mode on one that resumes background responses."""
    mode = RESUME.get(protocol)
    return mode == "stored" or (mode == "background" and request.get("background") is True)


# How each protocol resumes a cut stream (the only protocol-specific fact here).
RESUME: dict[str, str] = {"gemini_interactions": "stored", "openai_responses": "background"}


def reply_facts(reply: Reply) -> dict[str, Any] | None:
    """``{"retry_after": seconds}`` when an error answer asked for a delay, else ``None``."""
    headers = {k.lower(): v for k, v in (reply.headers or {}).items()}
    delay: float | None = None
    try:
        if "retry-after-ms" in headers:
            delay = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            delay = float(headers["retry-after"])
        else:
            delay = _retry_info(reply.body)
    except ValueError:
        delay = None
    return None if delay is None else {"retry_after": delay}


def _retry_info(body: Any) -> float | None:
    """Gemini's ``google.rpc.RetryInfo`` delay (``"1s"``) in an error body."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            return float(delay[:-1])
    return None


# -- recordings replayed (MockServer.from_recordings) -------------------------------------------


def recorded_facts(
    protocol: str, status: int, headers: Iterable[tuple[str, str]], data: bytes
) -> dict[str, Any] | None:
    """``entry.facts`` of a recorded answer served back: the delay an error asked for, or
    the gate's decision on the recorded turn (its call ids found in the recorded events)."""
    if status >= 400:
        delay = _header_delay({k.lower(): v for k, v in headers})
        return None if delay is None else {"retry_after": delay}
    objects = _json_objects(data)
    calls: list[str] = []
    names: list[str] = []
    for obj in objects:
        _calls_in(obj, calls, names)
    if not calls:
        return None
    streamed = data.lstrip().startswith((b"event:", b"data:", b":"))
    room = _room(protocol)
    reason: str | None = None
    try:
        turn = room.parse_stream(data) if streamed else room.parse_response(objects[0])
    except CallgateError as exc:
        reason = f"{type(exc).__name__}: {str(exc)[:_MAX_REASON]}"
    else:
        reason = None if turn.calls else "the gate withheld the calls"
    facts: dict[str, Any] = {"id": "", "calls": calls, "names": names, "released": reason is None}
    if reason is not None:
        facts["reason"] = reason
    return {"turn": facts}


def _header_delay(headers: Mapping[str, str]) -> float | None:
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        if "retry-after" in headers:
            return float(headers["retry-after"])
    except ValueError:
        return None
    return None


def _json_objects(data: bytes) -> list[Any]:
    """The JSON body, or every ``data:`` JSON object of an event stream."""
    text = data.decode("utf-8", "replace")
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                found.append(json.loads(line[5:]))
            except ValueError:
                continue
    return found


_CALL_TYPES = frozenset({"function_call", "tool_use"})


def _calls_in(value: Any, calls: list[str], names: list[str]) -> None:
    """Collect the call ids (and names) of every call object inside ``value``."""
    if isinstance(value, list):
        for item in value:
            _calls_in(item, calls, names)
        return
    if not isinstance(value, dict):
        return
    call_id = None
    if value.get("type") in _CALL_TYPES:
        call_id = value.get("call_id") or value.get("id")
    elif isinstance(value.get("function"), dict) and value.get("type") == "function":
        call_id = value.get("id")  # a Chat Completions tool call
    elif isinstance(value.get("functionCall"), dict):
        inner = value["functionCall"]
        call_id, value = inner.get("id"), inner
    if isinstance(call_id, str) and call_id not in calls:
        calls.append(call_id)
        name = value.get("name") or (value.get("function") or {}).get("name")
        names.append(name if isinstance(name, str) else "")
    for key, item in value.items():
        if isinstance(item, (dict, list)) and key != "functionCall":
            _calls_in(item, calls, names)
