"""Anthropic Messages: everything the mock knows about this provider.

Auth (``x-api-key`` or a bearer token, and ``anthropic-version``), the create route, the
request view, rendering through the room's ``_render`` seam, error bodies,
``anthropic-ratelimit-*`` headers, the in-stream error event, truncation, the native
checks (:mod:`._checks`) and the index of emitted thinking blocks,
read back from the bytes the client received by the room's own parser. Message threads
(beta ``message-threads-2026-08-12``, :mod:`._threads`): a ``thread``
request needs the beta header and is resolved before the checks; the only route besides
the create is the mock's own thread-expiry control route.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from ...._errors import CallgateError
from ....anthropic_messages import Parser, Turn, _render
from .._kit import (
    BaseUrl,
    Endpoint,
    Event,
    FunctionResult,
    Host,
    Ids,
    Provider,
    RenderedTurn,
    Reply,
    RequestView,
    ScriptTurn,
    arguments,
    bearer,
    cut_deltas,
    header,
    last_text,
    list_of,
    texts,
    tool_names,
    usage,
)
from .._request_valid import SWITCHES, validator
from . import _aux as aux
from . import _hosted as hosted
from . import _hosted_checks as hosted_checks
from ._checks import check, emitted_index
from ._threads import expire_route, require_beta, resolve_thread

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore

__all__ = ["PROVIDER"]

PROTOCOL_NAME = "anthropic_messages"
CHECKS = (
    SWITCHES[PROTOCOL_NAME],
    "anthropic_tool_use_has_result",
    "anthropic_tool_result_first",
    "anthropic_tool_result_has_tool_use",
    "anthropic_thinking_signature",
    "anthropic_thinking_kept",
    *hosted_checks.CHECKS,
)
_THINKING = frozenset({"thinking", "redacted_thinking"})


def auth(request: Request) -> Reply | None:
    if not (header(request, b"x-api-key") or bearer(request)):
        return Reply(401, error_body(401, "x-api-key header is required"))
    if not header(request, b"anthropic-version"):
        return Reply(400, error_body(400, "anthropic-version: header is required"))
    return None


# -- errors -----------------------------------------------------------------------------------

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _TYPES.get(status, "api_error"), "message": message}}


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error; a 429 carries ``anthropic-ratelimit-*`` headers."""
    headers: dict[str, str] = {}
    if retry is not None:
        headers["retry-after"] = str(retry)
    if status == 429:
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        seconds = retry if retry is not None else 1
        reset = (now + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for kind, limit in (("requests", "50"), ("tokens", "100000"),
                            ("input-tokens", "80000"), ("output-tokens", "20000")):  # fmt: skip
            prefix = f"anthropic-ratelimit-{kind}"
            headers |= {f"{prefix}-limit": limit, f"{prefix}-remaining": "0",
                        f"{prefix}-reset": reset}  # fmt: skip
    return Reply(status, error_body(status, message), headers)


# -- the request view -------------------------------------------------------------------------


def view(body: Mapping[str, Any]) -> RequestView:
    messages = [m for m in list_of(body.get("messages")) if isinstance(m, dict)]
    groups: list[list[str]] = []
    results = []
    names: dict[str, str] = {}  # tool_use id -> name, from the assistant turns replayed
    for message in messages:
        if message.get("role") == "user":
            groups.append(texts(message.get("content")))
        elif message.get("role") == "assistant":
            for block in list_of(message.get("content")):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call_id, name = block.get("id"), block.get("name")
                    if isinstance(call_id, str) and isinstance(name, str):
                        names[call_id] = name
    found = [text for group in groups for text in group]
    last = messages[-1] if messages else {}
    if last.get("role") == "user":
        for block in list_of(last.get("content")):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                results.append(
                    FunctionResult(
                        call_id, names.get(call_id) if isinstance(call_id, str) else None,
                        block.get("content"), block.get("is_error") is True,
                    )
                )  # fmt: skip
    system = body.get("system")
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(found),
        instructions="\n".join(texts(system)) if system is not None else None,
        last_user_text=last_text(groups),
    )


# -- rendering --------------------------------------------------------------------------------


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    respond = turn.respond
    message_id = ids("msg_", "message")
    blocks: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning")
    if reasoning is not None:
        blocks.append({"type": "thinking", "thinking": reasoning.get("summary", ""),
                       "signature": reasoning.get("signature", "")})  # fmt: skip
    if "text" in respond:
        blocks.append({"type": "text", "text": respond["text"]})
    server_blocks, server_use, container = hosted.render_hosted(respond, ids)
    blocks.extend(server_blocks)
    calls: list[tuple[str, str]] = []
    specs = respond.get("calls", [])
    for n, spec in enumerate(specs):
        call_id = spec.get("id") or ids("toolu_", "call", n)
        calls.append((call_id, spec["name"]))
        blocks.append({"type": "tool_use", "id": call_id, "name": spec["name"],
                       "input_json": arguments(spec, as_object=not stream)})  # fmt: skip
    stop = respond.get("status", "tool_use" if specs else "end_turn")
    counts: dict[str, Any] = usage(respond.get("usage"), "input_tokens", "output_tokens")
    if server_use is not None:
        counts["server_tool_use"] = server_use
    if not stream:
        body = _render.render_body(message_id=message_id, model=model, blocks=blocks,
                                   stop_reason=stop, usage=counts, container=container)  # fmt: skip
        return RenderedTurn(message_id, tuple(calls), [], body)
    events = _render.render_events(
        message_id=message_id, model=model, blocks=blocks, stop_reason=stop,
        split=turn.splitter(), usage=counts, container=container,
    )  # fmt: skip
    return RenderedTurn(message_id, tuple(calls), events, None)


