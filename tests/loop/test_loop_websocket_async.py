"""``AsyncHostLoop(transport="websocket")`` against the mock's WebSocket route on a real
socket: the sync transport's semantics on ``websockets.asyncio`` (one socket per run,
several responses on it, a drop mid-response reconciled by the HTTP rules on resume, a
request error before any response handled as the HTTP answer is)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.loop import AsyncHostLoop, LoopResult, ProviderHTTPError
from callgate.mock import JournalEntry, MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, MODEL, refund_script, refund_specs, remote_count

pytest.importorskip("websockets")

NAME = "openai-ws-async"
ANSWER_42 = {"function_results": [{"name": "refund", "output_contains": "42"}]}


def _loop(
    server: MockServer, ledger: Ledger, remote: Path, *, store: bool, **kw: Any
) -> AsyncHostLoop:
    return AsyncHostLoop(
        protocol="openai_responses",
        base_url=server.openai_base_url,
        api_key="test-key",
        ledger=ledger,
        tools=refund_specs(remote),
        model=MODEL,
        store=store,
        headers={"x-callgate-conversation": NAME},
        retry_backoff=0.0,
        transport="websocket",
        **kw,
    )


def _drive(
    script: Any,
    ledger: Ledger,
    remote: Path,
    *,
    store: bool,
    resume: bool = False,
    served: bool = True,
    **kw: Any,
) -> tuple[list[LoopResult | BaseException], list[JournalEntry]]:
    """Run the script's run once (and resume it once); the outcomes and the journal."""

    async def main() -> tuple[list[LoopResult | BaseException], list[JournalEntry]]:
        outcomes: list[LoopResult | BaseException] = []
        async with MockServer(script) as server:
            async with _loop(server, ledger, remote, store=store, **kw) as loop:
                steps = [lambda: loop.run("run-1", "Refund order 42.")]
                if resume:
                    steps.append(lambda: loop.resume("run-1"))
                for step in steps:
                    try:
                        outcomes.append(await step())
                    except Exception as exc:  # a drop the budget did not cover
                        outcomes.append(exc)
            if served:
                server.assert_script_done()
            return outcomes, server.journal.entries()

    return asyncio.run(main())


@pytest.mark.parametrize("store", [True, False], ids=["stored", "unstored"])
def test_a_two_call_loop_goes_over_one_socket_and_applies_the_tool_once(
    store: bool, ledger: Ledger, remote: Path
) -> None:
    script = refund_script({NAME: ("openai_responses", 1, 1)})
    (result,), entries = _drive(script, ledger, remote, store=store)
    assert isinstance(result, LoopResult)
    assert (result.status, result.text, result.turns) == ("final", FINAL, 2)
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert remote_count(remote) == 1
    assert [(e.method, e.outcome) for e in entries] == [("WS", "matched")] * 2
    assert entries[0].connection == entries[1].connection  # one socket for the run
    first, second = (e.body for e in entries)
    assert first["type"] == second["type"] == "response.create"
    assert "stream" not in first  # implicit on a socket
    assert "stream" not in second
    assert ("previous_response_id" in second) is store
    assert ledger.turn_snapshot("run-1", 1)["events"][0]["type"] == "response.created"


def test_several_turns_share_the_runs_socket(ledger: Ledger, remote: Path) -> None:
    b = ScriptBuilder(seed=3)
    b.turn("openai_responses", conversation=NAME, calls=[call("refund", order_id=42)])
    b.turn("openai_responses", conversation=NAME, expect=ANSWER_42,
           calls=[call("refund", order_id=43)])  # fmt: skip
    answer_43 = {"function_results": [{"name": "refund", "output_contains": "43"}]}
    b.turn("openai_responses", conversation=NAME, expect=answer_43, text=FINAL)
    (result,), entries = _drive(b.build(), ledger, remote, store=True)
    assert isinstance(result, LoopResult)
    assert (result.status, result.turns) == ("final", 3)
    assert [e.state for e in result.effects] == [EffectState.DELIVERED] * 2
    assert remote_count(remote) == 2
    assert len(entries) == 3
    assert len({e.connection for e in entries}) == 1
    # Each continuation names the response before it: the socket's own lineage.
    ids = [ledger.requests("run-1")[i].provider_turn_id for i in range(3)]
    assert [e.body.get("previous_response_id") for e in entries] == [None, *ids[:2]]


@pytest.mark.parametrize("code", [1011, 1000])
@pytest.mark.parametrize("store", [True, False], ids=["stored", "unstored"])
def test_a_socket_closed_mid_response_is_reconciled_on_resume(
    code: int, store: bool, ledger: Ledger, remote: Path
) -> None:
    """Without a retry budget the drop ends ``run`` (the request stays in doubt); ``resume``
    reconciles by the HTTP rules: GET the stored response, or a new socket and a re-send."""
    b = ScriptBuilder(seed=7)
    cut = {"type": "disconnect", "after": 5, "close_code": code}
    b.turn("openai_responses", conversation=NAME, calls=[call("refund", order_id=42)], fault=cut)
    if not store:  # a re-send gets a fresh copy of the call turn
        b.turn("openai_responses", conversation=NAME, calls=[call("refund", order_id=42)])
    b.turn("openai_responses", conversation=NAME, expect=ANSWER_42, text=FINAL)
    (dropped, result), entries = _drive(
        b.build(), ledger, remote, store=store, resume=True, max_retries=0
    )
    assert isinstance(dropped, ConnectionError), dropped  # SocketDroppedError
    assert "mid-response" in str(dropped)
    assert isinstance(result, LoopResult)
    assert (result.status, result.text) == ("final", FINAL)
    assert remote_count(remote) == 1  # the cut response released nothing; the tool ran once
    sockets = [e.connection for e in entries if e.method == "WS"]
    assert len(sockets) == (2 if store else 3)
    assert sockets[0] != sockets[1]  # resume opened a new socket
    gets = [e for e in entries if e.method == "GET"]
    assert len(gets) == (1 if store else 0)  # the stored response fetched back, not asked again
    states = [r.state.value for r in ledger.requests("run-1")]
    assert states[0] == ("turn_persisted" if store else "unknown")


def test_an_error_event_before_a_response_is_the_http_answer(ledger: Ledger, remote: Path) -> None:
    """A 429 error event is retried on the same socket (the server answered: the socket is
    sound); the tool still runs once."""
    script = refund_script(
        {NAME: ("openai_responses", 1, 1)}, fault={"type": "http_error", "status": 429, "times": 1}
    )
    (result,), entries = _drive(script, ledger, remote, store=False)
    assert isinstance(result, LoopResult)
    assert (result.status, result.text) == ("final", FINAL)
    assert remote_count(remote) == 1
    assert len({e.connection for e in entries}) == 1
    states = [r.state.value for r in ledger.requests("run-1")]
    assert states == ["failed_definite", "turn_persisted", "turn_persisted"]


def test_a_definite_error_event_refuses_the_run(ledger: Ledger, remote: Path) -> None:
    b = ScriptBuilder(seed=5)
    fault = {"type": "http_error", "status": 400, "message": "bad request"}
    b.turn("openai_responses", conversation=NAME, calls=[call("refund", order_id=42)], fault=fault)
    # A refused request consumes no turn: the script's turn stays unserved.
    (result,), entries = _drive(b.build(), ledger, remote, store=True, served=False)
    assert [e.method for e in entries] == ["WS"]
    assert isinstance(result, LoopResult)
    assert result.status == "refused"
    assert isinstance(result.error, ProviderHTTPError)
    assert result.error.status == 400
    assert "bad request" in result.error.body
    assert remote_count(remote) == 0
