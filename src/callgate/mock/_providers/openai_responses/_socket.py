"""OpenAI Responses over WebSocket: the client and server events of the socket wire.

Facts from docs/contracts/openai-responses-websocket.md (openai 3.57.0): the client sends
text frames ``response.create`` (the ``POST /v1/responses`` body plus ``type``, the lane
``stream_id`` and ``generate``; ``stream`` is implicit, ``background`` unsupported) and
``response.steer`` (``type``, ``previous_response_id``, ``input``: user messages only).
The server sends the Responses stream events, one JSON object per frame, echoing the
create's ``stream_id``; its ``error`` is the nested WebSocket error (``error: {message,
type, code, param, headers?}``, ``status`` for a protocol error); steering answers with
``response.steer.accepted`` / ``.pending`` / ``.failed``, and a steered response ends
``response.incomplete`` with ``incomplete_details.reason: "steered"``.

Pure functions of dicts: the engine (``mock._ws``) drives the connection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._kit import Event, Socket, SocketMessage

__all__ = ["SOCKET", "steer_spec_problem"]

_LANE = re.compile(r"[A-Za-z0-9_.\-]{1,256}")
_STEER_KEYS = frozenset({"type", "previous_response_id", "input"})
_PART_TYPES = frozenset({"input_text", "input_image", "input_file"})


def _error(message: str, code: str, *, status: int = 400, param: str | None = None) -> Event:
    error = {"type": "invalid_request_error", "code": code, "message": message, "param": param}
    return {"type": "error", "status": status, "error": error}


OUTCOMES = ("steered", "completed", "pending", "failed")


def steer_spec_problem(spec: Any) -> str | None:
    """Why a turn's ``respond.steer`` is not ``{"outcome", "after", "code"}``, or None."""
    if not isinstance(spec, dict):
        return "an object with 'outcome', 'after' and 'code'"
    unknown = sorted(set(spec) - {"outcome", "after", "code"})
    if unknown:
        return f"unknown key(s): {', '.join(unknown)}"
    if spec.get("outcome", "steered") not in OUTCOMES:
        return f"outcome is one of {', '.join(OUTCOMES)}"
    after = spec.get("after", 1)
    if type(after) is not int or not 1 <= after < 2**31:
        return "after is an int >= 1"
    code = spec.get("code", "x")
    if not isinstance(code, str) or not code:
        return "code is a non-empty string"
    return None


def read(message: Any) -> SocketMessage:
    """A client message: a create (its HTTP body and lane), a steer, or its refusal."""
    if not isinstance(message, dict):
        return SocketMessage("error", error=_error("Expected a JSON object.", "invalid_json"))
    kind = message.get("type")
    if kind == "response.create":
        lane = message.get("stream_id")
        if lane is not None and not (isinstance(lane, str) and _LANE.fullmatch(lane)):
            refused = _error(
                "stream_id must be 1-256 ASCII letters, digits, underscores, hyphens or "
                "periods.", "invalid_stream_id", param="stream_id",
            )  # fmt: skip
            return SocketMessage("error", error=refused)
        if message.get("background"):
            refused = _error(
                "background is not supported over WebSocket.", "invalid_value",
                param="background",
            )  # fmt: skip
            return SocketMessage("error", error=_lane(refused, lane))
        if message.get("generate") is False:
            refused = _error(
                "callgate mock: generate: false (a warm-up without output) is not served.",
                "unsupported_value", param="generate",
            )  # fmt: skip
            return SocketMessage("error", error=_lane(refused, lane))
        body = {k: v for k, v in message.items() if k not in ("type", "stream_id", "generate")}
        body["stream"] = True  # implicit over the socket
        return SocketMessage("create", body=body, lane=lane)
    if kind == "response.steer":
        return SocketMessage(
            "steer", target=message.get("previous_response_id"), input=message.get("input")
        )
    refused = _error(
        f"Unknown event type {kind!r}: expected 'response.create' or 'response.steer'.",
        "unknown_event_type", param="type",
    )  # fmt: skip
    return SocketMessage("error", error=refused)


def _lane(event: Event, lane: str | None) -> Event:
    return event if lane is None else {**event, "stream_id": lane}


