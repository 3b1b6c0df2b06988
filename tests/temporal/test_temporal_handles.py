"""The activities' pool keeps one ledger handle per thread and closes each on its thread
at shutdown; a failed activity drops its thread's handle; off the pool, per activity."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from callgate.ledger import Ledger, open_ledger
from callgate.temporal._handles import ActivityThreads, ThreadLedgers


class _Opened:
    def __init__(self, url: str) -> None:
        self.url = url
        self.handles: list[Ledger] = []
        self.threads: list[int] = []
        self.closed: dict[int, int] = {}  # handle -> the thread that closed it
        self._lock = threading.Lock()

    def __call__(self) -> Ledger:
        ledger = open_ledger(self.url)
        close = ledger.close

        def closing() -> None:
            close()  # raises if called off the handle's thread: then not recorded
            self.closed[id(ledger)] = threading.get_ident()

        ledger.close = closing  # type: ignore[method-assign]
        with self._lock:
            self.handles.append(ledger)
            self.threads.append(threading.get_ident())
        return ledger

    def closed_on_their_threads(self) -> bool:
        return all(
            self.closed.get(id(h)) == tid for h, tid in zip(self.handles, self.threads, strict=True)
        )


def test_pool_threads_reuse_their_handle_and_close_it_on_shutdown(tmp_path: Path) -> None:
    opened = _Opened(f"sqlite:///{tmp_path / 'l.db'}")
    ledgers = ThreadLedgers(opened)
    pool = ActivityThreads(2, ledgers)
    used: list[tuple[int, int]] = []

    def activity() -> None:
        with ledgers.use() as ledger:
            ledger.effects("r")  # works on the thread that opened it
            used.append((threading.get_ident(), id(ledger)))

    for future in [pool.submit(activity) for _ in range(20)]:
        future.result()
    assert 1 <= len(opened.handles) <= 2
    assert len(set(opened.threads)) == len(opened.threads)  # one handle per thread
    assert {tid for tid, _ in used} <= set(opened.threads)
    assert not opened.closed
    pool.shutdown()
    assert opened.closed_on_their_threads()


def test_a_failed_activity_drops_its_handle_an_application_error_keeps_it(
    tmp_path: Path,
) -> None:
    opened = _Opened(f"sqlite:///{tmp_path / 'l.db'}")
    ledgers = ThreadLedgers(opened)
    pool = ActivityThreads(1, ledgers)

    def activity(exc: BaseException | None) -> None:
        with ledgers.use():
            if exc is not None:
                raise exc

    pool.submit(activity, None).result()
    with pytest.raises(ApplicationError):
        pool.submit(activity, ApplicationError("retry later", type="RunBusy")).result()
    assert len(opened.handles) == 1  # the same handle went on
    with pytest.raises(RuntimeError):
        pool.submit(activity, RuntimeError("database away")).result()
    assert opened.closed == {id(opened.handles[0]): opened.threads[0]}
    pool.submit(activity, None).result()
    assert len(opened.handles) == 2  # a fresh one
    pool.shutdown()
    assert opened.closed_on_their_threads()


def test_off_the_pool_each_use_opens_and_closes(tmp_path: Path) -> None:
    opened = _Opened(f"sqlite:///{tmp_path / 'l.db'}")
    ledgers = ThreadLedgers(opened)
    for _ in range(3):
        with ledgers.use() as ledger:
            ledger.effects("r")
    assert len(opened.handles) == 3
    assert opened.closed_on_their_threads()
