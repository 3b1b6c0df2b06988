"""``callgate demo``'s durable runs: what the ledger keeps across a crash and a decision.

1. A refund whose process is SIGKILLed after the refund was applied and before its result
   was recorded or sent: recovery finds the attempt ``unknown``, the tool's verifier finds
   the refund applied, and the resumed loop sends exactly one continuation.
2. An approval-gated tool: the run waits, an operator approves, the tool runs once.

The remote is an fsynced append-only file; the provider is the mock server, whose journal
shows what the model side saw.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..ledger import Applied, EffectClass, Ledger, NotApplied, Tool, ToolContext, open_ledger
from ..loop import HostLoop, ToolSpec
from ..mock import MockServer, ScriptBuilder, call
from ._kit import http_client

__all__ = ["SCENARIOS", "approval_scenario", "crash_child", "crash_scenario"]

_RUN = "refund-run"
_LEASE = 0.5  # seconds: the dead child's leases run out quickly in the demo
_ORDER = {"type": "object", "properties": {"order_id": {"type": "integer"}}}


def _apply(remote: Path, line: str) -> None:
    with open(remote, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _lines(remote: Path) -> list[str]:
    return remote.read_text(encoding="utf-8").split() if remote.exists() else []


def _refund_tool(remote: Path) -> ToolSpec:
    def run(args: Any, ctx: ToolContext) -> Any:
        _apply(remote, ctx.idempotency_token)
        return {"refunded": args["order_id"]}

    def verify(args: Any, ctx: ToolContext) -> Any:
        if ctx.idempotency_token in _lines(remote):
            return Applied({"refunded": args["order_id"], "verified": True})
        return NotApplied()

    tool = Tool("refund", run, effect=EffectClass.VERIFIABLE, verify=verify)
    return ToolSpec(tool, description="Refund an order.", parameters=_ORDER)


def _loop(ledger: Ledger, tools: list[ToolSpec], base_url: str, worker: str) -> HostLoop:
    return HostLoop(
        protocol="openai_responses",
        base_url=base_url,
        api_key="demo",
        ledger=ledger,
        tools=tools,
        model="gpt-demo",
        worker_id=worker,
        lease_seconds=_LEASE,
        client=http_client(),
    )


def _script(tool: str) -> Any:
    b = ScriptBuilder(seed=42)
    b.turn("openai_responses", calls=[call(tool, order_id=42)], chunking={"fixed": 16})
    b.turn(
        "openai_responses",
        expect={"function_results": [{"name": tool, "output_contains": "42"}]},
        text="Order 42 is refunded.",
    )
    return b.build()


def crash_child(db_url: str, remote: str, base_url: str) -> None:
    """The process that dies: SIGKILL right after the refund applied, before its commit."""

    def fault(point: str) -> None:
        if point == "after_return":
            os.kill(os.getpid(), signal.SIGKILL)

    ledger = open_ledger(db_url, fault=fault)
    _loop(ledger, [_refund_tool(Path(remote))], base_url, "demo-child").run(
        _RUN, "Refund order 42."
    )


@contextlib.contextmanager
def _workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="callgate-demo-") as tmp:
        yield Path(tmp)


def crash_scenario(say: Callable[[str], None]) -> bool:
    with _workspace() as tmp, MockServer(_script("refund")) as server:
        db, remote = f"sqlite:///{tmp / 'ledger.db'}", tmp / "refunds.log"
        code = "import sys; from callgate.demo._durable import crash_child as c; c(*sys.argv[1:])"
        child = subprocess.run(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-c", code, db, str(remote), server.openai_base_url],
            capture_output=True,
            timeout=60,
            check=False,
        )
        killed = child.returncode == -signal.SIGKILL
        say(f"    child process: refund applied, then SIGKILL (exit {child.returncode})")
        time.sleep(_LEASE + 0.2)  # the dead child's leases run out
        refund = _refund_tool(remote)
        with open_ledger(db, tools=[refund.tool]) as ledger:
            report = ledger.recover("demo-rescuer")
            say(f"    recover: {len(report.lost)} attempt(s) lost -> unknown, "
                f"{len(report.to_verify)} to verify")  # fmt: skip
            for effect_id in report.to_verify:
                settled = ledger.verify(effect_id)
                say(f"    verifier: the refund applied -> {settled.state.value}")
            with _loop(ledger, [refund], server.openai_base_url, "demo") as loop:
                result = loop.resume(_RUN)
        posts = [e for e in server.journal.requests() if e.method == "POST"]
        continuations = [e for e in posts if "previous_response_id" in (e.body or {})]
        refunds = len(_lines(remote))
        say(f"    resumed: {result.status}: {result.text}")
        say(f"    remote: {refunds} refund(s); journal: {len(posts)} request(s), "
            f"{len(continuations)} continuation(s)")  # fmt: skip
        return killed and result.status == "final" and refunds == 1 and len(continuations) == 1


def approval_scenario(say: Callable[[str], None]) -> bool:
    with _workspace() as tmp, MockServer(_script("refund")) as server:
        remote = tmp / "refunds.log"
        spec = _refund_tool(remote)
        gated = ToolSpec(
            Tool("refund", spec.tool.run, requires_approval=True),
            description=spec.description,
            parameters=spec.parameters,
        )
        db = f"sqlite:///{tmp / 'ledger.db'}"
        with open_ledger(db) as ledger, _loop(ledger, [gated], server.openai_base_url, "d") as loop:
            waiting = loop.run(_RUN, "Refund order 42.")
            names = ", ".join(f"{e.tool}({e.arguments})" for e in waiting.pending)
            say(f"    run: {waiting.status}; awaiting approval: {names}; "
                f"refunds so far: {len(_lines(remote))}")  # fmt: skip
            for effect in waiting.pending:
                ledger.approve(effect.effect_id, actor="ops@example.com")
                say("    approved by ops@example.com (single use, bound to the arguments)")
            result = loop.resume(_RUN)
        say(f"    resumed: {result.status}: {result.text}; refunds: {len(_lines(remote))}")
        return waiting.status == "waiting" and result.status == "final" and len(_lines(remote)) == 1


SCENARIOS = [
    ("Host loop + ledger: SIGKILL after a refund applied, before its result was sent",
     crash_scenario),
    ("Host loop + ledger: an approval-gated tool", approval_scenario),
]  # fmt: skip
