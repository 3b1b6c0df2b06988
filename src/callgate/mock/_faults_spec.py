"""The fault and pacing schema, and its validation (scripts and the control endpoint).

A fault is one JSON object with a ``type``; ``after`` counts the events sent before the
fault strikes (a value past the end of the stream strikes at its end). Instead of ``after``,
a fault may name its point (:func:`callgate.mock._faults_stream.fault_position`):
``"after_call": i`` (once call ``i`` is complete), with ``"after_argument_deltas": k``
(after that call's ``k``-th argument piece; not on generateContent, whose calls arrive
whole), or ``"before_terminal": true``; a named point the turn's stream does not have is
refused when the app is created::

    {"type": "http_error", "status": 400|401|403|404|408|409|429|500|503|529,
     "message": str, "retry_after": int seconds <= 86400, "times": int}  # 529: Anthropic only
    {"type": "disconnect", "after": n, "close_code": c}  # close the stream after n events
                                                   # (close_code: the WebSocket route's)
    {"type": "error_event", "after": n, "message": str, "error_type": str, "code": str,
     "shape": "nested" | "flat"}                   # shape: OpenAI only (default nested)
    {"type": "malformed", "after": n, "data": str} # a frame whose data is not JSON
                                                   # (written verbatim; default: cut JSON)
    {"type": "duplicate", "after": n, "payload": "same" | "different"}  # re-send event n-1
                                                   # "different": Gemini only (same event_id)
    {"type": "out_of_order", "after": n}          # events n and n+1 swap places
    {"type": "truncate", "call": i, "keep": chars} # cut call i's arguments, truncated terminal
    {"type": "never_end", "after": n}             # send n events (default all), hold open

Pacing: ``{"first_byte_ms": int, "event_delay_ms": int, "flush": "coalesce" | "per_event"}``
(each delay at most one hour).
Without pacing a stream leaves in one body message; ``event_delay_ms`` implies (and
needs) ``"per_event"``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from typing import Any

from ._faults_stream import POINT_KEYS, fault_position
from ._providers import provider
from ._render_turn import render
from ._script import Script, ScriptError, ScriptTurn

__all__ = [
    "HTTP_STATUSES",
    "RUNTIME",
    "STREAM_FAULTS",
    "Armed",
    "check_fault",
    "check_faults",
    "check_pacing",
    "fits",
]

RUNTIME = "runtime"
_ids = itertools.count(1)


@dataclasses.dataclass(slots=True)
class Armed:
    """A fault (and/or pacing) waiting in a session: ``remaining`` uses left.

    ``origin`` is ``"runtime"`` (set through the control endpoint) or the location of the
    scripted turn whose HTTP fault it counts down.
    """

    fault: dict[str, Any] | None
    pacing: dict[str, Any] | None
    remaining: int
    protocol: str | None = None
    origin: str = RUNTIME
    id: int = dataclasses.field(default_factory=lambda: next(_ids))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fault": self.fault,
            "pacing": self.pacing,
            "remaining": self.remaining,
            "protocol": self.protocol,
        }


HTTP_STATUSES = frozenset({400, 401, 403, 404, 408, 409, 429, 500, 503, 529})
STREAM_FAULTS = frozenset(
    {"disconnect", "error_event", "malformed", "duplicate", "out_of_order", "truncate", "never_end"}
)
_AT = {"after", *POINT_KEYS}
_KEYS: dict[str, set[str]] = {
    "http_error": {"status", "message", "retry_after", "times"},
    "disconnect": {*_AT, "close_code"},
    "error_event": {*_AT, "message", "error_type", "code", "shape"},
    "malformed": {*_AT, "data"},
    "duplicate": {*_AT, "payload"},
    "out_of_order": _AT,
    "truncate": {"call", "keep"},
    "never_end": _AT,
}
_PACING_KEYS = {"first_byte_ms", "event_delay_ms", "flush"}
MAX_RETRY_AFTER = 86_400  # seconds (one day); Anthropic's reset header is a date
MAX_PACING_MS = 3_600_000  # one hour per delay


class _BadSpecError(Exception):
    """A schema problem at ``where`` (a JSON-pointer suffix); converted to ScriptError."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def _count(
    spec: Mapping[str, Any], key: str, *, minimum: int = 0, maximum: int | None = None
) -> None:
    if key in spec:
        value = spec[key]
        if type(value) is not int or value < minimum:
            raise _BadSpecError(f"/{key}", f"{key} must be an int >= {minimum}")
        if maximum is not None and value > maximum:
            raise _BadSpecError(f"/{key}", f"{key} must be at most {maximum}")


def _text(spec: Mapping[str, Any], key: str) -> None:
    if key not in spec:
        return
    value = spec[key]
    if not isinstance(value, str):
        raise _BadSpecError(f"/{key}", f"{key} must be a string")
    # ``data`` is written verbatim: an escaped byte (U+DC80..U+DCFF) is allowed there.
    try:
        value.encode("utf-8", "surrogateescape" if key == "data" else "strict")
    except UnicodeEncodeError:
        raise _BadSpecError(f"/{key}", f"{key} holds a lone surrogate: not UTF-8") from None


