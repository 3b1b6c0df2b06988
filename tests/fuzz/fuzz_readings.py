"""Independent readings for the mutation fuzzer: which calls a plain reader would release.

Each reader is deliberately small and written from the wire contracts (and the official
SDKs' accumulators), not from callgate's code. It may release MORE than callgate (it skips
many checks); the fuzzer's oracle is one-directional: every call callgate releases must be
one of the calls the reader releases for the same input.

A call is ``(call_id, name, canon(arguments))`` where :func:`canon` is a type-tagged form
(so ``1``, ``1.0`` and ``true`` differ). Readers never raise: unreadable input releases
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

Call = tuple[str, str, Any]
Event = dict[str, Any] | str  # a JSON object, or the literal "[DONE]"
DONE = "[DONE]"


def canon(value: Any, depth: int = 0) -> Any:
    """A hashable, type-tagged form of a JSON value (nesting past 200 matches nothing:
    far beyond any bound callgate accepts)."""
    kind = type(value)
    if depth > 200:
        return ("deep", id(value))
    if kind is dict:
        return ("d", tuple(sorted((repr(k), canon(v, depth + 1)) for k, v in value.items())))
    if kind is list or kind is tuple:  # a tuple is a JSON array (as in canonical_bytes)
        return ("list", tuple(canon(v, depth + 1) for v in value))
    if kind is int:
        return ("int", hex(value))  # hex has no digit limit
    if kind in (str, float, bool) or value is None:
        return (kind.__name__, repr(value))
    return (kind.__name__, id(value))  # not JSON: equal to nothing else


def loads(text: str | bytes) -> Any:
    """``json.loads``, or the ``_MISS`` marker when the text is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _MISS


_MISS = object()


# -- SSE, per the WHATWG event-stream rules -----------------------------------------------


