"""OpenAI Chat Completions in the mock: a scripted turn on the wire, through the room's
``_render`` seam.

Streamed: the room's chunks (a role chunk, content pieces, each call's first delta and
its argument fragments, the finish chunk), ``refusal`` pieces after the role chunk, the
usage chunk (empty ``choices``) only when the request asked for it with
``stream_options.include_usage``, then ``data: [DONE]`` -- carried as one sentinel event
(:data:`DONE_EVENT`) so faults can cut or replace it like any other event. Not streamed:
one ``chat.completion`` body, usage always present. ``respond.status`` is the choice's
``finish_reason`` (default ``tool_calls`` with calls, else ``stop``); ``interleave:
"round_robin"`` sends the calls' first deltas and fragments alternately, as parallel
calls arrive from a model that streams them together. A request's ``n`` gives that many
choices (:mod:`._choices`: their chunks take turns, one usage chunk and ``[DONE]`` end
the answer); ``respond.profile`` serves a compatibility profile's quirks
(:mod:`._quirks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ....openai_chat_completions import _render
from .._kit import Event, Ids, RenderedTurn, ScriptTurn, arguments, usage
from ._choices import answers, interleave, n_option, requested_n
from ._quirks import WHOLE, finish_reason, relaxes, serve_stream

__all__ = [
    "DONE_EVENT",
    "INCLUDE_USAGE",
    "STATUSES",
    "encode",
    "event_name",
    "is_done",
    "render",
    "render_options",
    "render_with",
]

STATUSES: Final = ("stop", "length", "tool_calls", "content_filter", "function_call")
INCLUDE_USAGE: Final = "include_usage"
_SENTINEL: Final = "callgate_sentinel"
DONE_EVENT: Final[Mapping[str, str]] = {_SENTINEL: "[DONE]"}
_DONE_FRAME: Final = b"data: [DONE]\n\n"


def is_done(event: Mapping[str, Any]) -> bool:
    return event.get(_SENTINEL) == "[DONE]"


def encode(events: Sequence[Mapping[str, Any]]) -> bytes:
    """``data: <chunk>`` per chunk; the sentinel event is ``data: [DONE]``."""
    return b"".join(
        _DONE_FRAME if is_done(e) else _render.encode_sse([dict(e)], done=False) for e in events
    )


def event_name(event: Mapping[str, Any]) -> str:
    return ""  # data-only frames: Chat Completions names no events


def render_options(body: Mapping[str, Any]) -> tuple[str, ...]:
    options = body.get("stream_options")
    usage = isinstance(options, dict) and options.get("include_usage") is True
    return ((INCLUDE_USAGE,) if usage else ()) + n_option(body)


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    return render_with(turn, ids, stream, model, stored, baseline, ())


def _counts(given: Mapping[str, int] | None) -> dict[str, int]:
    counts: dict[str, int] = usage(given, "prompt_tokens", "completion_tokens")
    counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
    return counts


def render_with(
    turn: ScriptTurn,
    ids: Ids,
    stream: bool,
    model: str,
    stored: bool,
    baseline: str,
    options: tuple[str, ...],
) -> RenderedTurn:
    respond = turn.respond
    split = turn.splitter()
    rules = relaxes(respond)
    whole = WHOLE in rules and stream  # each call in one delta: its arguments in one piece
    completion_id = ids("chatcmpl-", "completion", size=29)
    pairs: list[tuple[str, str]] = []
    per_choice: list[tuple[dict[str, Any], Any]] = []
    for index, answer in enumerate(answers(respond, requested_n(options))):
        calls = []
        for n, spec in enumerate(answer.get("calls", [])):
            kind = "call" if index == 0 else f"choice{index}/call"
            call_id = spec.get("id") or ids("call_", kind, n)
            text = arguments(spec)
            calls.append({"id": call_id, "name": spec["name"],
                          "arguments": [text] if whole else split(text)})  # fmt: skip
            pairs.append((call_id, spec["name"]))
        text = answer.get("text", "")
        turn_args: dict[str, Any] = {
            "completion_id": completion_id,
            "model": model,
            "content": split(text) if text else (),
            "calls": calls,
            "finish_reason": finish_reason(answer.get("status"), bool(calls), rules),
        }
        per_choice.append((turn_args, answer.get("refusal")))
    counts = _counts(respond.get("usage"))
    if not stream:
        body: dict[str, Any] = {}
        for index, (turn_args, refusal) in enumerate(per_choice):
            one = _render.render_body(**turn_args, usage=counts)
            choice = one["choices"][0]
            choice["index"] = index
            if refusal is not None:
                choice["message"]["refusal"] = refusal
            if index == 0:
                body = one
            else:
                body["choices"].append(choice)
        return RenderedTurn(completion_id, tuple(pairs), [], body)
    streams = [
        _choice_chunks(index, turn_args, refusal, split, respond, rules)
        for index, (turn_args, refusal) in enumerate(per_choice)
    ]
    events: list[Event] = interleave(streams)
    if INCLUDE_USAGE in options:
        head = {key: events[0][key] for key in ("id", "object", "created", "model")}
        events.append({**head, "choices": [], "usage": counts})
    events.append(dict(DONE_EVENT))
    return RenderedTurn(completion_id, tuple(pairs), events, None)


def _choice_chunks(
    index: int,
    turn_args: dict[str, Any],
    refusal: Any,
    split: Any,
    respond: Mapping[str, Any],
    rules: frozenset[str],
) -> list[Event]:
    """One choice's chunks: the room's, its refusal pieces, a profile's quirks, then the
    round-robin order of its calls; every chunk names the choice's ``index``."""
    chunks = _render.render_chunks(**turn_args)
    if refusal is not None:
        head = chunks[0]
        pieces = [
            {**head, "choices": [{**head["choices"][0], "delta": {"refusal": piece}}]}
            for piece in split(refusal)
        ]
        chunks[1:1] = pieces
    chunks = serve_stream(chunks, rules)
    if respond.get("interleave") == "round_robin":
        chunks = _round_robin(chunks)
    if index:
        for chunk in chunks:
            chunk["choices"][0]["index"] = index
    return chunks


def call_index(chunk: Mapping[str, Any]) -> int | None:
    """The call index a chunk streams (its first tool-call delta), if any."""
    choices = chunk.get("choices")
    if not choices:
        return None
    found = choices[0].get("delta", {}).get("tool_calls")
    index = found[0].get("index") if found else None
    return index if type(index) is int else None  # a profile's whole call has none


def _round_robin(chunks: list[Event]) -> list[Event]:
    """The tool-call chunks of every call taken in turn, one at a time."""
    positions = [n for n, c in enumerate(chunks) if call_index(c) is not None]
    groups: dict[int, list[Event]] = {}
    for n in positions:
        groups.setdefault(call_index(chunks[n]) or 0, []).append(chunks[n])
    mixed: list[Event] = []
    queues = list(groups.values())
    while any(queues):
        for queue in queues:
            if queue:
                mixed.append(queue.pop(0))
    out = list(chunks)
    for n, chunk in zip(positions, mixed, strict=True):
        out[n] = chunk
    return out
