"""The parsed turn, its function calls, the local call identity, the digest and the gate.

The gate (invariant 4 of the design): ``functionCall`` parts are released in
``Turn.calls`` only when the (single or selected) candidate ended with ``finishReason``
``STOP`` and the prompt was not blocked. Every other documented reason is a refusal that
names it (:class:`~callgate.ProviderError`, ``error_type="finishReason"``,
``error_code=<reason>``); ``CONTINUATION`` (3.6.1) is surfaced on the turn with its
``continuationToken`` and releases nothing; a reason the baseline does not know is
:class:`~callgate.UnsupportedProviderState`.

Call identity: ``functionCall.id`` when the provider sent one. Otherwise a local id,
deterministic from the turn and the call's position::

    "gc-local-<ordinal>-" + canonical_digest([responseId or "", ordinal, name, args])[:16]

where ``ordinal`` is the 0-based position of the call among the turn's ``functionCall``
parts. A local id is never sent to the provider: the continuation answers such a call by
``name`` and position, as the API expects (``contracts/gemini-generate-content.md`` §7).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._digest import canonical_digest
from .._errors import ProviderError, SequenceError, UnsupportedProviderState
from .._hosted import Citation, HostedCall
from ._events import BLOCK_REASONS, CONTINUATION, FINISH_REASONS, REFUSALS, STOP

__all__ = [
    "LOCAL_ID_PREFIX",
    "FunctionCall",
    "Turn",
    "check_block_reason",
    "local_call_id",
    "make_turn",
    "release_calls",
    "turn_digest",
]

LOCAL_ID_PREFIX = "gc-local-"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall:
    """One client-executed call: a ``functionCall`` part released by the gate.

    ``call_id`` is what a :class:`~callgate.ToolResult` must carry: ``provider_id`` when the
    part had an ``id``, else the local id (see the module docstring). ``index`` is the
    part's position in ``Turn.parts``; ``part`` is that raw part (signature included).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    provider_id: str | None
    index: int
    part: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One model turn of generateContent, as parsed. Frozen; its dicts are raw provider JSON.

    - ``parts``: the candidate's parts in arrival order. Adjacent plain text deltas
      (keys ``text`` and optionally ``thought`` only, same ``thought`` flag) are joined into
      one part; every other part — any part with a ``thoughtSignature``, ``functionCall``,
      hosted-tool parts, parts with extra keys — is kept exactly as received, on its own.
    - ``calls``: the released calls (empty unless ``finish_reason == "STOP"``).
    - ``finish_reason``: the candidate's ``finishReason`` (``None`` only on a partial turn).
    - ``continuation_token``: the last ``continuationToken`` seen (3.6.1), or ``None``.
    - ``usage``: the last ``usageMetadata`` seen (a running total), ``None`` if never sent.
    - ``candidate``: the candidate's other fields (``safetyRatings``, ``groundingMetadata``,
      ``citationMetadata``, ...), the last value of each; ``response``: the chunk-level
      fields other than ``candidates``/``usageMetadata`` (``modelVersion``,
      ``responseId``, ``promptFeedback``, ...), the last value of each.
    - ``candidate_index``: the candidate the caller selected, ``None`` for the single one.
    - ``chunks``: chunks seen; ``origin``: ``"stream"`` or ``"body"``; ``baseline``.
    - ``digest``: :func:`callgate.canonical_digest` of all of the above.

    ``hosted_calls``/``citations``: the hosted-tool projection (:class:`callgate.HostedCall`,
    :class:`callgate.Citation`), derived from the raw output; never executable.
    ``warnings``: what the parser found inconsistent in telemetry it does not gate on
    (usage, grounding, citations, hosted pairing), one short string each; not digested.
    """

    parts: tuple[dict[str, Any], ...]
    calls: tuple[FunctionCall, ...]
    finish_reason: str | None
    continuation_token: str | None
    usage: dict[str, Any] | None
    candidate: dict[str, Any]
    response: dict[str, Any]
    candidate_index: int | None
    chunks: int
    origin: str
    baseline: str
    digest: str
    hosted_calls: tuple[HostedCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The answer text: every non-thought ``text`` part, joined."""
        return "".join(
            p["text"] for p in self.parts if type(p.get("text")) is str and not p.get("thought")
        )

    @property
    def response_id(self) -> str | None:
        """The response's ``responseId`` (``None`` when absent or not a string)."""
        value = self.response.get("responseId")
        return value if type(value) is str else None

    @property
    def id(self) -> str | None:
        """The turn's id in every room's name: here ``response_id``."""
        return self.response_id

    @property
    def needs_continuation(self) -> bool:
        """True for ``finishReason: CONTINUATION``: generation is not finished; resume it
        with ``continuation_token`` (no call is released from such a turn)."""
        return self.finish_reason == CONTINUATION


