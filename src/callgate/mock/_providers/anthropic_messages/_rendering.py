"""Anthropic Messages in the mock:
a scripted turn on the wire, through the room's ``_render`` seam.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...._errors import CallgateError
from ....anthropic_messages import Parser, Turn, _render
from .._kit import Ids, RenderedTurn, ScriptTurn, arguments, usage
from . import _hosted as hosted
from ._checks import emitted_index

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore


_THINKING = frozenset({"thinking", "redacted_thinking"})


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
