"""The cost of Temporal's orchestration per tool call, against the plain host loop.

    PYTHONPATH=src python bench/temporal_overhead.py [--runs 10] [--calls 4] [--rounds 3]
        [--store sqlite|postgres]

Both sides run the same runs (one turn of ``--calls`` calls, then the final answer)
against the same mock, on the same kind of ledger (a fresh SQLite file, or a fresh
PostgreSQL schema, per side and round): the plain :class:`~callgate.loop.HostLoop`, and
:class:`~callgate.temporal.CallgateRun` on a local dev server (the ``temporal`` binary)
with an in-process worker, runs executed one after the other. Rounds alternate the order.
Prints the median milliseconds per tool call of each side, their ratio, and the overhead
per call (Temporal minus plain), all from this one run; and the same for the CPU time of
this process (the loop, the worker, the mock; not the dev server's), which a loaded
machine distorts far less than wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from typing import Any

from callgate.ledger import EffectClass, Tool, open_ledger
from callgate.loop import HostLoop, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.temporal import (
    CallgateActivities,
    CallgateRun,
    RunInput,
    Timing,
    new_worker,
    start_dev_server,
)

PG_URL = os.environ.get("CALLGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _tools() -> list[ToolSpec]:
    def lookup(args: Any, ctx: Any) -> Any:
        return {"n": args["n"]}

    return [ToolSpec(Tool("lookup", lookup, effect=EffectClass.IDEMPOTENT_REMOTE))]


def _script(runs: int, calls: int) -> Any:
    b = ScriptBuilder()
    for _ in range(runs):
        b.turn("openai_responses", calls=[call("lookup", n=i) for i in range(calls)])
        b.turn("openai_responses", text="Done.")
    return b.build()


def _ledger_url(store: str, tmp: str) -> str:
    if store == "sqlite":
        return f"sqlite:///{tmp}/ledger-{uuid.uuid4().hex[:8]}.db"
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"


def plain(url: str, runs: int, calls: int) -> tuple[float, float]:
    with MockServer(_script(runs, calls)) as server, open_ledger(url) as ledger:
        loop = HostLoop(
            protocol="openai_responses",
            base_url=server.openai_base_url,
            api_key="k",
            ledger=ledger,
            model="m",
            tools=_tools(),
        )
        with loop:
            start, cpu = time.perf_counter(), time.process_time()
            for r in range(runs):
                result = loop.run(f"run-{r}", "Go.")
                if result.status != "final":
                    raise SystemExit(f"plain loop ended {result.status}")
            return time.perf_counter() - start, time.process_time() - cpu


async def temporal(env: Any, url: str, runs: int, calls: int) -> tuple[float, float]:
    with MockServer(_script(runs, calls)) as server:
        acts = CallgateActivities(
            url,
            tools=_tools(),
            loop={
                "protocol": "openai_responses",
                "base_url": server.openai_base_url,
                "api_key": "k",
                "model": "m",
            },
        )
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        async with new_worker(env.client, acts, task_queue=queue):
            start, cpu = time.perf_counter(), time.process_time()
            for r in range(runs):
                out = await env.client.execute_workflow(
                    CallgateRun.run,
                    args=[RunInput(f"run-{r}", "Go."), Timing()],
                    id=f"{queue}-{r}",
                    task_queue=queue,
                )
                if out.status != "final":
                    raise SystemExit(f"workflow ended {out.status}")
            return time.perf_counter() - start, time.process_time() - cpu


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    a = ap.parse_args()
    per_call: dict[str, list[float]] = {"plain": [], "temporal": []}
    cpu_call: dict[str, list[float]] = {"plain": [], "temporal": []}
    n = a.runs * a.calls
    with tempfile.TemporaryDirectory() as tmp:
        async with await start_dev_server() as env:
            await temporal(env, _ledger_url(a.store, tmp), 2, a.calls)  # warm-up
            for rnd in range(a.rounds):
                order = ("plain", "temporal") if rnd % 2 == 0 else ("temporal", "plain")
                for side in order:
                    url = _ledger_url(a.store, tmp)
                    if side == "plain":
                        took, cpu = await asyncio.to_thread(plain, url, a.runs, a.calls)
                    else:
                        took, cpu = await temporal(env, url, a.runs, a.calls)
                    per_call[side].append(took / n * 1000)
                    cpu_call[side].append(cpu / n * 1000)
                    print(
                        f"round {rnd} {side}: {took / n * 1000:.1f} ms per call, "
                        f"CPU {cpu / n * 1000:.1f} ms",
                        flush=True,
                    )
    p, t = statistics.median(per_call["plain"]), statistics.median(per_call["temporal"])
    print(f"store {a.store}, {a.runs} runs x {a.calls} calls per round, {a.rounds} rounds")
    print(f"plain HostLoop: {p:.1f} ms per tool call (median)")
    print(f"Temporal:       {t:.1f} ms per tool call (median)")
    print(f"ratio Temporal/plain: {t / p:.2f}; overhead {t - p:.1f} ms per tool call")
    pc, tc = statistics.median(cpu_call["plain"]), statistics.median(cpu_call["temporal"])
    print(f"CPU of this process per tool call (median): plain {pc:.1f} ms, Temporal {tc:.1f} ms")
    print(f"CPU ratio Temporal/plain: {tc / pc:.2f}; overhead {tc - pc:.1f} ms per tool call")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
