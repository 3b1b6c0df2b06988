"""What a failed model request does: refuse the turn, spend the loop's retry budget,
replay a lost Anthropic thread, or stop for a lost lease (a base of the loop's core).

An HTTP error before any event is definite (the provider started no turn); a transport
error leaves the request ``sent``/``identified`` for the next step to reconcile (R5); a
protocol error refuses the turn. :class:`~callgate.ledger.LeaseLostError` passes through
untouched: another worker has the run, so nothing more is written.
"""

from __future__ import annotations

from typing import Any

from .._errors import CallgateError
from ..ledger import (
    REQUEST_TRANSITIONS,
    LeaseLostError,
    Ledger,
    RequestEvent,
    RequestRecord,
    RunLease,
)
from ._model import LoopResult, ProviderHTTPError
from ._threads import lost_thread, replay_in_new_thread
from ._transport import is_transport_error

__all__ = ["Failures", "Got"]

# What a send or fetch gives the step: (turn, snapshot, turn id), an outcome, or None
# (nothing more now: the next step goes on from the ledger).
Got = tuple[Any, Any, str] | LoopResult | None


class Failures:
    """Failure handling; needs the ledger, the retry budget, ``_record`` and ``_result``
    from the loop's core."""

    _ledger: Ledger
    _retries: int
    _max_retries: int
    _backoff: float
    _sleep_for: float

    def _record(
        self, run_id: str, lease: RunLease, body: dict[str, Any], *, carries: int | None
    ) -> None:
        raise NotImplementedError

    def _result(
        self, run_id: str, status: str, *, error: CallgateError | None = None, detail: str = ""
    ) -> LoopResult:
        raise NotImplementedError

    def _post_failed(self, req: RequestRecord, lease: RunLease, exc: Exception) -> Got:
        """A send raised: refuse, retry within the budget, or re-raise what is not ours."""
        if isinstance(exc, LeaseLostError):
            raise exc  # another worker has the run: write nothing more
        if isinstance(exc, ProviderHTTPError):
            # An HTTP error before any event: the provider started no turn (definite).
            self._ledger.request_failed(req.request_id, definite=True, reason=str(exc), lease=lease)
            if lost_thread(exc, req.body):  # expired, or continued by a lost attempt
                self._replay_thread(req, lease)
                return None
            if exc.retryable and self._spend_retry(exc.retry_after):
                self._record(req.run_id, lease, req.body, carries=req.carries_turn)
                return None
            return self._refuse(req.run_id, req, lease, exc, failed=True)
        if isinstance(exc, CallgateError):  # the stream broke a protocol rule: nothing runs
            return self._refuse(req.run_id, req, lease, exc)
        if is_transport_error(exc) and self._spend_retry():
            return None  # SENT or IDENTIFIED: the next step retries or reconciles (R5)
        raise exc

    def _replay_thread(self, req: RequestRecord, lease: RunLease) -> None:
        """The whole conversation in a new thread, rebuilt from the ledger (loop/_threads)."""
        requests = self._ledger.requests(req.run_id)
        body = replay_in_new_thread(
            requests, lambda seq: self._ledger.turn_snapshot(req.run_id, seq), req
        )
        self._record(req.run_id, lease, body, carries=req.carries_turn)

    def _spend_retry(self, retry_after: float | None = None) -> bool:
        """Take one retry from the budget; the driver waits ``_sleep_for`` before the next
        step (time.sleep or asyncio.sleep): the backoff, or the provider's ``retry_after``
        when it asked for longer."""
        if self._retries >= self._max_retries:
            return False
        self._retries += 1
        self._sleep_for = max(self._backoff * self._retries, retry_after or 0.0)
        return True

    def _fetch_failed(self, req: RequestRecord, lease: RunLease, exc: Exception) -> Got:
        if isinstance(exc, LeaseLostError):
            raise exc
        if isinstance(exc, ProviderHTTPError):
            if exc.retryable and self._spend_retry(exc.retry_after):
                return None
            self._ledger.request_failed(
                req.request_id, definite=False, reason=str(exc), lease=lease
            )
            return None  # unknown: the next step re-sends
        if isinstance(exc, CallgateError):
            return self._refuse(req.run_id, req, lease, exc)
        if is_transport_error(exc) and self._spend_retry():
            return None
        raise exc

    def _refuse(
        self,
        run_id: str,
        req: RequestRecord,
        lease: RunLease,
        exc: CallgateError,
        *,
        failed: bool = False,
    ) -> LoopResult:
        if not failed:
            current = self._ledger.request(req.request_id)
            if (current.state, RequestEvent.FAIL) in REQUEST_TRANSITIONS:
                self._ledger.request_failed(
                    req.request_id,
                    definite=True,
                    reason=f"refused: {type(exc).__name__}: {exc}",
                    lease=lease,
                )
        return self._result(run_id, "refused", error=exc, detail=f"{type(exc).__name__}: {exc}")
