"""The asyncio loop: the same state machine, its model I/O awaited."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.loop import AsyncHostLoop, LoopResult
from callgate.loop.sdk import openai_async_send
from callgate.mock import MockServer

from .loop_helpers import (
    FINAL,
    MODEL,
    VARIANTS,
    base_url,
    refund_script,
    refund_specs,
    remote_count,
)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_async_loop_runs_a_tool_once_and_reaches_the_final_answer(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol, store = VARIANTS[variant]

    async def main() -> tuple[LoopResult, LoopResult]:
        async with MockServer(refund_script({variant: (protocol, 1, 1)})) as server:
            loop = AsyncHostLoop(
                protocol=protocol,
                base_url=base_url(server, protocol),
                api_key="k",
                ledger=ledger,
                tools=refund_specs(remote),
                model=MODEL,
                store=store,
                headers={"x-callgate-conversation": variant},
            )
            async with loop:
                result = await loop.run("run-async", "Refund order 42.")
                again = await loop.resume("run-async")
            server.assert_script_done()
            return result, again

    result, again = asyncio.run(main())
    assert result.status == "final", result
    assert result.text == FINAL
    assert again.text == FINAL
    assert result.effects[0].state is EffectState.DELIVERED
    assert remote_count(remote) == 1


def test_the_async_loop_runs_over_the_official_async_openai_client(
    ledger: Ledger, remote: Path
) -> None:
    openai = pytest.importorskip("openai")

    async def main() -> LoopResult:
        async with MockServer(refund_script({"sdk": ("openai_responses", 1, 1)})) as server:
            client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k")
            loop = AsyncHostLoop(
                protocol="openai_responses",
                send=openai_async_send(client),
                ledger=ledger,
                tools=refund_specs(remote),
                model=MODEL,
                headers={"x-callgate-conversation": "sdk"},
            )
            result = await loop.run("run-async", "Refund order 42.")
            await client.close()
            server.assert_script_done()
            return result

    result = asyncio.run(main())
    assert result.status == "final"
    assert remote_count(remote) == 1
