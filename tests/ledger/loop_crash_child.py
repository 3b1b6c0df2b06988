"""The child process of the model-side crash cells: it runs the host loop against the mock
server and SIGKILLs itself at one named fault point (its first occurrence).

``python loop_crash_child.py STORE_URL PROTOCOL STORE TOOL POINT REMOTE RUN BASE_URL CONV``
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from callgate.ledger import EffectState, open_ledger
from callgate.loop import AsyncHostLoop, HostLoop, LoopResult, ToolSpec

from .ledger_harness import crash_tools

NOT_REACHED = 3  # the exit code when the loop never met the point
STORED = ("stateful", "ws-stateful", "ws-async-stateful")


class AsyncOnOneLoop:
    """An :class:`AsyncHostLoop` driven from sync code (the child and the rescuer): every
    ``run``/``resume`` on one event loop, so its ``httpx.AsyncClient`` stays on it."""

    def __init__(self, loop: AsyncHostLoop) -> None:
        self._loop = loop
        self._events = asyncio.new_event_loop()

    def run(self, run_id: str, request: Any) -> LoopResult:
        return self._events.run_until_complete(self._loop.run(run_id, request))

    def resume(self, run_id: str) -> LoopResult:
        return self._events.run_until_complete(self._loop.resume(run_id))

    def __enter__(self) -> AsyncOnOneLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._events.run_until_complete(self._loop.aclose())
        finally:
            self._events.close()


def loop_for(ledger, protocol, store, tool, remote, base_url, conv, worker, kill_at=None):  # type: ignore[no-untyped-def]
    specs = [ToolSpec(t) for t in crash_tools(Path(remote), kill_at) if t.name == tool]
    kind = AsyncHostLoop if store.startswith("ws-async-") else HostLoop
    loop = kind(
        protocol=protocol,
        base_url=base_url,
        api_key="crash",
        ledger=ledger,
        tools=specs,
        model="model-x",
        store=store in STORED,
        threads=store == "threads",  # Anthropic message threads
        transport="websocket" if store.startswith("ws-") else "http",  # OpenAI's socket
        headers={"x-callgate-conversation": conv},
        worker_id=worker,
        lease_seconds=5.0,
        retry_backoff=0.0,
    )
    return AsyncOnOneLoop(loop) if isinstance(loop, AsyncHostLoop) else loop


def main(url: str, protocol: str, store: str, tool: str, point: str, remote: str, run_id: str,
         base_url: str, conv: str) -> int:  # fmt: skip
    def fault(name: str) -> None:
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)

    ledger = open_ledger(url, fault=fault)
    loop = loop_for(ledger, protocol, store, tool, remote, base_url, conv, "child", point)
    result = loop.run(run_id, "Do it.")  # the loop is never closed: SIGKILL ends it
    for _ in range(3):
        if result.status != "waiting":
            break
        for effect in result.pending:
            if effect.state is EffectState.AWAITING_APPROVAL:
                ledger.approve(effect.effect_id, actor="child-approver")
        result = loop.resume(run_id)
    return NOT_REACHED


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:10]))
