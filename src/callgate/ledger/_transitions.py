"""The effect state machine as one table: ``(state, event) -> state``.

Every transition the ledger writes is looked up here first (a missing row is a
:class:`ConflictError`), and the audit trail of an effect is legal exactly when each of its
rows is a row of this table and each row starts where the previous one ended.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._model import AuditEvent, ConflictError
from ._model import EffectState as S

__all__ = ["TRANSITIONS", "is_legal_trail", "next_state"]

TRANSITIONS: dict[tuple[S, str], S] = {
    (S.PROPOSED, "admit"): S.READY,
    (S.PROPOSED, "needs_approval"): S.AWAITING_APPROVAL,
    (S.PROPOSED, "reject"): S.REJECTED,
    (S.PROPOSED, "replay"): S.COMMITTED,
    (S.AWAITING_APPROVAL, "approve"): S.READY,
    (S.AWAITING_APPROVAL, "deny"): S.REJECTED,
    (S.READY, "claim"): S.EXECUTING,
    (S.READY, "approval_lapsed"): S.AWAITING_APPROVAL,
    # From here on the effect may have applied.
    (S.EXECUTING, "commit"): S.COMMITTED,
    (S.EXECUTING, "fail"): S.FAILED,
    (S.EXECUTING, "lose"): S.UNKNOWN,
    # R2: only the class (``retry``), a verifier or an operator leaves ``unknown``.
    (S.UNKNOWN, "retry"): S.READY,
    (S.UNKNOWN, "retry_needs_approval"): S.AWAITING_APPROVAL,
    (S.UNKNOWN, "verify"): S.VERIFYING,
    (S.UNKNOWN, "escalate"): S.NEEDS_OPERATOR,
    (S.VERIFYING, "applied"): S.COMMITTED,
    (S.VERIFYING, "not_applied"): S.READY,
    (S.VERIFYING, "not_applied_needs_approval"): S.AWAITING_APPROVAL,
    (S.VERIFYING, "inconclusive"): S.UNKNOWN,
    (S.VERIFYING, "lose"): S.UNKNOWN,
    (S.UNKNOWN, "resolve_commit"): S.COMMITTED,
    (S.UNKNOWN, "resolve_fail"): S.FAILED,
    (S.UNKNOWN, "resolve_retry"): S.READY,
    (S.UNKNOWN, "resolve_retry_needs_approval"): S.AWAITING_APPROVAL,
    (S.NEEDS_OPERATOR, "resolve_commit"): S.COMMITTED,
    (S.NEEDS_OPERATOR, "resolve_fail"): S.FAILED,
    (S.NEEDS_OPERATOR, "resolve_retry"): S.READY,
    (S.NEEDS_OPERATOR, "resolve_retry_needs_approval"): S.AWAITING_APPROVAL,
    (S.COMMITTED, "deliver"): S.DELIVERED,
    (S.FAILED, "deliver"): S.DELIVERED,
    (S.REJECTED, "deliver"): S.DELIVERED,
}


def next_state(state: S, event: str) -> S:
    """The state ``event`` leads to from ``state``; raises :class:`ConflictError` if none."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise ConflictError(f"no transition {event!r} from state {state.value!r}") from None


def is_legal_trail(events: Iterable[AuditEvent]) -> bool:
    """True when the events (one effect's, in order) follow the table from ``proposed``."""
    current: str | None = None
    for event in events:
        if event.from_state != current:
            return False
        if current is None:
            if event.to_state != S.PROPOSED.value or event.event != "record":
                return False
        else:
            target = TRANSITIONS.get((S(current), event.event))
            if target is None or target.value != event.to_state:
                return False
        current = event.to_state
    return True