def sse_events(data: bytes) -> list[tuple[str | None, str]] | None:
    """``(event name, data)`` of the complete events in ``data``; ``None`` if it is not
    UTF-8. Lines end at CRLF, CR or LF; a trailing event without its blank line is
    discarded (the spec drops pending data at end of stream)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines.pop()  # the text after the last line end is not a complete line
    out: list[tuple[str | None, str]] = []
    buf: list[str] = []
    name: str | None = None
    for line in lines:
        if not line:
            if buf:
                out.append((name, "\n".join(buf)))
            buf, name = [], None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            buf.append(value)
        elif field == "event":
            name = value
    return out


def decode_events(data: bytes) -> list[Event] | None:
    """SSE bytes to events; ``None`` when any payload is neither JSON nor ``[DONE]``."""
    payloads = sse_events(data)
    if payloads is None:
        return None
    events: list[Event] = []
    for _name, text in payloads:
        if text == DONE:
            events.append(DONE)
            continue
        obj = loads(text)
        if obj is _MISS:
            return None
        events.append(obj)
    return events


# -- small accessors ----------------------------------------------------------------------


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if type(obj) is not dict:
            return None
        obj = obj.get(key)
    return obj


def _text(obj: Any, *path: str) -> str | None:
    value = _get(obj, *path)
    return value if type(value) is str else None


def _object_args(text: Any) -> Any:
    """JSON text that parses to an object, as that object; else the miss marker."""
    if type(text) is not str:
        return _MISS
    obj = loads(text)
    return obj if type(obj) is dict else _MISS


def _call(call_id: Any, name: Any, args: Any) -> list[Call]:
    if type(call_id) is str and type(name) is str and type(args) is dict:
        return [(call_id, name, canon(args))]
    return []


def _objects(events: Iterable[Event]) -> list[dict[str, Any]] | None:
    """The events before the first ``[DONE]``; ``None`` if one is not an object."""
    out: list[dict[str, Any]] = []
    for ev in events:
        if ev == DONE:
            break
        if type(ev) is not dict:
            return None
        out.append(ev)
    return out


# -- OpenAI Responses ---------------------------------------------------------------------

_OPENAI_BAD = frozenset({"error", "response.failed", "response.incomplete"})


def openai_body(body: Any) -> list[Call]:
    """A Response object: ``status == "completed"`` with no ``error`` object, its
    ``function_call`` output items."""
    if _get(body, "status") != "completed" or _get(body, "error") is not None:
        return []
    output = _get(body, "output")
    if type(output) is not list:
        return []
    calls: list[Call] = []
    for item in output:
        if _get(item, "type") == "function_call":
            args = _object_args(_get(item, "arguments"))
            calls += _call(_get(item, "call_id"), _get(item, "name"), args)
    return calls


def openai_stream(events: list[Event]) -> list[Call]:
    """The stream ends with ``response.completed`` and has no error/failed/incomplete
    event, and no event with a truthy top-level ``error`` (the SDK raises ``APIError`` on
    one); the calls are those of the completed Response."""
    objs = _objects(events)
    if not objs or any(_text(o, "type") in _OPENAI_BAD or o.get("error") for o in objs):
        return []
    last = objs[-1]
    if _get(last, "type") != "response.completed":
        return []
    return openai_body(_get(last, "response"))


# -- Anthropic Messages -------------------------------------------------------------------


def anthropic_body(body: Any) -> list[Call]:
    """A Message: ``stop_reason == "tool_use"``, its ``tool_use`` blocks."""
    if _get(body, "stop_reason") != "tool_use":
        return []
    content = _get(body, "content")
    if type(content) is not list:
        return []
    calls: list[Call] = []
    for block in content:
        if _get(block, "type") == "tool_use":
            calls += _call(_get(block, "id"), _get(block, "name"), _get(block, "input"))
    return calls


def anthropic_stream(events: list[Event]) -> list[Call]:
    """Accumulate like the SDK: the message of ``message_start``, blocks by ``index``,
    tool input from the joined ``input_json_delta`` fragments (the start block's input if
    none), ``stop_reason`` from each ``message_delta.delta``. Release when the final stop
    reason is ``tool_use``, the last non-ping event is ``message_stop`` and no ``error``
    event was seen."""
    objs = _objects(events)
    if objs is None:
        return []
    objs = [o for o in objs if _get(o, "type") != "ping"]
    if not objs or _get(objs[-1], "type") != "message_stop":
        return []
    message = _get(objs[0], "message") if _get(objs[0], "type") == "message_start" else None
    if type(message) is not dict:
        return []
    stop_reason = message.get("stop_reason")
    start = message.get("content")
    blocks: dict[Any, Any] = dict(enumerate(start)) if type(start) is list else {}
    fragments: dict[Any, list[str]] = {}
    for obj in objs[1:]:
        kind = obj.get("type")
        if kind == "error":
            return []
        if kind == "content_block_start":
            blocks[_key(obj.get("index"))] = obj.get("content_block")
        elif kind == "content_block_delta" and _get(obj, "delta", "type") == "input_json_delta":
            part = _get(obj, "delta", "partial_json")
            if type(part) is str:
                fragments.setdefault(_key(obj.get("index")), []).append(part)
        elif kind == "message_delta":
            stop_reason = _get(obj, "delta", "stop_reason")
    if stop_reason != "tool_use":
        return []
    calls: list[Call] = []
    for index, block in blocks.items():
        if _get(block, "type") != "tool_use":
            continue
        joined = "".join(fragments.get(index, []))
        args = _object_args(joined) if joined else _get(block, "input")
        calls += _call(_get(block, "id"), _get(block, "name"), args)
    return calls


# -- Gemini Interactions ------------------------------------------------------------------


def gemini_body(body: Any) -> list[Call]:
    """An Interaction: ``status == "requires_action"``, its ``function_call`` steps."""
    if _get(body, "status") != "requires_action":
        return []
    steps = _get(body, "steps")
    if type(steps) is not list:
        return []
    calls: list[Call] = []
    for step in steps:
        if _get(step, "type") == "function_call":
            args = _get(step, "arguments")
            calls += _call(_get(step, "id"), _get(step, "name"), {} if args is None else args)
    return calls


def gemini_stream(events: list[Event]) -> list[Call]:
    """Events whose ``event_id`` repeats an earlier one are replays and skipped. Steps by
    ``index``; arguments from the joined ``arguments_delta`` strings (the start step's
    object if none). Release when the last event is ``interaction.completed`` with
    status ``requires_action`` and no ``error`` event was seen."""
    objs = _objects(events)
    if objs is None:
        return []
    seen: set[Any] = set()
    fresh: list[dict[str, Any]] = []
    for obj in objs:
        event_id = obj.get("event_id")
        if type(event_id) in (str, int, float, bool):
            if event_id in seen:
                continue
            seen.add(event_id)
        fresh.append(obj)
    if not fresh or any(o.get("event_type") == "error" for o in fresh):
        return []
    last = fresh[-1]
    if last.get("event_type") != "interaction.completed":
        return []
    if _get(last, "interaction", "status") != "requires_action":
        return []
    steps: dict[Any, Any] = {}
    fragments: dict[Any, list[str]] = {}
    for obj in fresh:
        kind, index = obj.get("event_type"), _key(obj.get("index"))
        if kind == "step.start":
            steps[index] = obj.get("step")
            fragments.pop(index, None)
        elif kind == "step.delta" and _get(obj, "delta", "type") == "arguments_delta":
            part = _get(obj, "delta", "arguments")
            if type(part) is str:
                fragments.setdefault(index, []).append(part)
    calls: list[Call] = []
    for index, step in steps.items():
        if _get(step, "type") != "function_call":
            continue
        joined = "".join(fragments.get(index, []))
        args = _object_args(joined) if joined else _get(step, "arguments")
        calls += _call(_get(step, "id"), _get(step, "name"), {} if args is None else args)
    return calls


def _key(value: Any) -> Any:
    """A dict key for any value; an unhashable one matches no other."""
    return value if type(value) in (int, str, float, bool) or value is None else ("?", id(value))


READERS: dict[str, tuple[Callable[[list[Event]], list[Call]], Callable[[Any], list[Call]]]] = {
    "openai_responses": (openai_stream, openai_body),
    "anthropic_messages": (anthropic_stream, anthropic_body),
    "gemini_interactions": (gemini_stream, gemini_body),
}