def _allows(protocol: str | None, option: str) -> bool:
    """Whether a fault option only some providers have fits ``protocol`` (any, if None)."""
    return protocol is None or option in provider(protocol).fault_options


def _check_fault(spec: Any, protocol: str | None, turn: ScriptTurn | None) -> None:
    if not isinstance(spec, dict):
        raise _BadSpecError("", "a fault is an object")
    kind = spec.get("type")
    if kind not in _KEYS:
        raise _BadSpecError("/type", f"type must be one of {', '.join(sorted(_KEYS))}")
    unknown = sorted(set(spec) - _KEYS[kind] - {"type"})
    if unknown:
        raise _BadSpecError("", f"unknown key(s) for a {kind} fault: {', '.join(unknown)}")
    for key in ("after", "keep", "call", "after_call", "after_argument_deltas"):
        _count(spec, key)
    _check_point(spec, protocol)
    _count(spec, "retry_after", maximum=MAX_RETRY_AFTER)
    _count(spec, "times", minimum=1)
    _count(spec, "close_code", minimum=1000, maximum=4999)
    for key in ("message", "error_type", "code", "data"):
        _text(spec, key)
    if kind == "http_error":
        status = spec.get("status")
        if type(status) is not int or status not in HTTP_STATUSES:
            raise _BadSpecError("/status", f"status must be one of {sorted(HTTP_STATUSES)}")
        if status == 529 and not _allows(protocol, "overloaded_529"):
            raise _BadSpecError("/status", "529 (overloaded) is Anthropic's status only")
    elif kind in ("disconnect", "error_event", "malformed", "out_of_order", "duplicate") and (
        not _AT & set(spec)
    ):
        raise _BadSpecError(
            "", f"a {kind} fault needs 'after' (events sent before it), 'after_call' or "
            "'before_terminal'"
        )  # fmt: skip
    if kind == "duplicate":
        _count(spec, "after", minimum=1)
        payload = spec.get("payload", "same")
        if payload not in ("same", "different"):
            raise _BadSpecError("/payload", "payload is 'same' or 'different'")
        if payload == "different" and not _allows(protocol, "duplicate_different"):
            raise _BadSpecError(
                "/payload", "a different payload under the same event_id is Gemini's"
            )
    if kind == "error_event" and "shape" in spec:
        if spec["shape"] not in ("nested", "flat"):
            raise _BadSpecError("/shape", "shape is 'nested' or 'flat'")
        if not _allows(protocol, "error_shape"):
            raise _BadSpecError("/shape", "the flat/nested choice exists only for OpenAI")
    if kind == "duplicate" and turn is not None and turn.respond.get("disconnect_after") == 0:
        raise _BadSpecError("", "disconnect_after: 0 sends no event for a duplicate to re-send")
    if kind == "truncate" and turn is not None:
        if "disconnect_after" in turn.respond:
            raise _BadSpecError(
                "", "a truncate fault needs the turn's terminal: drop disconnect_after"
            )
        check_truncate(spec, turn)


def _check_point(spec: Mapping[str, Any], protocol: str | None) -> None:
    placed = [key for key in ("after", "after_call", "before_terminal") if key in spec]
    if len(placed) > 1:
        raise _BadSpecError("", f"place a fault once: {' and '.join(placed)} both given")
    if "before_terminal" in spec and spec["before_terminal"] is not True:
        raise _BadSpecError("/before_terminal", "before_terminal is true (or left out)")
    if "after_argument_deltas" in spec:
        if "after_call" not in spec:
            raise _BadSpecError("/after_argument_deltas", "after_argument_deltas needs after_call")
        if not _allows(protocol, "argument_deltas"):
            raise _BadSpecError(
                "/after_argument_deltas",
                f"{protocol} sends each call whole: its stream has no argument deltas",
            )


def _check_placed(spec: Mapping[str, Any], turn: ScriptTurn, events: Any) -> None:
    """Refuse a named point the turn's stream does not have."""
    if not any(key in spec for key in POINT_KEYS) or events is None:
        return
    if fault_position(turn.protocol, events, spec) is not None:
        return
    where = next(f"/{k}" for k in ("before_terminal", "after_argument_deltas", "after_call")
                 if k in spec)  # fmt: skip
    if "before_terminal" in spec:
        message = "the turn's stream has no terminal event (disconnect_after cuts it)"
    elif "after_argument_deltas" in spec:
        message = (
            f"call {spec['after_call']} of the turn's stream has fewer than "
            f"{spec['after_argument_deltas']} argument delta(s) (see its chunking)"
        )
    else:
        message = f"the turn's stream has no complete call {spec['after_call']}"
    raise _BadSpecError(where, message)


