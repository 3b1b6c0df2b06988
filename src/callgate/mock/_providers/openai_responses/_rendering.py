"""OpenAI Responses in the mock:
a scripted turn on the wire, through the room's ``_render`` seam.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ....openai_responses import _render
from .._kit import Ids, Rendered, RenderedTurn, ScriptTurn, arguments, usage
from . import _hosted as hosted
from ._checks import emitted_index

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore


_TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})


# What the renderer can send: the three stream terminals (queued, in_progress and
# cancelled belong to background mode, which the mock does not serve).
STATUSES = ("completed", "incomplete", "failed")


def render_options(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The request's ``include`` values that change the rendering, sorted."""
    include = body.get("include")
    if not include or not isinstance(include, list):
        return ()
    return tuple(sorted({v for v in include if isinstance(v, str)} & hosted.RENDER_INCLUDES))


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    return render_with(turn, ids, stream, model, stored, baseline, ())


def render_with(
    turn: ScriptTurn,
    ids: Ids,
    stream: bool,
    model: str,
    stored: bool,
    baseline: str,
    include: tuple[str, ...],
) -> RenderedTurn:
    respond = turn.respond
    response_id = ids("resp_", "response")
    items: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning")
    if reasoning is not None:
        item = {"type": "reasoning", "id": ids("rs_", "reasoning"),
                "summary": [reasoning.get("summary", "")]}  # fmt: skip
        if reasoning.get("signature"):
            item["encrypted_content"] = reasoning["signature"]
        items.append(item)
    steps, cites = hosted.hosted_items(respond, ids, include)
    items.extend(steps)
    if "text" in respond:
        message = {"type": "message", "id": ids("msg_", "message"), "text": respond["text"]}
        if "hosted" in respond:
            message["text"], message["annotations"] = hosted.cited_text(respond["text"], cites)
        items.append(message)
    calls: list[tuple[str, str]] = []
    for n, spec in enumerate(respond.get("calls", [])):
        call_id = spec.get("id") or ids("call_", "call", n)
        calls.append((call_id, spec["name"]))
        items.append({"type": "function_call", "id": ids("fc_", "item", n), "call_id": call_id,
                      "name": spec["name"], "arguments": arguments(spec)})  # fmt: skip
    status = respond.get("status", "completed")
    counts = usage(respond.get("usage"), "input_tokens", "output_tokens")
    metered = hosted.tool_usage(respond, baseline)
    if not stream:
        body = _render.render_body(
            response_id=response_id, model=model, items=items, status=status, usage=counts,
            tool_usage=metered,
        )  # fmt: skip
        return RenderedTurn(response_id, tuple(calls), [], body)
    events = _render.render_events(
        response_id=response_id, model=model, items=items, status=status,
        split=turn.splitter(), interleave=respond.get("interleave") == "round_robin",
        usage=counts, baseline=baseline, tool_usage=metered,
    )  # fmt: skip
    return RenderedTurn(response_id, tuple(calls), events, None)


def _event_name(event: Mapping[str, Any]) -> str:
    return str(event["type"])


def final_from_stream(rendered: Rendered) -> dict[str, Any] | None:
    """The terminal event's ``response``: the complete Response object of a stream."""
    if rendered.events and rendered.events[-1].get("type") in _TERMINALS:
        response: dict[str, Any] = rendered.events[-1]["response"]
        return response
    return None


def emitted_items(rendered: Rendered) -> list[dict[str, Any]]:
    """The output items the client received (complete items only, in output order)."""
    if rendered.body is not None:
        return list(rendered.body.get("output", ()))
    final = final_from_stream(rendered)
    if final is not None:
        return list(final.get("output", ()))
    done = [e for e in rendered.events if e.get("type") == "response.output_item.done"]
    return [e["item"] for e in sorted(done, key=lambda e: e.get("output_index", 0))]


def index(store: SessionStore, record: Record) -> None:
    """Index a record's output items by id, and the item after each reasoning item."""
    items = emitted_items(record.received)
    found = emitted_index(store)
    for position, item in enumerate(items):
        item_id = item.get("id")
        if not isinstance(item_id, str):
            continue
        found.items[item_id] = item
        found.owner[item_id] = record.id
        if item.get("type") == "reasoning":
            following = items[position + 1] if position + 1 < len(items) else None
            found.followers[item_id] = following
