"""One ``_on_<x>`` per row of :data:`._state.TRANSITIONS`, over one stream's turn state.

:class:`Handlers` holds what a stream has built so far (the interaction id and status, the
steps in ``step.start`` order, the open per-index accumulators, the calls counted) and
reacts to one routed, already deduplicated event at a time. The parser composes one
instance and dispatches to its bound methods by table; it never inherits from it.
Handlers raise callgate errors (a stray exception is converted at the parser's boundary).
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    CallgateError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from .._limits import Limits, room_for_one_more
from ._assembly import StepAccumulator, check_step, delta_routes
from ._events import (
    CLIENT_STEP,
    INPUT_STEPS,
    INT32_MAX,
    INT32_MIN,
    baseline_deltas,
    baseline_steps,
)
from ._hosted import Pairing
from ._turn import FunctionCall, Turn, make_turn, provider_error, release_calls

__all__ = ["Handlers", "check_lifecycle", "index_error"]


def index_error(index: Any) -> CallgateError:
    """The error for a step event whose ``index`` names no open step."""
    if type(index) is not int:
        return SchemaError("step event 'index' must be an integer")
    if not INT32_MIN <= index <= INT32_MAX:
        return SchemaError(f"step event index {index} is outside int32")
    return SequenceError(f"no open step at index {index}")


def check_lifecycle(obj: dict[str, Any]) -> dict[str, Any]:
    """The ``interaction`` of a created/completed event, its id and status checked."""
    interaction = obj.get("interaction")
    if type(interaction) is not dict:
        raise SchemaError("lifecycle event needs an 'interaction' object")
    interaction_id, status = interaction.get("id"), interaction.get("status")
    # The SSE interaction types 'id' as a required str; it is "" when the request said
    # store: false (the stream's turn then has interaction_id None).
    if type(interaction_id) is not str:
        raise SchemaError("lifecycle interaction needs a string 'id' ('' when unstored)")
    if type(status) is not str:
        raise SchemaError("interaction needs a string 'status'")
    steps = interaction.get("steps")
    if steps is not None:
        if type(steps) is not list:
            raise SchemaError("interaction 'steps' must be a list")
        if steps:
            # The stream's deltas are the source of truth; a second, embedded copy would
            # need reconciling, which callgate does not do: fail closed.
            raise UnsupportedProviderState("a lifecycle event embeds steps in a stream")
    return interaction


class Handlers:
    """The turn state of one stream and the handlers named in the transition table."""

    __slots__ = (
        "baseline",
        "call_ids",
        "interaction_id",
        "known_deltas",
        "known_steps",
        "limits",
        "n_calls",
        "opaque",
        "open",
        "pairing",
        "result",
        "routes",
        "status",
        "steps",
        "usage",
        "warnings",
    )

    def __init__(self, limits: Limits, baseline: str) -> None:
        self.limits = limits
        self.baseline = baseline
        self.known_steps = baseline_steps(baseline)
        self.known_deltas = baseline_deltas(baseline)
        self.routes = delta_routes(baseline)
        self.interaction_id = ""
        self.status = ""
        self.usage: dict[str, Any] | None = None
        self.open: dict[int, StepAccumulator] = {}
        self.steps: list[dict[str, Any]] = []
        self.opaque: dict[int, str] = {}  # position -> why it is not provably complete
        self.warnings: list[str] = []  # telemetry the stream got wrong (hosted, usage)
        self.pairing = Pairing(self.warnings)
        self.n_calls = 0
        self.call_ids: set[str] = set()
        self.result: Turn | None = None

    def turn(self, calls: tuple[FunctionCall, ...]) -> Turn:
        """The turn built so far (partial when ``calls`` is empty and no terminal came)."""
        try:
            return make_turn(
                interaction_id=self.interaction_id or None,  # "" = unstored: no id
                status=self.status,
                steps=tuple(self.steps),
                calls=calls,
                usage=self.usage,
                origin="stream",
                baseline=self.baseline,
                opaque=tuple(sorted(self.opaque)),
                opaque_reasons=tuple(self.opaque[p] for p in sorted(self.opaque)),
                warnings=tuple(self.warnings),
            )
        except UsageError as exc:  # only past the digest's own depth bound
            raise SchemaError(f"turn cannot be canonicalised: {exc.message}") from None

    # -- handlers (named in _state.TRANSITIONS) --------------------------------------

    def _on_created(self, obj: dict[str, Any]) -> None:
        interaction = check_lifecycle(obj)
        self.interaction_id = interaction["id"]
        self.status = interaction["status"]

    def _on_status_update(self, obj: dict[str, Any]) -> None:
        # Informative only (the terminal's status decides): nothing in it is required.
        interaction_id, status = obj.get("interaction_id"), obj.get("status")
        for key, value in (("interaction_id", interaction_id), ("status", status)):
            if value is not None and type(value) is not str:
                raise SchemaError(f"status_update '{key}' must be a string")
        if interaction_id is not None and interaction_id != self.interaction_id:
            raise SequenceError(f"status_update for another interaction {interaction_id!r}")
        if status is not None:
            self.status = status

    def _on_step_start(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        if type(index) is not int or not INT32_MIN <= index <= INT32_MAX:
            raise index_error(index)
        if index in self.open:
            raise SequenceError(f"step.start on index {index}, which is already open")
        step = obj.get("step")
        kind = check_step(step, self.known_steps, self.baseline, self.warnings)
        if kind in INPUT_STEPS:
            raise SequenceError(f"a streamed model turn cannot hold a {kind} (input) step")
        limits = self.limits
        room_for_one_more(len(self.steps), limits, "steps in one turn")
        if kind == CLIENT_STEP:
            call_id = step["id"]  # type: ignore[index]
            if call_id in self.call_ids:
                raise SequenceError(f"duplicate function_call id {call_id!r} in one turn")
            if self.n_calls >= limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many function calls in one turn",
                    limit="max_calls_per_turn",
                    bound=limits.max_calls_per_turn,
                    observed=self.n_calls + 1,
                )
            self.n_calls += 1
            self.call_ids.add(call_id)
        self.pairing.see(step, kind)  # type: ignore[arg-type]
        self.open[index] = StepAccumulator(
            step,  # type: ignore[arg-type]
            kind,
            len(self.steps),
            self.routes[kind],
            limits,
        )
        self.steps.append(step)  # type: ignore[arg-type]

    def _on_step_delta(self, obj: dict[str, Any]) -> None:
        # The hot path: one dict lookup for the step, one for the delta kind, one call.
        index = obj.get("index")
        acc = self.open.get(index) if type(index) is int else None
        if acc is None:
            raise index_error(index)
        delta = obj.get("delta")
        if type(delta) is not dict:
            raise SchemaError("step.delta needs a 'delta' object")
        kind = delta.get("type")
        # The routes are keyed by str: a list or object 'type' must not reach the lookup
        # (it is unhashable, and would escape as a bare TypeError).
        apply = acc.routes.get(kind) if type(kind) is str else None
        if apply is None:
            raise self._delta_error(acc, kind)
        apply(acc, delta)

    def _delta_error(self, acc: StepAccumulator, delta_type: Any) -> CallgateError:
        if type(delta_type) is not str:
            return SchemaError("a delta has no string 'type'")
        if delta_type not in self.known_deltas:
            return UnsupportedProviderState(
                f"delta type {delta_type!r} is unknown to contract revision {self.baseline}",
                wire_type=delta_type,
            )
        return SequenceError(f"a {delta_type} delta cannot extend a {acc.kind} step")

    def _on_step_stop(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        acc = self.open.pop(index, None) if type(index) is int else None
        if acc is None:
            raise index_error(index)
        self.steps[acc.position] = acc.finish()
        if acc.opaque:
            self.opaque[acc.position] = acc.why

    def _on_completed(self, obj: dict[str, Any]) -> None:
        if self.open:
            raise SequenceError(
                f"interaction.completed while step index(es) {sorted(self.open)} are open"
            )
        interaction = check_lifecycle(obj)
        # Exact equality, "" included: an unstored stream stays unstored to its end.
        if interaction["id"] != self.interaction_id:
            raise SequenceError(f"interaction.completed for another id {interaction['id']!r}")
        self.status = status = interaction["status"]
        usage = interaction.get("usage")
        if usage is not None and type(usage) is not dict:  # telemetry: never a refusal
            self.warnings.append("interaction 'usage' is not an object: ignored")
            usage = None
        self.usage = usage
        pending = tuple(
            FunctionCall(
                call_id=step["id"], name=step["name"], arguments=step["arguments"], step=step
            )
            for step in self.steps
            if step["type"] == CLIENT_STEP
        )
        calls = release_calls(status, pending, interaction.get("errors"))
        self.result = self.turn(calls)

    def _on_error(self, obj: dict[str, Any]) -> None:
        raise provider_error(obj.get("error"), "the provider sent an error event")

    def _on_early_done(self, obj: None) -> None:
        raise TruncatedStreamError("data: [DONE] arrived before interaction.completed")

    def _on_done(self, obj: None) -> None:
        """``[DONE]`` after the terminal: nothing more may follow."""
