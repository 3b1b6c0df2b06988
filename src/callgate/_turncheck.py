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
from typing import Any, TypeVar

from ._errors import CallgateError, ContinuationError, UsageError
from .contracts import REVISIONS

__all__ = ["check_parsed_turn"]

T = TypeVar("T")


def check_parsed_turn(
    turn: object,
    turn_type: type[T],
    room: str,
    digest: Callable[[T], str],
    *,
    baseline: bool = False,
) -> T:
    """Return ``turn`` if it is an unaltered ``turn_type`` of ``room``, else refuse it.

    ``digest`` recomputes the turn's digest (the room's ``turn_digest``). With
    ``baseline=True`` the turn's ``baseline`` must also be one of the known contract
    revisions. Raises :class:`UsageError` for a value of another type,
    :class:`ContinuationError` for a digest mismatch or an unknown baseline.
    """
    if not isinstance(turn, turn_type):
        article = "an" if room[:1] in "aeiou" else "a"
        raise UsageError(f"turn must be {article} {room}.Turn, not {type(turn).__name__}")
    recorded: Any = turn  # a Turn of any room: it has .digest (and .baseline where asked)
    try:
        recomputed = digest(turn)
    except (CallgateError, AttributeError, TypeError):
        recomputed = ""
    if recomputed != recorded.digest:
        raise ContinuationError("the turn was mutated after parsing (digest mismatch)")
    if baseline and recorded.baseline not in REVISIONS:
        raise ContinuationError(f"the turn has an unknown baseline {recorded.baseline!r}")
    return turn
