"""The re-check every continuation builder makes before it trusts a parsed turn.

A builder takes back a ``Turn`` that left the parser earlier and may have been touched
since. :func:`check_parsed_turn` is the part every room shares: the value is a ``Turn`` of
this room (else :class:`UsageError`), its digest still matches what the parser recorded
(else :class:`ContinuationError`; a digest that cannot even be computed counts as a
mismatch), and, where the room records one, its contract baseline is a known revision.
What a room requires beyond that (a status, released calls bound to their parts) stays in
the room, since each protocol spells it differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._errors import CallgateError, ContinuationError, UsageError
from .contracts import REVISIONS

__all__ = ["check_parsed_turn"]


def check_parsed_turn(
    turn: Any,
    turn_type: type,
    room: str,
    digest: Callable[[Any], str],
    *,
    baseline: bool = False,
) -> None:
    """Refuse ``turn`` unless it is an unaltered ``turn_type`` of ``room``.

    ``digest`` recomputes the turn's digest (the room's ``turn_digest``). With
    ``baseline=True`` the turn's ``baseline`` must also be one of the known contract
    revisions. Raises :class:`UsageError` for a value of another type,
    :class:`ContinuationError` for a digest mismatch or an unknown baseline.
    """
    if not isinstance(turn, turn_type):
        article = "an" if room[:1] in "aeiou" else "a"
        raise UsageError(f"turn must be {article} {room}.Turn, not {type(turn).__name__}")
    try:
        recomputed = digest(turn)
    except (CallgateError, AttributeError, TypeError):
        recomputed = ""
    if recomputed != turn.digest:
        raise ContinuationError("the turn was mutated after parsing (digest mismatch)")
    if baseline and turn.baseline not in REVISIONS:
        raise ContinuationError(f"the turn has an unknown baseline {turn.baseline!r}")