def _event_name(event: Mapping[str, Any]) -> str:
    return str(event["type"])


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is a ``tool_use`` block; the terminal is the ``message_delta`` with the stop
    reason (``message_stop`` follows it)."""
    kind, index = event["type"], event.get("index")
    if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
        return (("start", index),)
    if kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
        return (("delta", index),)
    if kind == "content_block_stop":
        return (("done", index),)
    return (("terminal", None),) if kind == "message_delta" else ()


# -- stream faults ----------------------------------------------------------------------------


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {k: fault[k] for k in ("error_type", "code") if k in fault}
    return _render.render_error_event(message=fault.get("message"), **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut a ``tool_use`` block's ``partial_json`` after ``keep`` chars; stop on
    ``max_tokens``."""
    starts = [
        e
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    ]
    index = starts[fault.get("call", 0)]["index"]
    out = cut_deltas(
        events,
        lambda e: e["type"] == "content_block_delta" and e["index"] == index
        and e["delta"]["type"] == "input_json_delta",
        lambda e: str(e["delta"]["partial_json"]),
        lambda e, text: {**e, "delta": {"type": "input_json_delta", "partial_json": text}},
        fault.get("keep"),
    )  # fmt: skip
    counts: dict[str, Any] = next((e["usage"] for e in events if e["type"] == "message_delta"), {})
    out.append({"type": "content_block_stop", "index": index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": counts,
        }
    )
    out.append({"type": "message_stop"})
    return out


# -- what was emitted -------------------------------------------------------------------------


_READ: dict[bytes, tuple[dict[str, Any], ...]] = {}  # stream bytes -> the blocks read


def emitted_blocks(record: Record) -> tuple[dict[str, Any], ...]:
    """The content blocks the client received, as the room's parser reads them (a cut or
    failed stream gives its partial turn's blocks)."""
    received = record.received
    if received.body is not None:
        return tuple(received.body.get("content", ()))
    # Every session replays the same rendered turns: read each stream once (bounded).
    found = _READ.get(received.sse)
    if found is None:
        if len(_READ) >= 256:
            _READ.clear()  # fault plans make new streams: keep the memo bounded
        found = _READ[received.sse] = _read(received.sse)
    return found


def _read(sse: bytes) -> tuple[dict[str, Any], ...]:
    parser = Parser()
    turn: Turn | None
    try:
        parser.feed_bytes(sse)
        turn = parser.finish()
    except CallgateError as exc:
        turn = exc.turn if isinstance(exc.turn, Turn) else None
    return turn.content if turn is not None else ()


def index(store: SessionStore, record: Record) -> None:
    """Index the (signature, thinking) pairs emitted, and whether each tool use's message
    started with thinking."""
    blocks = emitted_blocks(record)
    starts_with_thinking = bool(blocks) and blocks[0].get("type") in _THINKING
    found = emitted_index(store)
    for block in blocks:
        if block.get("type") == "thinking":
            found.thinking.add((str(block.get("signature", "")), str(block.get("thinking", ""))))
        elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            found.thinking_first[block["id"]] = starts_with_thinking


def _check(store: SessionStore, body: dict[str, Any], on: Any) -> Reply | None:
    return resolve_thread(store, body, error_body, emitted_blocks) or check(store, body, on)


def _request_body(request: Request, body: dict[str, Any]) -> dict[str, Any] | Reply:
    return require_beta(request, body, error_body) or body


def _routes(host: Host) -> list[Route]:
    return [expire_route(host, error_body)]


PROVIDER = Provider(
    protocol="anthropic_messages",
    prefixes=("/anthropic/",),
    endpoints=(Endpoint("/anthropic/v1/messages", auth, ("/anthropic/v1/messages",)),),
    state_routes=_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"overloaded_529", "argument_deltas"}),
    fault_roles=fault_roles,
    object_arguments=True,
    checks=CHECKS,
    check=hosted_checks.checking(_check),
    validate=validator(PROTOCOL_NAME),
    validate_switch=SWITCHES[PROTOCOL_NAME],
    index=hosted_checks.indexing(index),
    respond_keys=frozenset({"hosted"}),
    check_respond=hosted.check_respond,
    request_body=_request_body,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, error_body),
    base_urls=(
        BaseUrl(
            "Anthropic Messages",
            "anthropic SDKs Anthropic(base_url=...)",
            "/anthropic",
            "/v1/messages",
        ),
        BaseUrl(
            "Anthropic Messages",
            "clients wanting the version segment (Vercel AI SDK createAnthropic baseURL)",
            "/anthropic/v1",
            "/messages",
        ),
    ),
    server_bases=(("anthropic_base_url", "/anthropic"),),
)
