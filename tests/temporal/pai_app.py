"""pydantic-ai's Temporal durable execution running an agent against the callgate mock,
with its one side-effecting tool behind callgate's guard (tests/temporal/test_temporal_guard.py).

The agent, its model and the workflow are built at import (a worker imports this module);
the mock's URL, the ledger, the remote file and the kill marker come from the environment.
``python -m tests.temporal.pai_app ADDRESS QUEUE`` runs a worker; the tool SIGKILLs it
right after the remote applied the refund, once for all workers (the marker file).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker
from temporalio.workflow import ActivityConfig

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import (
        PydanticAIPlugin,
        PydanticAIWorkflow,
        TemporalDurability,
    )
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from callgate.ledger import Applied, EffectClass, NotApplied, ToolContext
    from callgate.temporal import guarded

    from ..ledger.ledger_harness import remote_apply, remote_count

ENV = os.environ
REMOTE = Path(ENV.get("CALLGATE_PAI_REMOTE", "remote.log"))
MARKER = ENV.get("CALLGATE_PAI_MARKER", "killed")
HEARTBEAT = timedelta(seconds=2)


def _verify(args: Any, ctx: ToolContext) -> Any:
    if remote_count(REMOTE, ctx.idempotency_token):
        return Applied({"refunded": args["order_id"], "verified": True})
    return NotApplied()


@guarded(
    ENV.get("CALLGATE_PAI_LEDGER", "sqlite:///pai.db"),
    business_key=lambda a: f"order-{a['order_id']}",
    effect=EffectClass.VERIFIABLE,
    verify=_verify,
    lease_seconds=2.0,
)
def refund(order_id: int, *, ctx: ToolContext) -> dict[str, Any]:
    """Refund an order."""
    remote_apply(REMOTE, ctx.idempotency_token, dedup=False)  # the bank: no idempotency keys
    try:
        os.close(os.open(MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        os.kill(os.getpid(), signal.SIGKILL)  # the first worker here dies after the effect
    except FileExistsError:
        pass
    return {"refunded": order_id}


model = OpenAIResponsesModel(
    "gpt-4.1",
    provider=OpenAIProvider(
        base_url=ENV.get("CALLGATE_PAI_BASE_URL", "http://127.0.0.1:1/v1"), api_key="test"
    ),
)
retry = RetryPolicy(initial_interval=timedelta(seconds=0.2), maximum_interval=timedelta(seconds=1))
agent = Agent(
    model,
    name="refunder",
    tools=[refund],
    capabilities=[
        TemporalDurability(
            activity_config=ActivityConfig(
                start_to_close_timeout=timedelta(seconds=60),
                heartbeat_timeout=HEARTBEAT,
                retry_policy=retry,
            )
        )
    ],
)


@workflow.defn(name="pai-refund")
class RefundWorkflow(PydanticAIWorkflow):
    __pydantic_ai_agents__ = (agent,)

    @workflow.run
    async def run(self, prompt: str) -> str:
        return (await agent.run(prompt)).output


async def main(address: str, queue: str) -> None:
    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    async with Worker(
        client,
        task_queue=queue,
        workflows=[RefundWorkflow],
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    ):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    # The workflow must come from an importable module, not __main__ (the sandbox
    # re-imports it): run the worker from this module imported under its own name.
    from tests.temporal import pai_app

    asyncio.run(pai_app.main(*sys.argv[1:3]))