def event(sse_event: Event, lane: str | None) -> Event:
    """An SSE stream event as the socket sends it (a flat ``error`` becomes nested)."""
    if sse_event.get("type") == "error" and not isinstance(sse_event.get("error"), dict):
        nested = {k: sse_event.get(k) for k in ("message", "code", "param")}
        nested["type"] = sse_event.get("error_type", "server_error")
        sse_event = {"type": "error", "sequence_number": sse_event.get("sequence_number"),
                     "error": nested}  # fmt: skip
    return _lane(sse_event, lane)


def http_error(status: int, body: Any, headers: Mapping[str, str], lane: str | None) -> Event:
    """The error event for what HTTP answers with ``status`` and ``body``."""
    found = body.get("error") if isinstance(body, dict) else None
    error = dict(found) if isinstance(found, dict) else {"type": "server_error", "message": ""}
    if headers:
        error["headers"] = dict(headers)
    return _lane({"type": "error", "status": status, "error": error}, lane)


def steer_problem(value: Any) -> str | None:
    """Why a steer's ``input`` cannot be steered with (user messages only), or None."""
    if isinstance(value, str):
        return None if value else "input must not be empty"
    if not isinstance(value, list) or not value:
        return "input must be a string or a non-empty array of user messages"
    for item in value:
        if not isinstance(item, dict) or item.get("role") != "user":
            return "steering accepts only messages with the 'user' role"
        if set(item) - {"type", "role", "content"} or item.get("type", "message") != "message":
            return "a steering message may contain only 'type', 'role' and 'content'"
        content = item.get("content")
        if isinstance(content, list):
            if not all(isinstance(p, dict) and p.get("type") in _PART_TYPES for p in content):
                return "steering content parts are input_text, input_image or input_file"
        elif not isinstance(content, str):
            return "content must be a string or an array of content parts"
    return None


def steer_input(value: Any) -> list[Any]:
    """A steer's input as input items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value)


def accepted(steer_id: str, target: str, seq: int) -> Event:
    return {"type": "response.steer.accepted", "sequence_number": seq,
            "steer": {"id": steer_id, "previous_response_id": target}}  # fmt: skip


def failed(steer: Mapping[str, Any], code: str, message: str, seq: int) -> Event:
    """``steer``: ``input``, ``previous_response_id`` and, once allocated, ``id``."""
    error = {"code": code, "message": message, "type": "invalid_request_error"}
    return {"type": "response.steer.failed", "sequence_number": seq, "error": error,
            "steer": dict(steer)}  # fmt: skip


def pending(steer_id: str, target: str, calls: Sequence[tuple[str, str]], seq: int) -> Event:
    """The required inputs of ``target``'s client tool calls (``(call_id, name)``)."""
    stubs = [{"type": "function_call_output", "call_id": c, "name": n} for c, n in calls]
    return {"type": "response.steer.pending", "sequence_number": seq,
            "reason": "waiting_for_required_input", "required_input": stubs,
            "steer": {"id": steer_id, "previous_response_id": target}}  # fmt: skip


def steered(sent: Sequence[Event], seq: int) -> Event | None:
    """The ``response.incomplete`` (reason ``steered``) ending a response whose events so
    far are ``sent``: its output is the items it completed; None before ``created``."""
    created = next((e for e in sent if e.get("type") == "response.created"), None)
    if created is None:
        return None
    done = [e["item"] for e in sent if e.get("type") == "response.output_item.done"]
    response = {**created["response"], "status": "incomplete", "output": done,
                "incomplete_details": {"reason": "steered"}}  # fmt: skip
    return {"type": "response.incomplete", "sequence_number": seq, "response": response}


def successor(request: Mapping[str, Any], parent: str, items: list[Any]) -> dict[str, Any]:
    """The automatic successor's request: the parent's settings, continuing from it with
    the queued input."""
    body = {k: v for k, v in request.items() if k not in ("input", "previous_response_id")}
    return {**body, "previous_response_id": parent, "input": items, "stream": True}


def response_id(events: Sequence[Event]) -> str | None:
    for item in events:
        found = item.get("response")
        if isinstance(found, dict) and isinstance(found.get("id"), str):
            return str(found["id"])
    return None


TERMINALS = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})


SOCKET = Socket(
    read=read, event=event, http_error=http_error, steer_problem=steer_problem,
    steer_input=steer_input, accepted=accepted, failed=failed, pending=pending,
    steered=steered, successor=successor, response_id=response_id, terminals=TERMINALS,
)  # fmt: skip
