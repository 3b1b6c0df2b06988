"""Builders of Responses WebSocket frames for the tests: per-response events (the SSE
ones, from :mod:`.wire`) on a lane, and the three steering events (openai 3.57.0
``response_steer_*_event.py`` shapes)."""

from __future__ import annotations

import json
from typing import Any

from .wire import Stream, fc_item, message_item


def on_lane(events: list[dict[str, Any]], lane: str | None) -> list[dict[str, Any]]:
    """``events`` as a named lane echoes them (``stream_id``); the default lane omits it."""
    return [dict(e, stream_id=lane) if lane is not None else dict(e) for e in events]


def frames(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e, separators=(",", ":")) for e in events]


def call_response(rid: str, n: int = 1, *, prefix: str = "call") -> Stream:
    s = Stream(rid).created()
    for i in range(n):
        args = json.dumps({"city": f"c{i}"})
        s.call(i, fc_item(f"fc_{rid}_{i}", f"{prefix}_{rid}_{i}", "get_weather", args), None)
    return s.completed()


def text_response(rid: str, text: str = "hello") -> Stream:
    return Stream(rid).created().message(0, message_item(f"msg_{rid}", text)).completed()


def steered(rid: str, text: str = "going") -> Stream:
    """A response stopped at a safe boundary by an accepted steer: incomplete, steered."""
    s = Stream(rid).created().message(0, message_item(f"msg_{rid}", text))
    body = {**s.events[0]["response"], "status": "incomplete", "output": s.output()}
    body["incomplete_details"] = {"reason": "steered"}
    s.ev("response.incomplete", response=body)
    return s


def accepted(sid: str, parent: str, seq: int = 0) -> dict[str, Any]:
    return {
        "type": "response.steer.accepted",
        "sequence_number": seq,
        "steer": {"id": sid, "previous_response_id": parent},
    }


def pending(sid: str, parent: str, call_ids: list[str], seq: int = 0) -> dict[str, Any]:
    return {
        "type": "response.steer.pending",
        "sequence_number": seq,
        "reason": "waiting_for_required_input",
        "required_input": [
            {"type": "function_call_output", "call_id": c, "name": "get_weather"} for c in call_ids
        ],
        "steer": {"id": sid, "previous_response_id": parent},
    }


def failed(
    sid: str | None, parent: str, code: str = "response_already_completed", seq: int = 0
) -> dict[str, Any]:
    steer: dict[str, Any] = {"input": "go left", "previous_response_id": parent}
    if sid is not None:
        steer["id"] = sid
    return {
        "type": "response.steer.failed",
        "sequence_number": seq,
        "error": {"code": code, "message": "cannot steer", "type": "invalid_request_error"},
        "steer": steer,
    }


def ws_error(code: str = "previous_response_not_found", **extra: Any) -> dict[str, Any]:
    """A WebSocket ``error`` event (nested, with the HTTP ``status``; no sequence number)."""
    error = {"type": "invalid_request_error", "code": code, "message": "no such response"}
    return {"type": "error", "status": 400, "error": error, **extra}


def feed_frames(conn: Any, events: list[dict[str, Any]]) -> list[Any]:
    """Feed ``events`` to a Connection as text frames; the turns they ended, in order."""
    return [turn for frame in frames(events) for turn in conn.feed_message(frame)]
