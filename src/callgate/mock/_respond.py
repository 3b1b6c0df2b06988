"""Render a scripted turn on its protocol's wire, with deterministic ids.

The provider knowledge (event order, required fields) lives in each protocol package's
``_render`` module; this module only maps a script's ``respond`` block onto it and keeps
the ids it generated so later turns can refer to "the previous response" or to a call by
its function name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .._errors import CallgateError
from .._json import loads_strict
from ..anthropic_messages import _render as anthropic_render
from ..contracts import CURRENT_REVISION
from ..gemini_interactions import _render as gemini_render
from ..openai_responses import _render as openai_render
from ._script import ScriptTurn

__all__ = ["Rendered", "Reply", "error_body", "render"]


@dataclasses.dataclass(frozen=True, slots=True)
class Rendered:
    """What the server sent for one turn: its id, its calls, and the wire payload."""

    response_id: str
    calls: tuple[tuple[str, str], ...]  # (call id, function name)
    events: tuple[dict[str, Any], ...]  # stream events (empty for a JSON body)
    body: dict[str, Any] | None  # non-streaming body
    sse: bytes  # the encoded stream (b"" for a JSON body)
    frames: tuple[bytes, ...]  # one SSE frame per event, in order


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    """A complete non-success answer: status, JSON body and extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


class _Ids:
    def __init__(self, seed: int, conversation: str, turn: int) -> None:
        self._base = f"{seed}/{conversation}/{turn}"

    def __call__(self, prefix: str, kind: str, n: int = 0, size: int = 24) -> str:
        digest = hashlib.sha256(f"{self._base}/{kind}/{n}".encode()).hexdigest()
        return prefix + digest[:size]


def _arguments(spec: Mapping[str, Any], *, as_object: bool = False) -> str:
    """The arguments as the exact text to send. ``as_object``: the wire needs an object
    (a non-streamed Anthropic/Gemini call), so ``raw`` text that is no JSON object gives
    ``{}`` -- the script loader allows such text on streamed turns only, so this is a
    stored snapshot (GET, cancel) of a streamed turn."""
    if "raw" in spec:
        raw = str(spec["raw"])
        if as_object and raw:
            try:
                parsed = loads_strict(raw)
            except CallgateError:
                parsed = None
            return raw if isinstance(parsed, dict) else ""
        return raw
    return json.dumps(spec.get("arguments", {}), separators=(",", ":"), ensure_ascii=False)