def check_truncate(spec: Mapping[str, Any], turn: ScriptTurn) -> None:
    """Raise ``_BadSpecError`` unless ``spec`` cuts one of ``turn``'s calls inside its arguments."""
    calls = turn.respond.get("calls", [])
    index = spec.get("call", 0)
    if index >= len(calls):
        raise _BadSpecError("/call", f"the turn has {len(calls)} call(s); there is no call {index}")
    call = calls[index]
    text = (
        call["raw"]
        if "raw" in call
        else json.dumps(call.get("arguments", {}), separators=(",", ":"), ensure_ascii=False)
    )
    if len(text) < 2:
        raise _BadSpecError("/call", "the call's arguments are too short to cut in the middle")
    if not 0 < spec.get("keep", 1) < len(text):
        raise _BadSpecError(
            "/keep", f"keep must cut inside the arguments (1..{len(text) - 1} chars)"
        )


def fits(spec: Mapping[str, Any], turn: ScriptTurn, events: Any = None) -> bool:
    """Whether a (runtime) fault can be applied to ``turn`` as it was rendered (``events``:
    its stream, where a named point must be)."""
    placed = events is not None and any(key in spec for key in POINT_KEYS)
    if placed and fault_position(turn.protocol, events, spec) is None:
        return False
    if spec["type"] == "duplicate":
        return turn.respond.get("disconnect_after") != 0
    if spec["type"] != "truncate":
        return True
    if "disconnect_after" in turn.respond:
        return False
    try:
        check_truncate(spec, turn)
    except _BadSpecError:
        return False
    return True


def _check_pacing(spec: Any) -> None:
    if not isinstance(spec, dict):
        raise _BadSpecError("", "pacing is an object")
    unknown = sorted(set(spec) - _PACING_KEYS)
    if unknown:
        raise _BadSpecError("", f"unknown key(s) {', '.join(unknown)}")
    _count(spec, "first_byte_ms", maximum=MAX_PACING_MS)
    _count(spec, "event_delay_ms", maximum=MAX_PACING_MS)
    flush = spec.get("flush")
    if flush is not None and flush not in ("coalesce", "per_event"):
        raise _BadSpecError("/flush", "flush is 'coalesce' or 'per_event'")
    if spec.get("event_delay_ms") and flush == "coalesce":
        raise _BadSpecError("/flush", "event_delay_ms paces every event; it cannot be coalesced")


def check_fault(
    spec: Any, *, protocol: str | None = None, path: str | None = None, location: str = ""
) -> None:
    """Validate one fault spec. Raises :class:`ScriptError` naming ``location`` + key."""
    try:
        _check_fault(spec, protocol, None)
    except _BadSpecError as bad:
        raise ScriptError(bad.message, path=path, location=location + bad.where) from None


def check_pacing(spec: Any, *, path: str | None = None, location: str = "") -> None:
    """Validate one pacing spec. Raises :class:`ScriptError` naming ``location`` + key."""
    try:
        _check_pacing(spec)
    except _BadSpecError as bad:
        raise ScriptError(bad.message, path=path, location=location + bad.where) from None


def check_faults(script: Script) -> None:
    """Validate every turn's (and fixture's) ``respond.fault`` and ``respond.pacing``.

    Raises :class:`ScriptError` with the file path and e.g.
    ``/conversations/default/0/respond/fault/status``. ``times`` belongs to ``http_error``
    only: a stream fault is served once, with its turn; a fixture counts its own uses.
    """
    ordered = [turn for turns in script.conversations.values() for turn in turns]
    fixtures = [f for f in (*script.fixtures, script.fallback) if f is not None]
    for turn in ordered + [turn for f in fixtures for turn in f.turns.values()]:
        _check_turn(script, turn, fixture=turn not in ordered)


def _check_turn(script: Script, turn: ScriptTurn, *, fixture: bool) -> None:
    respond = turn.respond
    where = f"{turn.location}/respond"
    if "fault" in respond:
        try:
            _check_fault(respond["fault"], turn.protocol, turn)
            _check_placed(respond["fault"], turn, _events(script, turn, respond["fault"]))
            if fixture and "times" in respond["fault"]:
                raise _BadSpecError("/times", "a fixture counts its uses: give 'times' on it")
        except _BadSpecError as bad:
            raise ScriptError(
                bad.message, path=script.path, location=f"{where}/fault{bad.where}"
            ) from None
    if "pacing" in respond:
        check_pacing(respond["pacing"], path=script.path, location=f"{where}/pacing")


def _events(script: Script, turn: ScriptTurn, fault: Any) -> Any:
    """The turn's stream events (what a named point is looked for in), if it needs them."""
    if not isinstance(fault, dict) or not any(key in fault for key in POINT_KEYS):
        return None
    rendered = render(
        turn, seed=script.seed, conversation="", turn_number=0, stream=True,
        baseline=script.baseline,
    )  # fmt: skip
    return rendered.events
