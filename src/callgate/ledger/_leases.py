"""Keeping leases alive while a worker waits: :class:`LeaseKeeper`.

A run lease (and an effect claim) is a promise on the database clock that runs out after
``lease_seconds`` unless renewed. A worker that waits longer than that on something it
does not control (a model thinking for minutes before its first byte, a long stream, a
slow tool) must renew it without waiting for that something to return, so the keeper
renews from a thread of its own, over a connection of its own (a SQLite connection
belongs to the thread that opened it; a PostgreSQL one serves one transaction at a time).

It renews when a third of the lease has passed since the previous renewal started, so a
renewal may be late by two thirds of the lease before anything expires; one database
write per lease third, whatever the stream does, and none at all for a step shorter
than that (the thread then never opens its connection). The local clock only measures
elapsed time from before a renewal was sent, which is never later than the database's
``now`` that renewal used: the expiry is always at least as far off as the keeper thinks.

Renewals are fenced by epoch, like every write under a lease: one that finds the run at
a newer epoch (another worker took it) records :class:`LeaseLostError` in :attr:`lost`
and stops renewing; :meth:`check` raises it in the worker's thread. A claim whose renewal
is fenced (settled, or recovered after it ran out) is dropped quietly: its settle is
fenced by the same epoch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._model import Claim, FencedError, LeaseLostError, RunLease

if TYPE_CHECKING:
    from ._ledger import Ledger

__all__ = ["LeaseKeeper"]

RENEW_FRACTION = 1 / 3
_RETRY_FLOOR = 0.05  # seconds between attempts after a failed renewal (database away)


class LeaseKeeper:
    """Renew ``lease`` (and the claims handed to :meth:`holding`) every third of
    ``lease_seconds`` from a daemon thread, between :meth:`start` and :meth:`stop` (or
    ``with keeper:``).

    The worker calls :meth:`check` where it can stop cheaply (between stream events,
    between steps); it raises :class:`LeaseLostError` once a renewal found the run taken.
    A renewal that fails for another reason (the database unreachable) is retried at
    the next tick; the lease's epoch still fences every write. Not reusable after
    :meth:`stop`.
    """

    def __init__(self, ledger: Ledger, lease: RunLease, *, lease_seconds: float) -> None:
        self._ledger = ledger
        self.lease = lease
        self._lease_seconds = float(lease_seconds)
        self._every = self._lease_seconds * RENEW_FRACTION
        self._claims: dict[str, Claim] = {}
        self._guard = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._keep, name=f"callgate-lease-{lease.run_id}", daemon=True
        )
        self.lost: LeaseLostError | None = None
        self.renewals = 0

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing and wait for the thread (at most one renewal in flight)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> LeaseKeeper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check(self) -> None:
        """Raise :class:`LeaseLostError` if a renewal found the run lease lost."""
        if self.lost is not None:
            raise self.lost

    @contextmanager
    def holding(self, claim: Claim) -> Iterator[None]:
        """Renew ``claim``'s lease too while the block runs (a tool's attempt)."""
        with self._guard:
            self._claims[claim.effect_id] = claim
        try:
            yield
        finally:
            with self._guard:
                self._claims.pop(claim.effect_id, None)

    def _keep(self) -> None:
        handle: Ledger | None = None
        due = time.monotonic() + self._every
        try:
            while not self._stopping.wait(max(0.0, due - time.monotonic())):
                started = time.monotonic()
                try:
                    if handle is None:
                        handle = self._ledger.reopen()
                    self._renew(handle)
                except LeaseLostError as exc:
                    self.lost = exc
                    return
                except Exception:  # the database is away: try again soon
                    if handle is not None:
                        handle.close()
                        handle = None
                    due = time.monotonic() + max(_RETRY_FLOOR, self._every / 4)
                    continue
                self.renewals += 1
                due = started + self._every
        finally:
            if handle is not None:
                handle.close()

    def _renew(self, handle: Ledger) -> None:
        handle.renew_run(self.lease, lease_seconds=self._lease_seconds)
        with self._guard:
            claims = list(self._claims.values())
        for claim in claims:
            try:
                handle.heartbeat(claim, lease_seconds=self._lease_seconds)
            except FencedError:
                with self._guard:
                    self._claims.pop(claim.effect_id, None)
