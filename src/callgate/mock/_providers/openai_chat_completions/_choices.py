"""OpenAI Chat Completions in the mock: ``n > 1`` (several choices in one answer).

A request's ``n`` (1 to 128: OpenAI's API reference, "minimum 1, maximum 128"; the request
check refuses the rest) is how many choices the answer carries. A turn answers with its
own ``text`` / ``calls`` / ``status`` / ``refusal`` repeated for every choice (each copy
with its own call ids unless ids are scripted), or with ``respond.choices``: one answer
per choice, scripted apart. A turn with ``choices`` matches only a request whose ``n`` is
their number. Streamed, every choice has its own role chunk, deltas and finish chunk, and
the choices' chunks take turns (choice 0, 1, ..., 0, 1, ...), as deltas of different
choices interleave on the wire; not streamed, ``choices[]`` in index order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._kit import Event, ScriptTurn

__all__ = [
    "ANSWER_KEYS",
    "MAX_N",
    "answers",
    "check_choices",
    "interleave",
    "n_option",
    "requested_n",
    "turn_problems",
]

MAX_N: Final = 128
ANSWER_KEYS: Final = frozenset({"text", "calls", "status", "refusal"})
_CALL_KEYS: Final = frozenset({"name", "arguments", "raw", "id"})
_N_PREFIX: Final = "n="


def _n(body: Mapping[str, Any]) -> int:
    n = body.get("n")
    return n if type(n) is int else 1


def n_option(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The render option that carries the request's ``n`` (none for one choice)."""
    n = _n(body)
    return (f"{_N_PREFIX}{min(n, MAX_N)}",) if n > 1 else ()


def requested_n(options: Sequence[str]) -> int:
    for option in options:
        if option.startswith(_N_PREFIX):
            return int(option[len(_N_PREFIX) :])
    return 1


def answers(respond: Mapping[str, Any], n: int) -> list[Mapping[str, Any]]:
    """The answer of each choice: the scripted ``choices``, else the turn's own, n times."""
    scripted = respond.get("choices")
    if isinstance(scripted, list):
        return list(scripted)
    return [respond] * n


def turn_problems(turn: ScriptTurn, body: Mapping[str, Any]) -> list[str]:
    """A turn with ``choices`` answers only a request asking for that many."""
    scripted = turn.respond.get("choices")
    if not isinstance(scripted, list) or _n(body) == len(scripted):
        return []
    return [f"the turn scripts {len(scripted)} choices, the request asks for n={_n(body)}"]


def interleave(per_choice: Sequence[Sequence[Event]]) -> list[Event]:
    """The choices' chunks taking turns, each choice's own order kept."""
    if len(per_choice) == 1:
        return list(per_choice[0])
    out: list[Event] = []
    longest = max(len(chunks) for chunks in per_choice)
    for position in range(longest):
        out += [chunks[position] for chunks in per_choice if position < len(chunks)]
    return out


def _check_call(spec: Any, where: str) -> str | None:
    if not isinstance(spec, dict) or not spec.keys() <= _CALL_KEYS:
        return f"{where} is a call: an object with name, arguments or raw, and id"
    if not isinstance(spec.get("name"), str):
        return f"{where}.name is the function's name (a string)"
    if "arguments" in spec and "raw" in spec:
        return f"{where}: give 'arguments' (an object) or 'raw' (exact text), not both"
    if "arguments" in spec:
        if not isinstance(spec["arguments"], dict):
            return f"{where}.arguments is an object"
        try:
            json.dumps(spec["arguments"], allow_nan=False)
        except (TypeError, ValueError) as exc:
            return f"{where}.arguments is not a JSON value: {exc}"
    for key in ("raw", "id"):
        if key in spec and not isinstance(spec[key], str):
            return f"{where}.{key} is a string"
    return None


def check_choices(respond: Mapping[str, Any], statuses: Sequence[str]) -> str | None:
    """``respond.choices``: 2 to 128 answers, each of text, calls, status and refusal."""
    if "choices" not in respond:
        return None
    choices = respond["choices"]
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_N:
        return f"choices is a list of 2 to {MAX_N} answers, one per choice (the request's n)"
    clash = sorted(ANSWER_KEYS & respond.keys())
    if clash:
        return f"with choices, {', '.join(clash)} belong in each choice, not beside them"
    for i, answer in enumerate(choices):
        where = f"choices[{i}]"
        if not isinstance(answer, dict) or not answer.keys() <= ANSWER_KEYS:
            return f"{where} is an object of {', '.join(sorted(ANSWER_KEYS))}"
        for key in ("text", "refusal"):
            if key in answer and not isinstance(answer[key], str):
                return f"{where}.{key} is a string"
        if "status" in answer and answer["status"] not in statuses:
            return f"{where}.status is one of {', '.join(statuses)}"
        calls = answer.get("calls", [])
        if not isinstance(calls, list):
            return f"{where}.calls is a list of calls"
        for k, spec in enumerate(calls):
            problem = _check_call(spec, f"{where}.calls[{k}]")
            if problem is not None:
                return problem
    return None
