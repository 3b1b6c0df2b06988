"""Keeping a claim alive while its tool runs, and telling Temporal the activity lives."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

from temporalio import activity

from ..ledger import FencedError, Ledger

__all__ = ["Pulse"]


class Pulse:
    """Heartbeats to Temporal (inside an activity) every third of ``lease_seconds`` while a
    block runs, from a thread (a tool or a model stream may block the activity's own
    thread for long).

    With a ``claim``, each beat first renews the claim's ledger lease (over a connection
    of its own) and carries the claim's epoch; a renewal the ledger fences (the attempt
    was recovered) stops the beat, and the attempt's settle is fenced the same way.
    ``temporal=False`` only renews the claim: for a tool that a framework's async
    activity runs on a thread of its own (the framework heartbeats; a heartbeat from
    that thread cannot reach the activity's event loop)."""

    def __init__(
        self,
        lease_seconds: float,
        ledger: Ledger | None = None,
        claim: Any = None,
        *,
        temporal: bool = True,
    ) -> None:
        self._ledger = ledger
        self._claim = claim
        self._temporal = temporal
        self._every = lease_seconds / 3
        self._lease = lease_seconds
        self._stop = threading.Event()
        ctx = contextvars.copy_context()  # activity.heartbeat needs the activity's context
        self._thread = threading.Thread(target=ctx.run, args=(self._beat,), daemon=True)

    def _details(self) -> dict[str, Any]:
        if self._claim is None:
            return {}
        return {"effect_id": self._claim.effect_id, "epoch": self._claim.epoch}

    def _tell_temporal(self) -> None:
        if self._temporal and activity.in_activity():
            activity.heartbeat(self._details())

    def __enter__(self) -> None:
        self._tell_temporal()
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        handle: Ledger | None = None
        try:
            while not self._stop.wait(self._every):
                if self._ledger is not None and self._claim is not None:
                    try:
                        handle = handle or self._ledger.reopen()
                        handle.heartbeat(self._claim, lease_seconds=self._lease)
                    except FencedError:
                        return
                    except Exception:  # noqa: S112 - the database is away: the next beat retries
                        continue
                self._tell_temporal()
        finally:
            if handle is not None:
                handle.close()
