"""The activities: all the I/O of a run on Temporal, through the loop's and the ledger's code.

- ``model_turn``: :class:`~callgate.temporal._loop.StepLoop` records the request before
  sending it (R5), streams, gates and records the turn with its effects (R1). A retry
  starts from the ledger: a request in doubt is reconciled (fetched back or re-sent once),
  never blindly sent again.
- ``run_effect``: one effect, scheduled with ``activity_id = effect_id``. The ledger claim
  is taken inside the activity; a thread renews the claim's lease and sends Temporal a
  heartbeat carrying the claim's epoch. A retry (a new attempt of the same activity after
  a worker died) first lets the ledger recover the dead attempt: its class decides
  (``read``/``idempotent_remote``: run again; ``verifiable``: the verifier decides;
  ``at_most_once``: ``needs_operator``). An effect that waits for a person fails the
  activity non-retryably (``EffectNeedsDecision``); the workflow then waits for a decision.
- ``effect_status``: where an effect stands after its activity failed (waits out a live
  claim of a dead worker, then recovers it).
- ``decide``: a person's decision (approve, deny, resolve) applied to the ledger.
- ``continue_run``: the continuation from the ledger's stored results (R4).
- ``next_turn``: ``continue_run`` then ``model_turn`` in one activity (what the workflow
  schedules after a turn's effects; ``continue_run`` stays for histories that named it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..ledger import (
    EffectClass,
    EffectRecord,
    EffectState,
    Ledger,
    Tool,
    open_ledger,
)
from ..loop import ToolSpec
from ..loop._transport import _httpx
from ._handles import ActivityThreads, ThreadLedgers
from ._loop import StepLoop, step_of
from ._pulse import Pulse
from ._types import DECIDE, Decision, EffectRef, RunInput, Step

__all__ = ["CallgateActivities"]

FaultHook = Callable[[str], None]


class CallgateActivities:
    """The activities of :class:`~callgate.temporal.CallgateRun`, bound to one ledger.

    ``ledger_url`` (with ``schema``/``scope``) is opened once per thread of the worker's
    activity pool (:meth:`thread_pool`) and reused by every activity that thread runs
    (elsewhere: per activity); there the model side's requests share one HTTP client.
    ``tools`` are the loop's
    :class:`~callgate.loop.ToolSpec` values; ``loop`` the :class:`~callgate.loop.HostLoop`
    keywords for the model side (``protocol``, ``base_url``, ``api_key``, ``model``, ...).
    ``lease_seconds`` is the ledger lease on the run and on each claim; make the
    workflow's ``heartbeat_timeout`` about the same, so Temporal retries an effect about
    when the ledger lets the dead attempt be recovered. ``fault`` is the ledger's fault
    hook (the crash tests kill the worker there)."""

    def __init__(
        self,
        ledger_url: str,
        *,
        tools: Sequence[ToolSpec],
        loop: Mapping[str, Any],
        worker_id: str = "temporal-worker",
        lease_seconds: float = 10.0,
        schema: str | None = None,
        scope: str = "default",
        fault: FaultHook | None = None,
    ) -> None:
        self._url = ledger_url
        self._specs = list(tools)
        self._tools: list[Tool] = [s.tool for s in self._specs]
        self._loop = dict(loop)
        self._worker = worker_id
        self._lease = float(lease_seconds)
        self._schema = schema
        self._scope = scope
        self._fault = fault
        self._ledgers = ThreadLedgers(self.open)
        self._client: Any = None
        self._client_lock = threading.Lock()

    def thread_pool(self, max_workers: int) -> ActivityThreads:
        """The thread pool for these activities: its shutdown closes each thread's
        ledger handle on that thread."""
        return ActivityThreads(max_workers, self._ledgers)

    def close(self) -> None:
        """Close the shared HTTP client (a later activity opens a new one) and the
        calling thread's ledger handle."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self._ledgers.release()

    def all(self) -> list[Callable[..., Any]]:
        """The activity functions, for ``Worker(activities=...)``."""
        return [
            self.model_turn,
            self.continue_run,
            self.next_turn,
            self.run_effect,
            self.effect_status,
            self.decide,
        ]

    def open(self) -> Ledger:
        return open_ledger(
            self._url,
            tools=self._tools,
            scope=self._scope,
            schema=self._schema,
            fault=self._fault,
        )

    def _step_loop(self, ledger: Ledger) -> StepLoop:
        return StepLoop(
            ledger=ledger,
            tools=self._specs,
            worker_id=self._worker,
            lease_seconds=self._lease,
            **self._loop,
            **self._shared_client(),
        )

    def _shared_client(self) -> dict[str, Any]:
        """``client=``: one ``httpx.Client`` (thread-safe) for every model-side activity,
        unless the loop brings its own client or ``send``; only on the threads of
        :meth:`thread_pool` (whose worker closes it)."""
        own = {"client", "send"} & self._loop.keys()
        if "base_url" not in self._loop or own or not self._ledgers.kept():
            return {}
        with self._client_lock:
            if self._client is None:
                timeout = self._loop.get("timeout", 60.0)
                self._client = _httpx().Client(timeout=timeout)
            return {"client": self._client}

    # -- the model side ---------------------------------------------------------------

    @activity.defn(name="callgate.model_turn")
    def model_turn(self, inp: RunInput) -> Step:
        with self._ledgers.use() as ledger, self._step_loop(ledger) as loop, Pulse(self._lease):
            return _busy(step_of(loop.model_turn(inp.run_id, inp.request)), self._lease)

    @activity.defn(name="callgate.continue_run")
    def continue_run(self, run_id: str, turn_seq: int) -> Step:
        with self._ledgers.use() as ledger, self._step_loop(ledger) as loop, Pulse(self._lease):
            return _busy(step_of(loop.continue_run(run_id, turn_seq)), self._lease)

    @activity.defn(name="callgate.next_turn")
    def next_turn(self, run_id: str, turn_seq: int) -> Step:
        """``continue_run`` and, once the continuation is recorded, ``model_turn`` in the
        same activity: one Temporal round trip less per turn. A retry finds the
        continuation recorded and goes on as ``model_turn`` does (R5)."""
        with self._ledgers.use() as ledger, self._step_loop(ledger) as loop, Pulse(self._lease):
            step = _busy(step_of(loop.continue_run(run_id, turn_seq)), self._lease)
            if step.status != "continued":
                return step
            return _busy(step_of(loop.model_turn(run_id, None)), self._lease)

    # -- effects ----------------------------------------------------------------------

    @activity.defn(name="callgate.run_effect")
    def run_effect(self, effect_id: str) -> EffectRef:
        with self._ledgers.use() as ledger:
            effect = self._recovered(ledger, effect_id)
            if effect.state is EffectState.READY:
                effect = self._attempt(ledger, effect)
            if effect.state.value in DECIDE:
                raise ApplicationError(
                    f"effect {effect_id} is {effect.state.value}: a decision is needed",
                    _ref(effect).__dict__,
                    type="EffectNeedsDecision",
                    non_retryable=True,
                )
            return _ref(effect)

    @activity.defn(name="callgate.effect_status")
    def effect_status(self, effect_id: str) -> EffectRef:
        with self._ledgers.use() as ledger:
            return _ref(self._recovered(ledger, effect_id))

    def _recovered(self, ledger: Ledger, effect_id: str) -> EffectRecord:
        """The effect once no dead attempt holds it: an expired claim is recovered (its
        class decides: R2); a live one of another worker makes the activity retry."""
        effect = ledger.effect(effect_id)
        if effect.state in (EffectState.EXECUTING, EffectState.VERIFYING):
            ledger.recover(self._worker)
            effect = ledger.effect(effect_id)
        if effect.state in (EffectState.EXECUTING, EffectState.VERIFYING):
            wait = max(0.1, (effect.lease_until or 0.0) - time.time())
            raise ApplicationError(
                f"effect {effect_id} is claimed by {effect.lease_owner} until its lease ends",
                type="EffectClaimed",
                next_retry_delay=timedelta(seconds=min(wait, self._lease)),
            )
        if effect.state is EffectState.UNKNOWN and effect.effect_class is EffectClass.VERIFIABLE:
            effect = ledger.verify(effect_id, worker_id=self._worker, lease_seconds=self._lease)
        return effect

    def _attempt(self, ledger: Ledger, effect: EffectRecord) -> EffectRecord:
        tool = ledger.tool(effect.tool)
        if tool is None:
            raise ApplicationError(f"tool {effect.tool!r} is not registered", non_retryable=True)
        claim = ledger.claim(effect.effect_id, worker_id=self._worker, lease_seconds=self._lease)
        if claim is None:  # another attempt took it between our read and our claim
            return self._recovered(ledger, effect.effect_id)
        with Pulse(self._lease, ledger, claim):
            return ledger.run_claim(claim, tool)

    # -- decisions --------------------------------------------------------------------

    @activity.defn(name="callgate.decide")
    def decide(self, decision: Decision) -> EffectRef:
        with self._ledgers.use() as ledger:
            if decision.kind == "approve":
                ledger.approve(decision.effect_id, actor=decision.actor, reason=decision.reason)
            elif decision.kind == "deny":
                ledger.deny(decision.effect_id, actor=decision.actor, reason=decision.reason)
            elif decision.kind == "resolve":
                ledger.resolve(
                    decision.effect_id,
                    expected_version=decision.expected_version,
                    decision_id=decision.decision_id,
                    action=decision.action,
                    result=decision.result,
                    reason=decision.reason,
                    actor=decision.actor,
                )
            else:
                raise ApplicationError(
                    f"unknown decision kind {decision.kind!r}", non_retryable=True
                )
            return _ref(ledger.effect(decision.effect_id))


def _busy(step: Step, lease_seconds: float) -> Step:
    """A run another worker holds (a dead worker's run lease not yet run out) or took: the
    activity is retried after a while, never answered with a half-done step."""
    if step.status == "lease_lost" or (step.status == "waiting" and not step.effects):
        raise ApplicationError(
            step.detail or step.status,
            type="RunBusy",
            next_retry_delay=timedelta(seconds=lease_seconds / 2),
        )
    return step


def _ref(effect: EffectRecord) -> EffectRef:
    return EffectRef(effect.effect_id, effect.effect_class.value, effect.state.value)
