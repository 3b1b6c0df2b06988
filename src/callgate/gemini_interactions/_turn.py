"""The parsed turn, its client calls, its canonical digest and the terminal gate."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from .._digest import canonical_digest
from .._errors import ProviderError, SequenceError, UnsupportedProviderState
from ._events import FAILED_STATUSES

__all__ = ["ORIGINS", "FunctionCall", "Turn", "make_turn", "release_calls", "turn_digest"]

Origin = Literal["stream", "create", "get"]
ORIGINS: tuple[str, ...] = ("stream", "create", "get")


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionCall:
    """One client-executed call: a ``function_call`` step whose arguments parsed strictly.

    ``call_id`` is the step's ``id`` (what a ``function_result`` answers), ``arguments`` the
    strict-JSON object, ``step`` the raw step dict as it appears in ``Turn.steps``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    step: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One Interaction turn as parsed. Frozen; its dicts are raw provider JSON.

    - ``interaction_id``: the Interaction's ``id``, or ``None`` when it has none: an
      unstored Interaction (``store: false``; the wire sends ``"id": ""`` or omits it),
      which can be continued only statelessly, or a partial turn attached to an error
      raised before the id was seen.
    - ``status``: the raw status string (the terminal's, or the last seen in a partial turn).
    - ``steps``: raw step dicts in the order their ``step.start`` was observed (streams) or
      in body order; streamed function-call arguments are assembled into the step.
    - ``calls``: the executable calls; non-empty only for a ``requires_action`` terminal.
    - ``usage``: the raw ``usage`` object of the terminal Interaction, or ``None`` if absent
      (absence is never turned into zeros).
    - ``origin``: ``"stream"``, ``"create"`` (non-streaming create body: model steps only)
      or ``"get"`` (GET body: the input history first).
    - ``revision``: the contract revision the parser enforced.
    - ``opaque``: positions in ``steps`` whose content the stream did not prove complete
      (deltas whose assembly callgate does not implement exactly); never replayed.
    - ``digest``: :func:`callgate.canonical_digest` of the snapshot of all of the above;
      builders recompute it to detect mutation after parsing.
    """

    interaction_id: str | None
    status: str
    steps: tuple[dict[str, Any], ...]
    calls: tuple[FunctionCall, ...]
    usage: dict[str, Any] | None
    origin: str
    revision: str
    opaque: tuple[int, ...]
    digest: str

    @property
    def source(self) -> str:
        """Alias of ``origin`` (the ``source`` argument of :func:`parse_interaction`)."""
        return self.origin


def _snapshot(
    interaction_id: str | None,
    status: str,
    steps: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
    usage: dict[str, Any] | None,
    origin: str,
    revision: str,
    opaque: tuple[int, ...],
) -> dict[str, Any]:
    return {
        "interaction_id": interaction_id,
        "status": status,
        "steps": list(steps),
        "calls": [[c.call_id, c.name, c.arguments] for c in calls],
        "usage": usage,
        "origin": origin,
        "revision": revision,
        "opaque": list(opaque),
    }


def make_turn(
    *,
    interaction_id: str | None,
    status: str,
    steps: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
    usage: dict[str, Any] | None,
    origin: str,
    revision: str,
    opaque: tuple[int, ...] = (),
) -> Turn:
    """Build a :class:`Turn` and seal it with its digest (values are trusted JSON)."""
    digest = canonical_digest(
        _snapshot(interaction_id, status, steps, calls, usage, origin, revision, opaque)
    )
    return Turn(interaction_id, status, steps, calls, usage, origin, revision, opaque, digest)


def turn_digest(turn: Turn) -> str:
    """Recompute the digest of ``turn``'s current content (raises UsageError if not JSON)."""
    return canonical_digest(
        _snapshot(
            turn.interaction_id,
            turn.status,
            turn.steps,
            turn.calls,
            turn.usage,
            turn.origin,
            turn.revision,
            turn.opaque,
        )
    )


def release_calls(
    status: str, pending: tuple[FunctionCall, ...], errors: Any = None
) -> tuple[FunctionCall, ...]:
    """The terminal gate: what the terminal ``status`` releases.

    ``requires_action`` releases ``pending`` (and needs at least one); ``completed`` is a
    final answer and releases nothing (a pending call in it is contradictory:
    :class:`SequenceError`); ``failed``/``cancelled``/``incomplete``/``budget_exceeded``
    raise :class:`ProviderError`; every other status (``in_progress``, ``queued``, ``idle``,
    ``requires_continuation``, unknown strings) raises :class:`UnsupportedProviderState`.
    """
    if status == "requires_action":
        if not pending:
            raise UnsupportedProviderState(
                "status requires_action without a pending function_call: the required "
                "action is unknown"
            )
        return pending
    if status == "completed":
        if pending:
            raise SequenceError(
                f"a completed interaction holds an unanswered function_call "
                f"{pending[0].call_id!r}: contradictory, nothing is released"
            )
        return ()
    if status in FAILED_STATUSES:
        code = message = None
        if type(errors) is list and errors and type(errors[0]) is dict:
            first = errors[0]
            code = first.get("code") if type(first.get("code")) is str else None
            message = first.get("message") if type(first.get("message")) is str else None
        raise ProviderError(
            f"interaction ended with status {status!r}",
            error_type=status,
            error_code=code,
            provider_message=message,
        )
    raise UnsupportedProviderState(
        f"interaction ended with status {status!r}, which callgate does not gate"
    )
