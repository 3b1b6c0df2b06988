"""The ledger's gate for a tool that callgate's loop does not run.

A framework (pydantic-ai's Temporal durable execution, the OpenAI Agents SDK's Temporal
integration) runs each tool call in a Temporal activity, which is at-least-once: a worker
killed after the tool's side effect and before the activity completed runs it again. The
guard puts the ledger between the activity and the side effect. Each call is keyed by the
tool's business key and the digest of its arguments, never by the provider's call id (a
re-posted turn gets new ones) nor by Temporal's default activity id (a sequence number
other workflows reuse): the same intent, asked again by a retried activity or a re-posted
turn, is the same effect, and the ledger decides by the tool's class whether it may run
(once; again after a lost attempt where the class allows; never without an operator for
``at_most_once``). A committed effect gives back its recorded result.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from .._digest import canonical_digest
from .._errors import CallgateError, UsageError
from ..ledger import (
    CallInput,
    EffectClass,
    EffectRecord,
    EffectState,
    Ledger,
    RunBusyError,
    Tool,
    ToolContext,
    TurnInput,
    open_ledger,
)
from ._pulse import Pulse

__all__ = ["GuardError", "ToolGuard", "guarded"]

F = TypeVar("F", bound=Callable[..., Any])


class GuardError(CallgateError):
    """The ledger did not let the tool run: ``state`` is the effect's (``needs_operator``,
    ``unknown``, ``awaiting_approval``, ``rejected``, or ``executing`` under another
    worker's live claim); ``effect_id`` names it for ``callgate ledger``. Retryable only
    for ``executing`` (the claim's lease will run out)."""

    def __init__(self, message: str, *, effect_id: str, state: str) -> None:
        super().__init__(message)
        self.effect_id = effect_id
        self.state = state
        self.retryable = state == EffectState.EXECUTING.value


class ToolGuard:
    """Gate calls of the function ``fn`` (keyword arguments, JSON values) through the ledger.

    ``business_key(arguments) -> str`` names the intent (an order id, a payment
    reference). ``effect`` is the tool's class; ``verify`` its verifier for
    ``verifiable`` (:class:`~callgate.ledger.Tool`). ``fn`` may take a ``ctx``
    keyword-only parameter to receive the :class:`~callgate.ledger.ToolContext` (its
    ``idempotency_token`` for the remote)."""

    def __init__(
        self,
        ledger_url: str,
        fn: Callable[..., Any],
        *,
        business_key: Callable[[dict[str, Any]], str],
        effect: EffectClass = EffectClass.AT_MOST_ONCE,
        verify: Callable[[Any, ToolContext], Any] | None = None,
        name: str | None = None,
        worker_id: str = "guard",
        lease_seconds: float = 10.0,
        schema: str | None = None,
        scope: str = "default",
    ) -> None:
        if not callable(fn) or not callable(business_key):
            raise UsageError("ToolGuard takes a function and a business_key function")
        self.name = name or fn.__name__
        self._fn = fn
        self._key = business_key
        self._url, self._schema, self._scope = ledger_url, schema, scope
        self._worker = worker_id
        self._lease = float(lease_seconds)
        self._takes_ctx = "ctx" in inspect.signature(fn).parameters
        self.tool = Tool(
            self.name,
            self._run,
            effect=effect,
            verify=verify,
            business_key=lambda a: str(business_key(a)),
        )

    def _run(self, arguments: Any, ctx: ToolContext) -> Any:
        if self._takes_ctx:
            return self._fn(**arguments, ctx=ctx)
        return self._fn(**arguments)

    def key(self, arguments: dict[str, Any]) -> str:
        """The ledger run that stands for this intent: business key + argument digest."""
        digest = canonical_digest(
            {"tool": self.name, "key": self._key(arguments), "args": arguments}
        )
        return f"guard-{digest[:40]}"

    def __call__(self, **arguments: Any) -> Any:
        """Run the call through the ledger; return the tool's (recorded) result."""
        with open_ledger(
            self._url, tools=[self.tool], schema=self._schema, scope=self._scope
        ) as ledger:
            effect = self._record(ledger, arguments)
            effect = self._advance(ledger, effect)
        if effect.state in (EffectState.COMMITTED, EffectState.DELIVERED):
            return effect.result.output if effect.result is not None else None
        if effect.state is EffectState.FAILED and effect.result is not None:
            raise GuardError(
                str(effect.result.output), effect_id=effect.effect_id, state=effect.state.value
            )
        raise GuardError(
            f"tool {self.name!r} may not run: its effect {effect.effect_id} is "
            f"{effect.state.value}" + (f" ({effect.result.output})" if effect.result else ""),
            effect_id=effect.effect_id,
            state=effect.state.value,
        )

    def _record(self, ledger: Ledger, arguments: dict[str, Any]) -> EffectRecord:
        run_id = self.key(arguments)
        found = ledger.effects(run_id)
        if found:
            return found[0]
        try:
            lease = ledger.acquire_run(run_id, worker_id=self._worker, lease_seconds=self._lease)
        except RunBusyError as busy:
            raise GuardError(str(busy), effect_id="", state="executing") from None
        try:
            found = ledger.effects(run_id)
            if found:
                return found[0]
            turn_id = f"{run_id}-turn"
            req = ledger.record_request(
                run_id,
                provider="guard",
                request_digest=run_id,
                body={"tool": self.name},
                lease=lease,
            )
            ledger.mark_sent(req.request_id, lease=lease)
            ledger.identify(req.request_id, turn_id, lease=lease)
            call = CallInput(run_id, self.name, arguments)
            turn = TurnInput("guard", turn_id, run_id, {"tool": self.name}, [call])
            (effect,) = ledger.record_turn(req.request_id, turn, lease=lease)
            return effect
        finally:
            ledger.release_run(lease)

    def _advance(self, ledger: Ledger, effect: EffectRecord) -> EffectRecord:
        if effect.state in (EffectState.EXECUTING, EffectState.VERIFYING):
            ledger.recover(self._worker)
            effect = ledger.effect(effect.effect_id)
        if effect.state is EffectState.UNKNOWN and effect.effect_class is EffectClass.VERIFIABLE:
            effect = ledger.verify(effect.effect_id, worker_id=self._worker)
        if effect.state is EffectState.READY:
            claim = ledger.claim(
                effect.effect_id, worker_id=self._worker, lease_seconds=self._lease
            )
            if claim is None:  # another attempt claimed it first
                return ledger.effect(effect.effect_id)
            with Pulse(self._lease, ledger, claim, temporal=False):  # a tool may outlast the lease
                return ledger.run_claim(claim, self.tool)
        return effect


def guarded(ledger_url: str, **options: Any) -> Callable[[F], F]:
    """Decorator form of :class:`ToolGuard`: the function keeps its name and signature
    (frameworks read its parameters for the tool's schema) and runs through the ledger."""

    def wrap(fn: F) -> F:
        guard = ToolGuard(ledger_url, fn, **options)

        # The framework's view: the tool's own parameters, without callgate's ``ctx``.
        full = inspect.signature(fn)
        signature = full.replace(parameters=[p for n, p in full.parameters.items() if n != "ctx"])

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return guard(**bound.arguments)

        call.__signature__ = signature  # type: ignore[attr-defined]
        call.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != "ctx"}
        call.guard = guard  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap
