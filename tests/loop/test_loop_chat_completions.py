"""The host loop on OpenAI Chat Completions against the mock over a real socket, sync and
async: two parallel calls, each effect applied once through the ledger, the stateless
continuation replaying the whole history with one tool message per call, in call order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.loop import AsyncHostLoop, HostLoop, LoopResult
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, MODEL, refund_specs, remote_count

PROTOCOL = "openai_chat_completions"
ORDERS = (42, 43)


def _script() -> Any:
    results = [{"call": n, "output_contains": str(order)} for n, order in enumerate(ORDERS)]
    return (
        ScriptBuilder(seed=11)
        .turn(PROTOCOL, expect={"model": MODEL, "tools": ["refund"], "stream": True},
              calls=[call("refund", order_id=o) for o in ORDERS], chunking={"fixed": 5},
              interleave="round_robin")
        .turn(PROTOCOL, expect={"model": MODEL, "function_results": results}, text=FINAL)
        .build()
    )  # fmt: skip


def _loop_kw(server: MockServer, ledger: Ledger, remote: Path) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL,
        "base_url": server.openai_base_url,
        "api_key": "test-key",
        "ledger": ledger,
        "tools": refund_specs(remote),
        "model": MODEL,
        "retry_backoff": 0.0,
    }


def _check(
    result: LoopResult, run_id: str, server: MockServer, ledger: Ledger, remote: Path
) -> None:
    assert result.status == "final", result
    assert result.text == FINAL
    assert result.turns == 2
    effects = ledger.effects(run_id)
    assert effects == result.effects
    assert [(e.tool, e.arguments, e.state) for e in effects] == [
        ("refund", {"order_id": o}, EffectState.DELIVERED) for o in ORDERS
    ]
    assert remote_count(remote) == 2  # each refund applied once
    server.assert_script_done()
    first, second = (e.body for e in server.journal.requests(outcome="matched"))
    assert first["stream_options"] == {"include_usage": True}
    assert first["tools"][0]["function"]["strict"] is False
    # The stateless replay: the user message, the assistant message as received, then
    # one tool message per call, in call order, each naming its call.
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["user", "assistant", "tool", "tool"]
    asked = second["messages"][1]["tool_calls"]
    answers = second["messages"][2:]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in asked]
    assert [e.call_id for e in effects] == [c["id"] for c in asked]
    assert [json.loads(a["content"]) for a in answers] == [{"refunded": o} for o in ORDERS]


def test_the_loop_runs_two_parallel_calls_once_each(ledger: Ledger, remote: Path) -> None:
    with MockServer(_script()) as server:
        with HostLoop(**_loop_kw(server, ledger, remote)) as loop:
            result = loop.run("chat-run", "Refund orders 42 and 43.")
            again = loop.run("chat-run", "Refund orders 42 and 43.")
        _check(result, "chat-run", server, ledger, remote)
    assert (again.status, again.text) == ("final", FINAL)  # answered from the ledger


def test_the_async_loop_runs_two_parallel_calls_once_each(ledger: Ledger, remote: Path) -> None:
    async def main() -> tuple[LoopResult, MockServer]:
        async with MockServer(_script()) as server:
            async with AsyncHostLoop(**_loop_kw(server, ledger, remote)) as loop:
                result = await loop.run("chat-async", "Refund orders 42 and 43.")
            _check(result, "chat-async", server, ledger, remote)
            return result, server

    result, _ = asyncio.run(main())
    assert result.effects[0].state is EffectState.DELIVERED


@pytest.mark.parametrize(
    ("respond", "why"),
    [
        ({"refusal": "I can't refund that."}, "refusal"),
        ({"text": "cut off", "status": "length"}, "length"),
        ({"calls": [call("refund", order_id=42)], "status": "content_filter"}, "content_filter"),
    ],
)
def test_a_turn_that_is_not_a_clean_stop_is_refused_and_runs_nothing(
    respond: dict[str, Any], why: str, ledger: Ledger, remote: Path
) -> None:
    script = ScriptBuilder().turn(PROTOCOL, **respond).build()
    with MockServer(script) as server, HostLoop(**_loop_kw(server, ledger, remote)) as loop:
        result = loop.run(f"chat-{why}", "Refund order 42.")
    assert result.status == "refused", result
    assert why in str(result.error)
    assert remote_count(remote) == 0
    assert ledger.effects(f"chat-{why}") == ()
