"""What the workflow and the activities pass each other: plain dataclasses, no I/O.

The workflow's sandbox imports this module: it must stay stdlib-only (no callgate
imports), so Temporal's default data converter carries every value as JSON.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Decision", "EffectRef", "RunInput", "RunOutcome", "Step"]

# Effect states after which nothing more happens to an effect (before delivery).
SETTLED = ("committed", "failed", "rejected", "delivered")
# Effect states that wait for a person: an operator's resolve, an approval or a denial.
DECIDE = ("unknown", "needs_operator", "awaiting_approval")


@dataclasses.dataclass
class RunInput:
    """Start (or go on with) the callgate run ``run_id`` (the workflow id) with ``request``
    (the user's text or the protocol's request fields; ignored once the run exists)."""

    run_id: str
    request: Any = None


@dataclasses.dataclass
class EffectRef:
    """One effect of a recorded turn, as the workflow schedules it."""

    effect_id: str
    effect_class: str
    state: str


@dataclasses.dataclass
class Step:
    """What ``model_turn`` / ``continue_run`` / an effect activity found: ``status`` is
    the loop's (``final``, ``waiting``, ``held``, ``refused``, ``lease_lost``) or
    ``effects`` (a turn with calls is recorded: ``turn_seq`` and its ``effects``), or
    ``continued`` (the continuation is recorded)."""

    status: str
    turn_seq: int = 0
    effects: list[EffectRef] = dataclasses.field(default_factory=list)
    text: str = ""
    detail: str = ""


@dataclasses.dataclass
class Decision:
    """A person's decision on a waiting effect, delivered by the ``decide`` update.

    ``kind``: ``approve`` / ``deny`` (an ``awaiting_approval`` effect) or ``resolve``
    (``unknown`` / ``needs_operator``: ``action`` commit, fail or retry, with the
    ledger's ``expected_version`` and an idempotent ``decision_id``)."""

    effect_id: str
    kind: str
    actor: str
    reason: str = ""
    action: str = ""
    expected_version: int = 0
    decision_id: str = ""
    result: Any = None


@dataclasses.dataclass
class RunOutcome:
    """How the workflow ended: the loop's status, the final text, and how many effect
    activities and operator decisions it took."""

    status: str
    text: str = ""
    detail: str = ""
    turns: int = 0
    decisions: int = 0
