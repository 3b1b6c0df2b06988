"""The parsed turn, its client calls, its canonical digest and the terminal gate."""

from __future__ import annotations

import dataclasses
from typing import Any

from .._digest import canonical_digest
from .._errors import ProviderError, SequenceError, UnsupportedProviderState
from .._hosted import Citation, HostedCall
from ._events import FAILED_STATUSES
from ._hosted import project

__all__ = [
    "ORIGINS",
    "FunctionCall",
    "Turn",
    "make_turn",
    "provider_error",
    "release_calls",
    "turn_digest",
]

#: Where a turn was parsed from (``Turn.origin``).
ORIGINS: tuple[str, ...] = ("stream", "create", "get")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall:
    """One client-executed call: a ``function_call`` step whose arguments parsed strictly.

    ``call_id`` is the step's ``id`` (what a ``function_result`` answers), ``arguments`` the
    strict-JSON object, ``step`` the raw step dict as it appears in ``Turn.steps``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    step: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
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
    - ``baseline``: the contract revision the parser enforced.
    - ``opaque``: positions in ``steps`` whose content the stream did not prove complete
      (deltas whose assembly callgate does not implement exactly); never replayed.
      ``opaque_reasons`` says why, one reason per position (derived; not in the digest).
    - ``text``: the ``text`` blocks of the ``model_output`` steps, concatenated in step
      order (``""`` when there are none); derived from ``steps``.
    - ``digest``: :func:`callgate.canonical_digest` of the snapshot of all of the above
      (``text`` through ``steps``); builders recompute it to detect mutation after parsing.

    ``hosted_calls``/``citations``: the hosted-tool projection (:class:`callgate.HostedCall`,
    :class:`callgate.Citation`), derived from ``steps`` (see ``_hosted``: one HostedCall per
    hosted call step, paired with its result step by ``call_id``; one Citation per
    ``url_citation``/``file_citation``/``place_citation`` annotation, offsets in UTF-8
    bytes of its text block); never executable.
    ``warnings``: what the parser found inconsistent in telemetry it does not gate on
    (hosted pairing and payloads, citations, usage), one short string each; not digested.
    """

    interaction_id: str | None
    status: str
    steps: tuple[dict[str, Any], ...]
    calls: tuple[FunctionCall, ...]
    usage: dict[str, Any] | None
    origin: str
    baseline: str
    opaque: tuple[int, ...]
    text: str
    digest: str
    opaque_reasons: tuple[str, ...] = ()
    hosted_calls: tuple[HostedCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def id(self) -> str | None:
        """The turn's id in every room's name: here ``interaction_id``."""
        return self.interaction_id


def _snapshot(
    interaction_id: str | None,
    status: str,
    steps: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
    usage: dict[str, Any] | None,
    origin: str,
    baseline: str,
    opaque: tuple[int, ...],
) -> dict[str, Any]:
    # The keys are the digest's format: "revision" stays, so digests do not change.
    return {
        "interaction_id": interaction_id,
        "status": status,
        "steps": list(steps),
        "calls": [[c.call_id, c.name, c.arguments] for c in calls],
        "usage": usage,
        "origin": origin,
        "revision": baseline,
        "opaque": list(opaque),
    }


def _text(steps: tuple[dict[str, Any], ...]) -> str:
    parts: list[str] = []
    for step in steps:
        if step.get("type") != "model_output":
            continue
        content = step.get("content")
        if type(content) is not list:
            continue
        for block in content:
            if type(block) is dict and block.get("type") == "text":
                text = block.get("text")
                if type(text) is str:
                    parts.append(text)
    return "".join(parts)


def make_turn(
    *,
    interaction_id: str | None,
    status: str,
    steps: tuple[dict[str, Any], ...],
    calls: tuple[FunctionCall, ...],
    usage: dict[str, Any] | None,
    origin: str,
    baseline: str,
    opaque: tuple[int, ...] = (),
    opaque_reasons: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
) -> Turn:
    """Build a :class:`Turn` and seal it with its digest (values are trusted JSON);
    ``warnings`` are the parse's own, the projection's follow."""
    digest = canonical_digest(
        _snapshot(interaction_id, status, steps, calls, usage, origin, baseline, opaque)
    )
    hosted_calls, citations, found = project(steps)
    return Turn(
        interaction_id=interaction_id,
        status=status,
        steps=steps,
        calls=calls,
        usage=usage,
        origin=origin,
        baseline=baseline,
        opaque=opaque,
        text=_text(steps),
        digest=digest,
        opaque_reasons=opaque_reasons,
        hosted_calls=hosted_calls,
        citations=citations,
        warnings=warnings + found,
    )


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
            turn.baseline,
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


def provider_error(error: Any, where: str) -> ProviderError:
    """The :class:`ProviderError` for an ``error`` object: the stream's ``error`` event or
    the API's error body (``where`` says which). The Interactions API's own shape is
    ``{"code": "<string>", "message"}``; Google's front end may answer with a
    ``google.rpc.Status`` (``code`` an int, ``status`` a string): each is read when present,
    none is required (the error itself is what refuses the turn)."""
    code = message = status = None
    if type(error) is dict:
        code, message, status = error.get("code"), error.get("message"), error.get("status")
    message = message if type(message) is str else None
    return ProviderError(
        f"{where}: {message if message is not None else 'no details'}",
        error_type=status if type(status) is str else None,
        error_code=str(code) if type(code) in (str, int) else None,
        provider_message=message,
    )