def render(
    turn: ScriptTurn,
    *,
    seed: int,
    conversation: str,
    turn_number: int,
    stream: bool,
    baseline: str = CURRENT_REVISION,
    model: str | None = None,
    stored: bool = True,
) -> Rendered:
    """Render ``turn`` as a stream (``stream=True``) or a JSON body.

    ``model`` is echoed in the response (the request's model); without it the turn's
    expected model, else ``"callgate-mock-model"``. ``stored=False`` (the request said
    ``store: false``) renders a Gemini interaction without its id, as the API does;
    ``response_id`` stays the mock's own key for it.
    """
    ids = _Ids(seed, conversation, turn_number)
    echo = model if isinstance(model, str) and model else _model(turn)
    respond = turn.respond
    split = turn.splitter()
    calls_spec = respond.get("calls", [])
    interleave = respond.get("interleave") == "round_robin"
    reasoning = respond.get("reasoning")
    usage = respond.get("usage")
    events: list[dict[str, Any]]
    body: dict[str, Any] | None = None
    calls: list[tuple[str, str]] = []

    if turn.protocol == "openai_responses":
        response_id = ids("resp_", "response")
        items: list[dict[str, Any]] = []
        if reasoning is not None:
            item = {"type": "reasoning", "id": ids("rs_", "reasoning"),
                    "summary": [reasoning.get("summary", "")]}  # fmt: skip
            if reasoning.get("signature"):
                item["encrypted_content"] = reasoning["signature"]
            items.append(item)
        if "text" in respond:
            items.append({"type": "message", "id": ids("msg_", "message"), "text": respond["text"]})
        for n, spec in enumerate(calls_spec):
            call_id = spec.get("id") or ids("call_", "call", n)
            calls.append((call_id, spec["name"]))
            items.append({"type": "function_call", "id": ids("fc_", "item", n), "call_id": call_id,
                          "name": spec["name"], "arguments": _arguments(spec)})  # fmt: skip
        status = respond.get("status", "completed")
        usage_map = _usage(usage, "input_tokens", "output_tokens")
        if stream:
            events = openai_render.render_turn(
                response_id=response_id, model=echo, items=items, status=status,
                split=split, interleave=interleave, usage=usage_map, baseline=baseline,
            )  # fmt: skip
        else:
            events = []
            body = openai_render.render_response(
                response_id=response_id, model=echo, items=items, status=status,
                usage=usage_map,
            )  # fmt: skip
        encode = openai_render.encode_sse
    elif turn.protocol == "anthropic_messages":
        response_id = ids("msg_", "message")
        blocks: list[dict[str, Any]] = []
        if reasoning is not None:
            blocks.append({"type": "thinking", "thinking": reasoning.get("summary", ""),
                           "signature": reasoning.get("signature", "")})  # fmt: skip
        if "text" in respond:
            blocks.append({"type": "text", "text": respond["text"]})
        for n, spec in enumerate(calls_spec):
            call_id = spec.get("id") or ids("toolu_", "call", n)
            calls.append((call_id, spec["name"]))
            blocks.append({"type": "tool_use", "id": call_id, "name": spec["name"],
                           "input_json": _arguments(spec, as_object=not stream)})  # fmt: skip
        stop = respond.get("status", "tool_use" if calls_spec else "end_turn")
        tokens = _usage(usage, "input_tokens", "output_tokens")
        if stream:
            events = anthropic_render.render_turn(
                message_id=response_id, model=echo, blocks=blocks, stop_reason=stop,
                split=split, ping_every=None, input_tokens=tokens["input_tokens"],
                output_tokens=tokens["output_tokens"],
            )  # fmt: skip
        else:
            events = []
            body = anthropic_render.render_message(
                message_id=response_id, model=echo, blocks=blocks, stop_reason=stop,
                input_tokens=tokens["input_tokens"], output_tokens=tokens["output_tokens"],
            )  # fmt: skip
        encode = anthropic_render.encode_sse
    else:
        response_id = ids("", "interaction", size=32)
        steps: list[dict[str, Any]] = []
        if reasoning is not None:
            steps.append({"type": "thought", "signature": reasoning.get("signature", ""),
                          "summary": reasoning.get("summary", "")})  # fmt: skip
        if "text" in respond:
            steps.append({"type": "model_output", "text": respond["text"]})
        for n, spec in enumerate(calls_spec):
            call_id = spec.get("id") or ids("", "call", n, size=16)
            calls.append((call_id, spec["name"]))
            steps.append({"type": "function_call", "id": call_id, "name": spec["name"],
                          "arguments": _arguments(spec, as_object=not stream)})  # fmt: skip
        status = respond.get("status", "requires_action" if calls_spec else "completed")
        usage_map = _usage(usage, "total_input_tokens", "total_output_tokens")
        wire_id = response_id if stored else None  # an unstored interaction has no id
        if stream:
            events = gemini_render.render_turn(
                interaction_id=wire_id, model=echo, steps=steps, status=status,
                split=split, interleave=interleave, usage=usage_map,
            )  # fmt: skip
        else:
            events = []
            body = gemini_render.render_interaction(
                interaction_id=wire_id, model=echo, steps=steps, status=status,
                usage=usage_map,
            )  # fmt: skip
        encode = gemini_render.encode_sse

    if "disconnect_after" in respond:
        events = events[: respond["disconnect_after"]]
    frames = tuple(encode([event]) for event in events)
    return Rendered(
        response_id=response_id,
        calls=tuple(calls),
        events=tuple(events),
        body=body,
        sse=b"".join(frames),
        frames=frames,
    )


def _model(turn: ScriptTurn) -> str:
    model = turn.expect.get("model")
    return model if isinstance(model, str) else "callgate-mock-model"


def _usage(usage: Mapping[str, int] | None, inp: str, out: str) -> dict[str, int]:
    given = dict(usage or {})
    return {inp: given.get("input_tokens", 12), out: given.get("output_tokens", 34)}


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_ANTHROPIC_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
_OPENAI_TYPE = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}


def error_body(
    protocol: str,
    status: int,
    message: str,
    *,
    code: str | None = None,
    retry_after: int | None = None,
) -> dict[str, Any]:
    """The provider's own error body for an HTTP error.

    ``retry_after`` (seconds) adds Google's ``RetryInfo`` (and, for a 429, a
    ``QuotaFailure``) to a Gemini error's ``details``; the other providers carry it in
    headers only.
    """
    if protocol == "anthropic_messages":
        kind = _ANTHROPIC_TYPE.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == "gemini_interactions":
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
        }
        details: list[dict[str, Any]] = []
        if status == 429:
            violation = {"quotaMetric": "callgate-mock/requests", "quotaId": "callgate-mock"}
            details.append(
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
            )
        if retry_after is not None:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{retry_after}s",
                }
            )
        if details:
            error["details"] = details
        return {"error": error}
    kind = _OPENAI_TYPE.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
