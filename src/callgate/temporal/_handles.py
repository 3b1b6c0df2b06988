"""What a worker's activities reuse instead of opening per activity.

An activity used to open the ledger and build an HTTP client each time: a run of one
turn with four calls is seven activities, and each paid the ledger's open (connect,
schema check) and an ``httpx.Client`` (its TLS context loads the CA store: about 100 ms
on a loaded machine, the largest part of Temporal's overhead per tool call). Now:

- :class:`ThreadLedgers`: one ledger handle per thread of the activities' pool, opened
  by the thread's first activity and reused by every later one on that thread (a
  :class:`~callgate.ledger.Ledger` is not thread-safe and a SQLite connection belongs to
  the thread that opened it). An activity that fails with anything but a Temporal
  application error closes its thread's handle, so the next one opens a fresh one. On a
  thread of no such pool (``ActivityEnvironment``, a worker with an executor of its own)
  each activity opens and closes its handle, as before.
- :class:`ActivityThreads`: the activities' thread pool; its ``shutdown`` first runs one
  task on each of its threads that closes that thread's handle, on that thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_all

from temporalio.exceptions import ApplicationError

from ..ledger import Ledger

__all__ = ["ActivityThreads", "ThreadLedgers"]


class ThreadLedgers:
    """The calling thread's ledger handle, opened with ``opener`` on first use."""

    def __init__(self, opener: Callable[[], Ledger]) -> None:
        self._opener = opener
        self._local = threading.local()

    def keep(self) -> None:
        """Keep handles on the calling thread (a thread of :class:`ActivityThreads`)."""
        self._local.keep = True

    def kept(self) -> bool:
        """Whether the calling thread keeps its handles."""
        return bool(getattr(self._local, "keep", False))

    @contextlib.contextmanager
    def use(self) -> Iterator[Ledger]:
        if not self.kept():
            with self._opener() as fresh:
                yield fresh
            return
        ledger: Ledger | None = getattr(self._local, "ledger", None)
        if ledger is None:
            ledger = self._local.ledger = self._opener()
        try:
            yield ledger
        except ApplicationError:  # the activity's answer: the handle is fine
            raise
        except BaseException:  # the database may be away, a transaction broken
            self.release()
            raise

    def release(self) -> None:
        """Close the calling thread's handle, if it has one."""
        ledger: Ledger | None = getattr(self._local, "ledger", None)
        self._local.ledger = None
        if ledger is not None:
            with contextlib.suppress(Exception):
                ledger.close()


class ActivityThreads(ThreadPoolExecutor):
    """A thread pool whose threads keep their ``ledgers`` handle; ``shutdown`` closes
    each on its own thread."""

    def __init__(self, max_workers: int, ledgers: ThreadLedgers) -> None:
        super().__init__(max_workers, "callgate-activity", initializer=self._born)
        self._ledgers = ledgers
        self._count_lock = threading.Lock()
        self._started = 0

    def _born(self) -> None:
        self._ledgers.keep()
        with self._count_lock:
            self._started += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._count_lock:
            started, self._started = self._started, 0
        if started:
            # Each task holds its thread until all have started: one per thread.
            barrier = threading.Barrier(started)
            tasks = [self.submit(self._exit, barrier) for _ in range(started)]
            wait_all(tasks, timeout=60)
        super().shutdown(wait, cancel_futures=cancel_futures)

    def _exit(self, barrier: threading.Barrier) -> None:
        try:
            self._ledgers.release()
        finally:
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=30)
