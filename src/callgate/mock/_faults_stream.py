"""Stream faults: a rendered turn's wire events -> the frames that actually leave.

Each fault is a pure function of the turn's events (dicts, as the protocol renderer made
them) and its spec; the result is the frames to send and whether to hold the connection
open afterwards. What differs per provider (its error event, its truncated terminal, how
an event is named and framed) comes from the turn's :class:`~._providers.Provider`; the
protocol renderers stay fault-free.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ._providers import provider
from ._providers._kit import cut

__all__ = ["POINT_KEYS", "Faulted", "cut", "fault_position", "plan_stream"]

Event = dict[str, Any]
# Where a fault strikes, by name instead of by event count ``after``.
POINT_KEYS = ("after_call", "after_argument_deltas", "before_terminal")


@dataclasses.dataclass(frozen=True, slots=True)
class Faulted:
    """The frames to send, in order, whether the stream then stays open, and the events
    those frames carry (a malformed frame carries none) -- what the client received."""

    frames: tuple[bytes, ...]
    hold: bool = False
    events: tuple[Event, ...] = ()


def _plan(protocol: str, events: Sequence[Event], hold: bool = False) -> Faulted:
    encode = provider(protocol).encode
    return Faulted(tuple(encode([e]) for e in events), hold, tuple(events))


def plan_stream(protocol: str, events: Sequence[Event], fault: Mapping[str, Any]) -> Faulted:
    """Apply one validated stream ``fault`` to ``events`` (never mutated)."""
    kind = fault["type"]
    after = fault_position(protocol, events, fault)
    if after is None:  # check_faults and fits rule this out; never a 500 if they missed one
        after = len(events)
    if kind in ("disconnect", "never_end"):
        return _plan(protocol, events[:after], hold=kind == "never_end")
    if kind == "error_event":
        sent = list(events[:after])
        sent.append(provider(protocol).error_event(sent, fault))
        return _plan(protocol, sent)
    if kind == "malformed":
        plan = _plan(protocol, events)
        frames = list(plan.frames)
        name = provider(protocol).event_name(events[after]) if after < len(events) else "message"
        data = fault.get("data", '{"callgate_malformed": "this frame is cut sh')
        # Written verbatim: line breaks in ``data`` break the framing too, and lone
        # surrogates become the invalid UTF-8 bytes they escape.
        head = f"event: {name}\n" if name else ""  # a wire without event names: data only
        frame = f"{head}data: {data}\n\n".encode("utf-8", "surrogateescape")
        frames.insert(after, frame)
        return Faulted(tuple(frames), events=plan.events)
    if kind == "duplicate":
        out = list(events)
        if after:  # an empty stream has nothing to re-send
            again = copy.deepcopy(events[after - 1])
            if fault.get("payload", "same") == "different":
                _alter(again)
            out.insert(after, again)
        return _plan(protocol, out)
    if kind == "out_of_order":
        out = list(events)
        i = min(after, len(out) - 2)
        if i >= 0:
            out[i], out[i + 1] = out[i + 1], out[i]
        return _plan(protocol, out)
    if kind == "truncate":
        return _plan(protocol, provider(protocol).truncate(list(events), fault))
    raise ValueError(f"not a stream fault: {kind!r}")  # check_fault rules this out


def _alter(event: Event) -> None:
    """Change a replayed event's payload while keeping its ``event_id``."""
    delta = event.get("delta")
    if isinstance(delta, dict):
        for key in ("text", "arguments"):
            if isinstance(delta.get(key), str):
                delta[key] += " (replayed differently)"
                return
    event["callgate_replayed"] = True


@dataclasses.dataclass(slots=True)
class _Call:
    start: int
    deltas: list[int]
    done: int | None


def fault_position(protocol: str, events: Sequence[Event], fault: Mapping[str, Any]) -> int | None:
    """How many events leave before ``fault`` strikes, or ``None`` if its named point is
    not in ``events`` (no call ``after_call``, fewer argument deltas, no terminal).

    ``after_call: i`` strikes once call ``i`` (in stream order) is complete;
    with ``after_argument_deltas: k``, after that call's ``k``-th argument piece (``0``:
    right after its start); ``before_terminal: true`` just before the terminal event.
    Without a point: ``after`` events (capped at the stream's end), by default all.
    """
    if not any(key in fault for key in POINT_KEYS):
        after: int = fault.get("after", len(events))
        return min(after, len(events))
    roles = provider(protocol).fault_roles
    calls: dict[Any, _Call] = {}
    order: list[Any] = []
    terminal = None
    for position, event in enumerate(events):
        for role, key in roles(event):
            if role in ("start", "whole"):
                calls[key] = _Call(position, [], position if role == "whole" else None)
                order.append(key)
            elif role == "delta" and key in calls:
                calls[key].deltas.append(position)
            elif role == "done" and key in calls:
                calls[key].done = position
            elif role == "terminal" and terminal is None:
                terminal = position
    if fault.get("before_terminal"):
        return terminal
    number = fault["after_call"]
    if number >= len(order):
        return None
    call = calls[order[number]]
    if "after_argument_deltas" not in fault:
        return None if call.done is None else call.done + 1
    pieces = fault["after_argument_deltas"]
    if pieces == 0:
        return call.start + 1
    return call.deltas[pieces - 1] + 1 if pieces <= len(call.deltas) else None