#: Derived from ``parts`` and ``candidate`` (which the digest covers), or telemetry notes:
#: not digested.
_DERIVED = ("hosted_calls", "citations", "warnings")


def _snapshot(fields: dict[str, Any]) -> dict[str, Any]:
    snap = {k: v for k, v in fields.items() if k not in _DERIVED}
    snap["parts"] = list(fields["parts"])
    snap["calls"] = [
        [c.call_id, c.name, c.arguments, c.provider_id, c.index] for c in fields["calls"]
    ]
    return snap


def make_turn(**fields: Any) -> Turn:
    """Build a :class:`Turn` (every field but ``digest``) and seal it with its digest.
    Raises :class:`~callgate.UsageError` if a value is not JSON."""
    digest = canonical_digest(_snapshot(fields))
    return Turn(digest=digest, **fields)


def turn_digest(turn: Turn) -> str:
    """Recompute the digest of ``turn``'s current content (UsageError if not JSON)."""
    fields = {f.name: getattr(turn, f.name) for f in dataclasses.fields(Turn) if f.name != "digest"}
    return canonical_digest(_snapshot(fields))


def local_call_id(response_id: str | None, ordinal: int, name: str, args: dict[str, Any]) -> str:
    """The documented local id of a call without ``functionCall.id``."""
    digest = canonical_digest([response_id or "", ordinal, name, args])
    return f"{LOCAL_ID_PREFIX}{ordinal}-{digest[:16]}"


def check_block_reason(reason: Any, baseline: str) -> None:
    """A blocked prompt always refuses: ProviderError naming a known ``blockReason``,
    UnsupportedProviderState for one the baseline does not know."""
    if reason in BLOCK_REASONS[baseline]:
        raise ProviderError(
            f"the prompt was blocked (promptFeedback.blockReason {reason})",
            error_type="blockReason",
            error_code=reason,
        )
    raise UnsupportedProviderState(
        f"promptFeedback.blockReason {reason!r} is unknown to contract revision {baseline}"
    )


def release_calls(
    finish_reason: str, pending: tuple[FunctionCall, ...], baseline: str, message: Any = None
) -> tuple[FunctionCall, ...]:
    """The terminal gate: what ``finish_reason`` releases (see the module docstring).

    ``STOP`` releases ``pending``; ``CONTINUATION`` (when the baseline knows it) releases
    nothing; a known refusal raises :class:`ProviderError` naming it (``finishMessage`` as
    ``provider_message``); anything else raises :class:`UnsupportedProviderState`.
    """
    if finish_reason == STOP:
        ids = [c.call_id for c in pending]
        if len(set(ids)) != len(ids):
            raise SequenceError("two function calls of one turn share an id")
        return pending
    known = FINISH_REASONS[baseline]
    if finish_reason == CONTINUATION and CONTINUATION in known:
        return ()
    if finish_reason in REFUSALS[baseline]:
        raise ProviderError(
            f"the candidate ended with finishReason {finish_reason}: nothing is released",
            error_type="finishReason",
            error_code=finish_reason,
            provider_message=message if type(message) is str else None,
        )
    raise UnsupportedProviderState(
        f"finishReason {finish_reason!r} is unknown to contract revision {baseline}"
    )
