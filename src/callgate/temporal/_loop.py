"""The host loop cut at its effects: the model side of a run as two Temporal activities.

:class:`StepLoop` is :class:`~callgate.loop.HostLoop` with one step changed: where the
plain loop runs a recorded turn's effects itself, ``model_turn`` stops and hands them to
the workflow, which runs each as an activity of its own. Everything else (recording the
request before it is sent, reconciling one in doubt by R5, the strict parse, the gate,
``record_turn``, the run lease and its keeper) is the loop's own code, unchanged.
"""

from __future__ import annotations

from typing import Any

from ..ledger import RequestRecord, RequestState, RunLease
from ..loop import HostLoop, LoopResult
from ..loop._wire import reparse
from ._types import EffectRef, Step

__all__ = ["StepLoop", "step_of"]


class StepLoop(HostLoop):
    """``model_turn(run_id, request)``: advance the model side until a turn is recorded
    (``effects``) or the run ends; ``continue_run(run_id, turn_seq)``: record the
    continuation carrying that turn's stored results (R4), or say what it waits for."""

    def __enter__(self) -> StepLoop:
        return self

    def model_turn(self, run_id: str, request: Any) -> LoopResult:
        if not self._ledger.requests(run_id):
            return self.run(run_id, request)
        return self.resume(run_id)

    def _after_turn(
        self, run_id: str, lease: RunLease, req: RequestRecord, seq: int
    ) -> LoopResult | None:
        turn = reparse(self._adapter.room(), self._ledger.turn_snapshot(run_id, seq))
        if self._adapter.kind(turn) == "final":
            return self._result(run_id, "final", text=turn.text)
        return self._result(run_id, "effects", pending=tuple(self._turn_effects(run_id, seq)))

    def continue_run(self, run_id: str, turn_seq: int) -> LoopResult:
        """Idempotent: a continuation already recorded for ``turn_seq`` is not recorded
        again. ``waiting`` while any of the turn's effects is open."""
        lease = self._open(run_id)
        if isinstance(lease, LoopResult):
            return lease
        try:
            requests = self._ledger.requests(run_id)
            req = requests[-1]
            seq = sum(1 for r in requests if r.state is RequestState.TURN_PERSISTED)
            if req.state is not RequestState.TURN_PERSISTED or seq != turn_seq:
                return self._result(run_id, "continued")
            turn = reparse(self._adapter.room(), self._ledger.turn_snapshot(run_id, seq))
            results = self._ledger.results(run_id, seq)
            if results is None:
                return self._result(run_id, "waiting", detail=f"turn {seq} has open effects")
            body = self._adapter.next(turn, results, req.body, self._cfg)
            self._record(run_id, lease, body, carries=seq)
            return self._result(run_id, "continued")
        finally:
            self._close(lease)


def step_of(result: LoopResult) -> Step:
    """The loop's result as the workflow sees it (JSON-safe)."""
    effects = [EffectRef(e.effect_id, e.effect_class.value, e.state.value) for e in result.pending]
    seq = max((e.turn_seq for e in result.pending), default=result.turns)
    return Step(result.status, seq, effects, result.text, result.detail)
