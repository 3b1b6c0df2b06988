"""Steering on a Responses WebSocket: the three ``response.steer.*`` events as records.

Wire facts (openai 3.57.0 ``types/responses/response_steer_*_event.py``; see
docs/contracts/openai-responses-websocket.md §6): ``accepted`` means the server owns the
input, not that it was applied; the successor's ``response.created`` is the commit point;
``pending`` follows the parent's ``response.completed`` and names the client-owned
results it waits for (``required_input`` stubs: fill them from saved results, never
re-run a tool); ``failed`` returns the uncommitted input (with the steer's ``id`` only if
one was allocated). A connection lost with a steer accepted but not committed leaves its
outcome unknown.

:class:`Steers` keeps one :class:`Steer` record per submission and checks that the events
agree with each other and with the responses the connection has seen; it never touches a
response's own rules (a ``failed`` steer leaves the running response as it was).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from .._errors import SchemaError, SequenceError
from ._turn import ProviderErrorInfo, error_info

__all__ = ["STEER_EVENTS", "Steer", "Steers"]

#: The wire types of the steering events (3.57.0 and later).
STEER_EVENTS: Final = frozenset(
    {"response.steer.accepted", "response.steer.pending", "response.steer.failed"}
)

ACCEPTED: Final = "accepted"
PENDING: Final = "pending"
COMMITTED: Final = "committed"
FAILED: Final = "failed"
UNKNOWN: Final = "unknown"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Steer:
    """One steering submission as the server reported it.

    ``status``: ``"accepted"`` (queued, not applied), ``"pending"`` (queued after the
    parent completed, waiting for ``required_input``), ``"committed"`` (the successor
    ``successor_id`` was created), ``"failed"`` (``error`` says why; ``input`` is the
    returned, uncommitted input) or ``"unknown"`` (the connection closed first: not proof
    that the input was rejected). ``id`` is ``None`` for a failure before an id was
    allocated. ``required_input`` are the raw stubs of a pending steer; ``reason`` its
    raw reason.
    """

    id: str | None
    previous_response_id: str
    status: str
    stream_id: str | None = None
    successor_id: str | None = None
    reason: str | None = None
    required_input: tuple[dict[str, Any], ...] = ()
    error: ProviderErrorInfo | None = None
    input: Any = None


def _steer_field(obj: dict[str, Any], *, id_required: bool) -> tuple[str | None, str]:
    steer = obj.get("steer")
    if type(steer) is not dict:
        raise SchemaError(f"{obj['type']} lacks a 'steer' object")
    sid = steer.get("id")
    if not (type(sid) is str or (sid is None and not id_required)):
        raise SchemaError(f"{obj['type']} lacks a string steer.id")
    parent = steer.get("previous_response_id")
    if type(parent) is not str:
        raise SchemaError(f"{obj['type']} lacks a string steer.previous_response_id")
    return sid, parent


class Steers:
    """The steering records of one connection.

    ``ended(response_id)`` tells how a response seen on the connection ended (``None``:
    unknown id; ``""``: still running; otherwise its status); the connection supplies it.
    """

    __slots__ = ("_ended", "_records", "_unnamed")

    def __init__(self, ended: Callable[[str], str | None]) -> None:
        self._ended = ended
        self._records: dict[str, Steer] = {}  # by steer id, in order of first report
        self._unnamed: list[Steer] = []  # failures before an id was allocated

    @property
    def all(self) -> tuple[Steer, ...]:
        return (*self._records.values(), *self._unnamed)

    def on_event(self, obj: dict[str, Any], lane: str | None) -> None:
        """Apply one ``response.steer.*`` event; raises the typed error it means."""
        seq = obj.get("sequence_number")
        if seq is not None and type(seq) is not int:
            raise SchemaError("steering event 'sequence_number' is not an integer")
        etype = obj["type"]
        if etype == "response.steer.accepted":
            self._accepted(obj, lane)
        elif etype == "response.steer.pending":
            self._pending(obj)
        else:
            self._failed(obj, lane)

    def _accepted(self, obj: dict[str, Any], lane: str | None) -> None:
        sid, parent = _steer_field(obj, id_required=True)
        if sid is None or sid in self._records:
            raise SequenceError(f"steer {sid!r} was accepted twice")
        if self._ended(parent) is None:
            raise SequenceError(f"steer {sid!r} targets {parent!r}, not seen on this connection")
        self._records[sid] = Steer(
            id=sid, previous_response_id=parent, status=ACCEPTED, stream_id=lane
        )

    def _pending(self, obj: dict[str, Any]) -> None:
        sid, parent = _steer_field(obj, id_required=True)
        record = self._records.get(sid) if sid is not None else None
        if sid is None or record is None or record.status != ACCEPTED:
            state = "unknown" if record is None else record.status
            raise SequenceError(f"response.steer.pending for steer {sid!r}, which is {state}")
        if record.previous_response_id != parent:
            raise SequenceError(f"steer {sid!r} changed its target to {parent!r}")
        if self._ended(parent) != "completed":
            raise SequenceError(f"response.steer.pending before {parent!r} completed")
        stubs = obj.get("required_input")
        if type(stubs) is not list or any(
            type(s) is not dict or type(s.get("type")) is not str for s in stubs
        ):
            raise SchemaError("response.steer.pending 'required_input' is not a list of stubs")
        reason = obj.get("reason")
        self._records[sid] = dataclasses.replace(
            record,
            status=PENDING,
            reason=reason if type(reason) is str else None,
            required_input=tuple(stubs),
        )

    def _failed(self, obj: dict[str, Any], lane: str | None) -> None:
        sid, parent = _steer_field(obj, id_required=False)
        raw = obj.get("error")
        info = error_info("response.steer.failed", raw if type(raw) is dict else {}, obj)
        steer = obj["steer"]
        fields: dict[str, Any] = {"status": FAILED, "error": info, "input": steer.get("input")}
        record = self._records.get(sid) if sid is not None else None
        if sid is None or record is None:
            failed = Steer(id=sid, previous_response_id=parent, stream_id=lane, **fields)
            if sid is None:
                self._unnamed.append(failed)
            else:
                self._records[sid] = failed
            return
        if record.status not in (ACCEPTED, PENDING):
            raise SequenceError(f"steer {sid!r} failed after it was {record.status}")
        if record.previous_response_id != parent:
            raise SequenceError(f"steer {sid!r} changed its target to {parent!r}")
        self._records[sid] = dataclasses.replace(record, **fields)

    def accepted_for(self, response_id: str) -> bool:
        """Whether a steer of ``response_id`` was accepted (and not failed)."""
        return any(
            r.previous_response_id == response_id and r.status in (ACCEPTED, PENDING)
            for r in self._records.values()
        )

    def commit(self, parent: str, successor: str) -> None:
        """``successor`` was created after ``parent`` ended: its queued steers committed."""
        for sid, record in self._records.items():
            if record.previous_response_id == parent and record.status in (ACCEPTED, PENDING):
                self._records[sid] = dataclasses.replace(
                    record, status=COMMITTED, successor_id=successor
                )

    def lost(self) -> None:
        """The connection closed: every queued steer's outcome is unknown."""
        for sid, record in self._records.items():
            if record.status in (ACCEPTED, PENDING):
                self._records[sid] = dataclasses.replace(record, status=UNKNOWN)
