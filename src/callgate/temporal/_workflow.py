"""The workflow: one callgate run, orchestrating only (deterministic, no I/O).

Its id is the callgate ``run_id``. It asks ``model_turn`` for the next recorded turn,
schedules one activity per open effect (``activity_id = effect_id``, the retry policy of
the effect's class: :func:`retry_policy_for`), waits for a person where the ledger says
one must decide (the ``decide`` update runs the decision through the ledger), and asks
``next_turn`` to record the continuation from the stored results (R4) and send it. The ledger
stays the source of truth; Temporal owns the scheduling, the timers and the retries.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ._types import DECIDE, SETTLED, Decision, EffectRef, RunInput, RunOutcome, Step

__all__ = ["CallgateRun", "Timing", "retry_policy_for"]

# Errors a retry cannot fix: a decision is needed, or the ledger refused a decision.
_FINAL_ERRORS = ["EffectNeedsDecision", "ConflictError", "ApprovalError", "UsageError"]


@dataclasses.dataclass
class Timing:
    """Timeouts of the run's activities, in seconds. ``heartbeat`` should be about the
    workers' ledger ``lease_seconds``: a worker killed mid-effect is retried after it."""

    heartbeat: float = 10.0
    model_turn: float = 600.0
    effect: float = 3600.0
    retry_initial: float = 0.5
    retry_max: float = 10.0


def retry_policy_for(effect_class: str, timing: Timing | None = None) -> RetryPolicy:
    """``at_most_once``: one attempt (a lost one waits for an operator). Every other class:
    retried; the activity lets the ledger recover the lost attempt first, so a retry runs
    the tool again only where its class allows (``read``, ``idempotent_remote``: the
    remote dedups on ``ctx.idempotency_token``; ``verifiable``: after ``verify()`` said
    not applied; ``local_tx``: the attempt rolled back)."""
    t = timing or Timing()
    return RetryPolicy(
        initial_interval=timedelta(seconds=t.retry_initial),
        maximum_interval=timedelta(seconds=t.retry_max),
        maximum_attempts=1 if effect_class == "at_most_once" else 0,
        non_retryable_error_types=_FINAL_ERRORS,
    )


@workflow.defn(name="callgate-run")
class CallgateRun:
    def __init__(self) -> None:
        self._waiting: dict[str, EffectRef] = {}
        self._decided: dict[str, int] = {}
        self._decisions = 0
        self._timing = Timing()

    @workflow.run
    async def run(self, inp: RunInput, timing: Timing | None = None) -> RunOutcome:
        self._timing = timing or Timing()
        step = await self._model(RunInput(inp.run_id, inp.request))
        turns = 0
        while step.status == "effects":
            turns += 1
            await asyncio.gather(*(self._effect(r) for r in step.effects if r.state not in SETTLED))
            # The continuation from the stored results (R4) and the next turn, in one
            # activity; "continued" only if the run has no request to send after it.
            step = await workflow.execute_activity(
                "callgate.next_turn",
                args=[inp.run_id, step.turn_seq],
                result_type=Step,
                start_to_close_timeout=timedelta(seconds=self._timing.model_turn),
                heartbeat_timeout=self._heartbeat(),
                retry_policy=self._retry(),
            )
        return RunOutcome(step.status, step.text, step.detail, turns, self._decisions)

    async def _model(self, inp: RunInput) -> Step:
        step: Step = await workflow.execute_activity(
            "callgate.model_turn",
            inp,
            result_type=Step,
            start_to_close_timeout=timedelta(seconds=self._timing.model_turn),
            heartbeat_timeout=self._heartbeat(),
            retry_policy=self._retry(),
        )
        return step

    async def _effect(self, ref: EffectRef) -> None:
        attempt = 0
        while True:
            seen = self._decided.get(ref.effect_id, 0)  # decisions made from here on count
            try:
                ref = await workflow.execute_activity(
                    "callgate.run_effect",
                    ref.effect_id,
                    result_type=EffectRef,
                    activity_id=ref.effect_id if attempt == 0 else f"{ref.effect_id}/{attempt}",
                    retry_policy=retry_policy_for(ref.effect_class, self._timing),
                    start_to_close_timeout=timedelta(seconds=self._timing.effect),
                    heartbeat_timeout=timedelta(seconds=self._timing.heartbeat),
                )
            except ActivityError:  # a decision is needed, or the one attempt was lost
                ref = await workflow.execute_activity(
                    "callgate.effect_status",
                    ref.effect_id,
                    result_type=EffectRef,
                    start_to_close_timeout=timedelta(seconds=self._timing.model_turn),
                    heartbeat_timeout=self._heartbeat(),
                    retry_policy=self._retry(),
                )
            attempt += 1
            if ref.state in SETTLED:
                return
            if ref.state in DECIDE:
                await self._decision(ref, seen)

    async def _decision(self, ref: EffectRef, seen: int) -> None:
        """Wait until a decision on this effect was applied after ``seen`` ones."""
        effect_id = ref.effect_id
        self._waiting[effect_id] = ref
        await workflow.wait_condition(lambda: self._decided.get(effect_id, 0) > seen)
        self._waiting.pop(effect_id, None)

    def _heartbeat(self) -> timedelta:
        return timedelta(seconds=self._timing.heartbeat)

    def _retry(self) -> RetryPolicy:
        t = self._timing
        return RetryPolicy(
            initial_interval=timedelta(seconds=t.retry_initial),
            maximum_interval=timedelta(seconds=t.retry_max),
            non_retryable_error_types=_FINAL_ERRORS,
        )

    @workflow.update
    async def decide(self, decision: Decision) -> EffectRef:
        """A person's decision (approve, deny, resolve) on a waiting effect, applied by the
        ledger; the ledger's refusal (stale version, wrong state) fails the update."""
        ref: EffectRef = await workflow.execute_activity(
            "callgate.decide",
            decision,
            result_type=EffectRef,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=self._retry(),
        )
        self._decisions += 1
        self.decided(decision.effect_id)
        return ref

    @workflow.signal
    def decided(self, effect_id: str) -> None:
        """A decision on ``effect_id`` was made outside the workflow (``callgate ledger
        approve|deny|resolve``): look at the effect again."""
        self._decided[effect_id] = self._decided.get(effect_id, 0) + 1

    @workflow.query
    def waiting(self) -> list[EffectRef]:
        """The effects that wait for a decision now."""
        return list(self._waiting.values())
