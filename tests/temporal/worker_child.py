"""A Temporal worker process for the crash cells: callgate's workflow and activities over
one ledger, the crash matrix's tools (tests/ledger/ledger_harness.py), the mock as the
provider. At its first fault point named KILL_AT it SIGKILLs itself, once for all the
workers sharing MARKER (the first to get there creates it and dies; the others go on).

``python -m tests.temporal.worker_child ADDRESS QUEUE LEDGER_URL REMOTE BASE_URL KILL_AT
MARKER WORKER_ID LEASE PROTOCOL MODE`` (MODE as in tests/ledger/test_ledger_crash_loop.py's
VARIANTS: ``stateful``, ``stateless``, ``threads``, ``ws-stateful``, ``ws-stateless``)
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client

from callgate.loop import ToolSpec
from callgate.temporal import CallgateActivities, new_worker

from ..ledger.ledger_harness import crash_tools


def _killer(kill_at: str, marker: str):  # type: ignore[no-untyped-def]
    def kill(point: str) -> None:
        if point != kill_at:
            return
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return  # another worker already died here
        os.kill(os.getpid(), signal.SIGKILL)

    return kill


async def main(
    address: str,
    queue: str,
    url: str,
    remote: str,
    base_url: str,
    kill_at: str,
    marker: str,
    worker_id: str,
    lease: str,
    protocol: str = "openai_responses",
    mode: str = "stateful",
) -> None:
    kill = _killer(kill_at, marker)
    # after_sent: the tool applied the effect at the remote, then the worker dies.
    tools = _killing_tools(crash_tools(Path(remote)), kill)
    acts = CallgateActivities(
        url,
        tools=[ToolSpec(t) for t in tools],
        loop={
            "protocol": protocol,
            "base_url": base_url,
            "api_key": "crash",
            "model": "model-x",
            "store": mode in ("stateful", "ws-stateful"),
            "threads": mode == "threads",  # Anthropic message threads
            "transport": "websocket" if mode.startswith("ws-") else "http",
            "headers": {"x-callgate-conversation": "default"},
            "retry_backoff": 0.0,
        },
        worker_id=worker_id,
        lease_seconds=float(lease),
        fault=kill,
    )
    client = await Client.connect(address)
    # A workflow task cached on a dead worker moves to another after this timeout.
    sticky = timedelta(seconds=1)
    async with new_worker(
        client, acts, task_queue=queue, sticky_queue_schedule_to_start_timeout=sticky
    ):
        print("ready", flush=True)
        await asyncio.Event().wait()


def _killing_tools(tools, kill):  # type: ignore[no-untyped-def]
    from callgate.ledger import Tool

    def wrap(tool: Tool) -> Tool:
        def run(args, ctx):  # type: ignore[no-untyped-def]
            out = tool.run(args, ctx)
            kill("after_sent")
            return out

        return Tool(
            tool.name,
            run,
            effect=tool.effect,
            verify=tool.verify,
            requires_approval=tool.requires_approval,
        )

    return [wrap(t) if t.name != "local" else t for t in tools]


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:12]))
