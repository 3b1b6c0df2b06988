"""Builders of OpenAI Responses wire events and SSE bytes for the tests (and the fixtures).

Shapes follow the SDK models of openai 3.57.0 (every required field present, so the SDK
accepts them with ``_strict_response_validation=True``).
"""

from __future__ import annotations

import copy
from typing import Any

from .. import wire as shared

USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 5},
    "total_tokens": 30,
}


def response(rid: str, status: str, output: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": 1764000000,
        "model": "gpt-test",
        "status": status,
        "output": copy.deepcopy(output or []),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if status == "completed":
        body["usage"] = dict(USAGE)
    return body


def fc_item(
    item_id: str | None,
    call_id: str,
    name: str,
    arguments: str,
    status: str = "completed",
    **extra: Any,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }
    if item_id is not None:
        item["id"] = item_id
    item.update(extra)
    return item


def message_item(item_id: str, text: str, status: str = "completed", **extra: Any) -> dict:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": status,
        "content": [{"type": "output_text", "text": text, "annotations": []}] if text else [],
        **extra,
    }


def reasoning_item(item_id: str, summary: str, encrypted: str | None = "gAAAA-opaque") -> dict:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": summary}] if summary else [],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


class Stream:
    """Appends events with increasing ``sequence_number``; high-level helpers per item."""

    def __init__(self, rid: str = "resp_test", seq: int = 0) -> None:
        self.rid = rid
        self.seq = seq
        self.events: list[dict[str, Any]] = []
        self.done_items: dict[int, dict[str, Any]] = {}

    def ev(self, type_: str, **fields: Any) -> dict[str, Any]:
        event = {"type": type_, **fields, "sequence_number": self.seq}
        self.seq += 1
        self.events.append(event)
        return event

    # lifecycle
    def created(self) -> Stream:
        self.ev("response.created", response=response(self.rid, "in_progress"))
        self.ev("response.in_progress", response=response(self.rid, "in_progress"))
        return self

    def output(self) -> list[dict[str, Any]]:
        return [self.done_items[i] for i in sorted(self.done_items)]

    def completed(self, output: list[dict[str, Any]] | None = None) -> Stream:
        out = self.output() if output is None else output
        self.ev("response.completed", response=response(self.rid, "completed", out))
        return self

    # items
    def added(self, index: int, item: dict[str, Any]) -> None:
        start = copy.deepcopy(item)
        start["status"] = "in_progress"
        if start["type"] == "function_call":
            start["arguments"] = ""
        if start["type"] == "message":
            start["content"] = []
        if start["type"] == "reasoning":
            start["summary"] = []
        self.ev("response.output_item.added", output_index=index, item=start)

    def item_done(self, index: int, item: dict[str, Any]) -> None:
        self.done_items[index] = item
        self.ev("response.output_item.done", output_index=index, item=copy.deepcopy(item))

    def call(self, index: int, item: dict[str, Any], chunks: list[str] | None = None) -> Stream:
        """added, deltas, .done, item done for one function call (not interleaved)."""
        self.added(index, item)
        iid = item.get("id")
        for piece in chunks if chunks is not None else [item["arguments"]]:
            self.ev(
                "response.function_call_arguments.delta",
                item_id=iid,
                output_index=index,
                delta=piece,
            )
        self.ev(
            "response.function_call_arguments.done",
            item_id=iid,
            output_index=index,
            arguments=item["arguments"],
        )
        self.item_done(index, item)
        return self

    def message(self, index: int, item: dict[str, Any], chunks: list[str] | None = None) -> Stream:
        self.added(index, item)
        iid = item["id"]
        for ci, part in enumerate(item["content"]):
            text = part["text"]
            empty = {"type": "output_text", "text": "", "annotations": []}
            self.ev(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=ci,
                part=empty,
            )
            for piece in chunks if chunks is not None else [text]:
                self.ev(
                    "response.output_text.delta",
                    item_id=iid,
                    output_index=index,
                    content_index=ci,
                    delta=piece,
                    logprobs=[],
                )
            self.ev(
                "response.output_text.done",
                item_id=iid,
                output_index=index,
                content_index=ci,
                text=text,
                logprobs=[],
            )
            self.ev(
                "response.content_part.done",
                item_id=iid,
                output_index=index,
                content_index=ci,
                part=copy.deepcopy(part),
            )
        self.item_done(index, item)
        return self

    def reasoning(self, index: int, item: dict[str, Any]) -> Stream:
        self.added(index, item)
        iid = item["id"]
        for si, part in enumerate(item["summary"]):
            ids = {"item_id": iid, "output_index": index, "summary_index": si}
            self.ev(
                "response.reasoning_summary_part.added",
                **ids,
                part={"type": "summary_text", "text": ""},
            )
            half = len(part["text"]) // 2
            for piece in (part["text"][:half], part["text"][half:]):
                self.ev("response.reasoning_summary_text.delta", **ids, delta=piece)
            self.ev("response.reasoning_summary_text.done", **ids, text=part["text"])
            self.ev("response.reasoning_summary_part.done", **ids, part=copy.deepcopy(part))
        self.item_done(index, item)
        return self

    def to_bytes(self, *, crlf: bool = False, event_lines: bool = True) -> bytes:
        return sse(self.events, crlf=crlf, event_lines=event_lines)


def sse(events: list[dict[str, Any]], *, crlf: bool = False, event_lines: bool = True) -> bytes:
    return shared.sse(events, name_key="type" if event_lines else None, crlf=crlf)


def parallel_calls_stream(n_calls: int, n_deltas: int, rid: str = "resp_bench") -> Stream:
    """``n_calls`` function calls whose one-character deltas are interleaved round-robin."""
    s = Stream(rid).created()
    items = []
    for i in range(n_calls):
        args = '{"q":"' + "x" * max(0, n_deltas - 8) + '"}'
        items.append(fc_item(f"fc_{i}", f"call_{i}", f"tool_{i}", args))
        s.added(i, items[i])
    for pos in range(max(len(item["arguments"]) for item in items)):
        for i, item in enumerate(items):
            if pos < len(item["arguments"]):
                s.ev(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=i,
                    delta=item["arguments"][pos],
                )
    for i, item in enumerate(items):
        s.ev(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=i,
            arguments=item["arguments"],
        )
        s.item_done(i, item)
    return s.completed()
