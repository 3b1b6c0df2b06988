"""callgate.temporal: a callgate run as a Temporal workflow (extra ``temporal``).

The ledger stays the source of truth for turns and effects; Temporal schedules, times
and retries. :class:`CallgateRun` is the workflow (its id is the run id),
:class:`CallgateActivities` the activities over one ledger, :func:`new_worker` a worker
running both, :func:`guarded` the ledger's gate for a framework's tool run inside a
Temporal activity (pydantic-ai, openai-agents). See docs/temporal.md. The core never
imports this package.
"""

from ._activities import CallgateActivities
from ._guard import ToolGuard, guarded
from ._types import Decision, EffectRef, RunInput, RunOutcome, Step
from ._worker import new_worker, start_dev_server
from ._workflow import CallgateRun, Timing, retry_policy_for

__all__ = [
    "CallgateActivities",
    "CallgateRun",
    "Decision",
    "EffectRef",
    "RunInput",
    "RunOutcome",
    "Step",
    "Timing",
    "ToolGuard",
    "guarded",
    "new_worker",
    "retry_policy_for",
    "start_dev_server",
]
