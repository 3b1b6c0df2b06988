"""Runs and model requests (R5): the run lease, request records and their states.

A base of :class:`Ledger`; the effect side lives in ``_ledger``. Every request state is
written by :func:`~callgate.ledger._transitions.move` along ``REQUEST_TRANSITIONS``.
"""

from __future__ import annotations

from typing import Any

from .._digest import canonical_digest
from .._errors import UsageError
from ._bodies import split_body
from ._model import (
    ConflictError,
    LeaseLostError,
    RequestRecord,
    RequestState,
    RunBusyError,
    RunLease,
)
from ._record import deliver
from ._rows import (
    AUDIT_INSERT,
    AUDIT_VALUES,
    REQUEST_COLUMNS,
    dump,
    load,
    request_from_row,
    write_audited,
)
from ._store import Store, Tx
from ._transitions import REQUESTS, RequestEvent, move

__all__ = ["RunsAndRequests"]


class RunsAndRequests:
    """Runs and requests; needs ``_store`` and ``scope`` from the ledger."""

    _store: Store
    scope: str

    def _run_key(self, run_id: str) -> str:
        return f"{self.scope}\x1f{run_id}"

    # -- runs -----------------------------------------------------------------------------

    def open_run(self, run_id: str, *, unresolved: str = "hold") -> None:
        """Create the run if it does not exist. ``unresolved``: ``hold`` (send nothing for an
        unresolved effect) or ``report`` (send the fixed outcome-unknown error result)."""
        if unresolved not in ("hold", "report"):
            raise UsageError("unresolved must be 'hold' or 'report'")
        with self._store.transaction() as tx:
            self._ensure_run(tx, run_id, unresolved)

    def _ensure_run(
        self, tx: Tx, run_id: str, unresolved: str = "hold", *, lock: bool = False
    ) -> None:
        """Create the run row if it is missing; with ``lock``, also hold the run (the
        advisory lock on PostgreSQL) in the same round trip."""
        if type(run_id) is not str or not run_id:
            raise UsageError("run_id must be a non-empty str")
        insert = (
            "INSERT INTO ledger_runs (scope, run_id, unresolved, created_at) "
            "VALUES (?, ?, ?, {now}) ON CONFLICT (scope, run_id) DO NOTHING",
            (self.scope, run_id, unresolved),
        )
        if lock:
            tx.lock_run(self._run_key(run_id), also=insert)
        else:
            tx.run(*insert)

    def acquire_run(self, run_id: str, *, worker_id: str, lease_seconds: float = 30.0) -> RunLease:
        """Take the run's advancement lease (one advancing builder per run).

        Raises :class:`RunBusyError` (naming the holder and its expiry) while another
        worker's lease is live.
        """
        with self._store.transaction() as tx:
            self._ensure_run(tx, run_id)
            row = tx.one(
                "UPDATE ledger_runs SET owner = ?, owner_epoch = owner_epoch + 1, "
                "owner_until = {now} + ? WHERE scope = ? AND run_id = ? AND "
                "(owner IS NULL OR owner_until < {now} OR owner = ?) RETURNING owner_epoch",
                (worker_id, lease_seconds, self.scope, run_id, worker_id),
            )
            if row is None:
                held = tx.one(
                    "SELECT owner, owner_epoch, owner_until FROM ledger_runs "
                    "WHERE scope = ? AND run_id = ?",
                    (self.scope, run_id),
                )
        if row is None:
            owner, epoch, until = held or ("?", 0, 0.0)
            raise RunBusyError(run_id, owner=owner, epoch=int(epoch), until=float(until))
        return RunLease(run_id=run_id, worker_id=worker_id, epoch=int(row[0]))

    def renew_run(self, lease: RunLease, *, lease_seconds: float = 30.0) -> float:
        """Extend the run lease to ``lease_seconds`` from now on the database clock; return
        the new expiry (epoch seconds, database clock).

        Fenced by the epoch: a lease that ran out while nobody took the run is renewed (no
        one else can have advanced it); raises :class:`LeaseLostError` once another worker
        took the run (the epoch moved on) or it was released.
        """
        with self._store.transaction() as tx:
            row = tx.one(
                "UPDATE ledger_runs SET owner_until = {now} + ? WHERE scope = ? AND "
                "run_id = ? AND owner = ? AND owner_epoch = ? RETURNING owner_until",
                (lease_seconds, self.scope, lease.run_id, lease.worker_id, lease.epoch),
            )
            if row is None:
                raise self._lost(tx, lease)
        return float(row[0])

    def release_run(self, lease: RunLease) -> None:
        with self._store.transaction() as tx:
            tx.run(
                "UPDATE ledger_runs SET owner = NULL, owner_until = NULL "
                "WHERE scope = ? AND run_id = ? AND owner = ? AND owner_epoch = ?",
                (self.scope, lease.run_id, lease.worker_id, lease.epoch),
            )

    def _check_lease(self, tx: Tx, run_id: str, lease: RunLease | None) -> None:
        """Fence a write by the run lease's epoch: the run row is locked (PostgreSQL) so no
        acquisition can slip between this check and the write's commit."""
        if lease is None:
            return
        if lease.run_id != run_id:
            raise UsageError(f"the lease is for run {lease.run_id!r}, not {run_id!r}")
        row = tx.one(
            "SELECT owner, owner_epoch FROM ledger_runs WHERE scope = ? AND run_id = ? "
            "{for_update}",
            (self.scope, run_id),
        )
        if row is None or row[0] != lease.worker_id or int(row[1]) != lease.epoch:
            raise self._lost(tx, lease)

    def _lost(self, tx: Tx, lease: RunLease) -> LeaseLostError:
        row = tx.one(
            "SELECT owner, owner_epoch FROM ledger_runs WHERE scope = ? AND run_id = ?",
            (self.scope, lease.run_id),
        )
        return LeaseLostError(
            lease.run_id,
            worker_id=lease.worker_id,
            epoch_held=lease.epoch,
            epoch_found=None if row is None else int(row[1]),
            owner_found=None if row is None else row[0],
        )

    # -- model requests (R5) --------------------------------------------------------------

    def record_request(
        self,
        run_id: str,
        *,
        provider: str,
        request_digest: str,
        body: Any = None,
        carries_turn: int | None = None,
        provider_side_effects: bool = False,
        lease: RunLease | None = None,
        sent: bool = False,
    ) -> RequestRecord:
        """Record a model request before it is sent (state ``prepared``; with ``sent=True``
        directly ``sent``, saving a commit when the bytes leave right after: recovery treats
        both alike, as "may have reached the provider").

        ``carries_turn`` names the turn whose results this continuation carries; they become
        ``delivered`` when :meth:`identify` sees the provider accept it (R4).
        ``provider_side_effects`` marks requests declaring provider-executed tools with
        side effects: recovery holds those for an operator instead of re-sending.
        """
        body_text = dump(body)
        start = RequestEvent.RECORD_SENT if sent else RequestEvent.RECORD
        first: RequestState = REQUESTS.start[start]
        with self._store.transaction() as tx:
            self._ensure_run(tx, run_id, lock=True)
            self._check_lease(tx, run_id, lease)
            row = tx.one(
                "SELECT COALESCE(MAX(seq), 0) FROM ledger_requests WHERE scope = ? AND run_id = ?",
                (self.scope, run_id),
            )
            seq = int(row[0]) + 1 if row else 1
            request_id = canonical_digest(["request", self.scope, run_id, seq])
            stored, long_strings = split_body(tx, body, body_text)  # media once per digest
            write_audited(
                tx,
                "INSERT INTO ledger_requests (request_id, scope, run_id, seq, state, provider, "
                "request_digest, provider_turn_id, carries_turn, provider_side_effects, body, "
                "body_blobs, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, {now}, {now})",
                (
                    request_id,
                    self.scope,
                    run_id,
                    seq,
                    first.value,
                    provider,
                    request_digest,
                    carries_turn,
                    int(bool(provider_side_effects)),
                    stored,
                    long_strings,
                ),
                AUDIT_INSERT + AUDIT_VALUES,
                (self.scope, run_id, None, request_id, None, first.value, start.value, None,
                 "ledger", "null"),
            )  # fmt: skip
        # The record as written (no read back: one round trip fewer); the body as stored.
        return RequestRecord(
            request_id=request_id,
            run_id=run_id,
            seq=seq,
            state=first,
            provider=provider,
            request_digest=request_digest,
            provider_turn_id=None,
            carries_turn=None if carries_turn is None else int(carries_turn),
            provider_side_effects=bool(provider_side_effects),
            body=load(body_text),
        )

    def request(self, request_id: str) -> RequestRecord:
        with self._store.read() as tx:
            return self._request(tx, request_id)

    def _request(self, tx: Tx, request_id: str, *, lock: bool = False) -> RequestRecord:
        """The request; with ``lock``, its run is held as well (``tx.lock_run``; on
        PostgreSQL the advisory lock is taken by the same statement, keyed as
        :meth:`_run_key` spells it: scope, U+001F, run id)."""
        together = lock and tx.dialect != "sqlite"
        held = ", pg_advisory_xact_lock(hashtextextended(scope || chr(31) || run_id, 0))"
        row = tx.one(
            f"SELECT {REQUEST_COLUMNS}{held if together else ''} FROM ledger_requests "  # noqa: S608
            "WHERE request_id = ?",
            (request_id,),
        )
        if row is None:
            raise UsageError(f"no request {request_id!r}")
        req = request_from_row(row, tx)
        if lock and not together:
            tx.lock_run(self._run_key(req.run_id))
        return req

    def requests(self, run_id: str) -> tuple[RequestRecord, ...]:
        with self._store.read() as tx:
            rows = tx.rows(
                f"SELECT {REQUEST_COLUMNS} FROM ledger_requests "  # noqa: S608
                "WHERE scope = ? AND run_id = ? ORDER BY seq",
                (self.scope, run_id),
            )
            return tuple(request_from_row(row, tx) for row in rows)

    def _move_request(
        self, tx: Tx, req: RequestRecord, event: RequestEvent, **sets: Any
    ) -> RequestRecord:
        """One move along the request table (the audit's detail is ``sets``)."""
        moved = move(tx, req, event, sets=sets, detail=sets or None)
        if moved is None:
            raise ConflictError(f"request {req.request_id!r} changed meanwhile")
        return moved

    def mark_sent(self, request_id: str, *, lease: RunLease | None = None) -> RequestRecord:
        """The request is about to leave (or has): from here its outcome may be in doubt.
        With ``lease``, fenced like :meth:`record_request`."""
        with self._store.transaction() as tx:
            req = self._request(tx, request_id)
            self._check_lease(tx, req.run_id, lease)
            if req.state is RequestState.SENT:
                return req  # already sent: nothing to write
            return self._move_request(tx, req, RequestEvent.SEND)

    def identify(
        self, request_id: str, provider_turn_id: str, *, lease: RunLease | None = None
    ) -> RequestRecord:
        """Record the provider's turn id from the first event naming it, and deliver the
        results the request carried (the provider accepted the continuation: R4). With
        ``lease``, fenced like :meth:`record_request`."""
        if type(provider_turn_id) is not str or not provider_turn_id:
            raise UsageError("provider_turn_id must be a non-empty str")
        with self._store.transaction() as tx:
            req = self._request(tx, request_id)
            self._check_lease(tx, req.run_id, lease)
            if req.provider_turn_id is not None:
                if req.provider_turn_id != provider_turn_id:
                    raise ConflictError(
                        f"request {request_id!r} is already identified as "
                        f"{req.provider_turn_id!r}, not {provider_turn_id!r}"
                    )
                return req
            moved = self._move_request(
                tx, req, RequestEvent.IDENTIFY, provider_turn_id=provider_turn_id
            )
            if req.carries_turn is not None:
                deliver(tx, self.scope, req.run_id, req.carries_turn, request_id)
            return moved

    def request_failed(
        self, request_id: str, *, definite: bool, reason: str, lease: RunLease | None = None
    ) -> RequestRecord:
        """The request failed: ``definite`` when the provider surely did not start a turn
        (e.g. a 4xx before any event), otherwise its outcome is ``unknown``. With
        ``lease``, fenced like :meth:`record_request`."""
        event = RequestEvent.FAIL if definite else RequestEvent.LOSE
        with self._store.transaction() as tx:
            req = self._request(tx, request_id)
            self._check_lease(tx, req.run_id, lease)
            return self._move_request(tx, req, event, error=reason)
