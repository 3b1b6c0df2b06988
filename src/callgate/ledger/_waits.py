"""What an open effect waits for, in words: the host loop's ``waiting`` detail and the
operator's ``callgate ledger pending`` say the same thing about the same record."""

from __future__ import annotations

from ._model import EffectRecord, EffectState, iso_utc

__all__ = ["waits_for"]

S = EffectState


def waits_for(effect: EffectRecord) -> str:
    """One sentence: the effect, what it waits for and, where a lease or a settle time
    decides it, when (ISO-8601 UTC on the database clock)."""
    name = f"effect {effect.effect_id[:12]} ({effect.tool}, call {effect.call_id})"
    until = None if effect.lease_until is None else iso_utc(effect.lease_until)
    state = effect.state
    if state is S.AWAITING_APPROVAL:
        return f"{name} awaits an approval or a denial"
    if state is S.EXECUTING:
        return (
            f"{name} is executing under worker {effect.lease_owner!r}'s lease until "
            f"{until}: retry after that (if the worker died, recovery then moves its "
            "attempt to unknown and the tool's class decides)"
        )
    if state is S.VERIFYING:
        return f"{name} is being verified by {effect.lease_owner!r} until {until}"
    if state is S.UNKNOWN:
        if effect.lease_until is not None:
            return f"{name} has an unknown outcome; its verifier is asked again after {until}"
        return f"{name} has an unknown outcome: waits for its verifier or an operator"
    if state is S.NEEDS_OPERATOR:
        return f"{name} needs an operator's decision (resolve: commit, fail or retry)"
    if state is S.READY:
        return f"{name} is ready: the next resume runs it"
    return f"{name} is {state.value}"
