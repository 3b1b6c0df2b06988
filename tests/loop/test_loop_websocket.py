"""The host loop over OpenAI Responses' WebSocket mode, against the mock's route on a real
socket: one socket per run, every response through the connection parser and recorded as
a turn, the tool applied once; a socket dropped mid-response (any close code) is a
connection failure reconciled by the HTTP rules on a new socket, never a re-run tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from callgate import UsageError
from callgate.ledger import EffectState, Ledger
from callgate.loop import AsyncHostLoop, HostLoop
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, MODEL, make_loop, refund_script, refund_specs, remote_count

pytest.importorskip("websockets")


@pytest.mark.parametrize("variant", ["openai-stateful", "openai-stateless"])
def test_a_run_goes_over_one_socket_and_applies_the_tool_once(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    with MockServer(refund_script({variant: ("openai_responses", 1, 1)})) as server:
        loop = make_loop(server, ledger, variant, refund_specs(remote), transport="websocket")
        with loop:
            result = loop.run("run-1", "Refund order 42.")
        server.assert_script_done()
        entries = server.journal.entries()
    assert result.status == "final", result
    assert result.text == FINAL
    assert result.turns == 2
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert remote_count(remote) == 1
    assert [(e.method, e.outcome) for e in entries] == [("WS", "matched")] * 2
    assert entries[0].connection == entries[1].connection  # one socket for the run
    first, second = (e.body for e in entries)
    assert first["type"] == second["type"] == "response.create"
    assert "stream" not in second  # implicit on a socket
    assert ("previous_response_id" in second) is (variant == "openai-stateful")
    snapshot = ledger.turn_snapshot("run-1", 1)
    assert snapshot["events"][0]["type"] == "response.created"  # each response a turn


def test_a_socket_dropped_mid_response_is_resent_on_a_new_socket(
    ledger: Ledger, remote: Path
) -> None:
    name = "openai-stateless"
    b = ScriptBuilder(seed=7)
    cut = {"type": "disconnect", "after": 5, "close_code": 1011}
    b.turn("openai_responses", conversation=name, calls=[call("refund", order_id=42)], fault=cut)
    b.turn("openai_responses", conversation=name, calls=[call("refund", order_id=42)])
    answer = {"function_results": [{"name": "refund", "output_contains": "42"}]}
    b.turn("openai_responses", conversation=name, expect=answer, text=FINAL)
    script = b.build()
    with MockServer(script) as server:
        loop = make_loop(
            server, ledger, "openai-stateless", refund_specs(remote), transport="websocket"
        )
        with loop:
            result = loop.run("run-1", "Refund order 42.")
        server.assert_script_done()
        entries = server.journal.entries()
    assert result.status == "final", result
    assert remote_count(remote) == 1  # the cut response released nothing
    assert len(entries) == 3
    assert entries[0].connection != entries[1].connection == entries[2].connection
    states = [r.state.value for r in ledger.requests("run-1")]
    assert states[0] == "unknown"  # in doubt: re-sent, never run from the cut stream


def test_the_websocket_transport_is_openai_responses_only(ledger: Ledger) -> None:
    common = {"ledger": ledger, "tools": [], "model": MODEL, "transport": "websocket"}
    with pytest.raises(UsageError, match="openai_responses"):
        HostLoop(protocol="anthropic_messages", base_url="http://x.invalid", **common)
    with pytest.raises(UsageError, match="base_url"):
        HostLoop(protocol="openai_responses", send=lambda body, headers: [], **common)
    with pytest.raises(UsageError, match="transport must be"):
        HostLoop(protocol="openai_responses", base_url="http://x.invalid", ledger=ledger,
                 tools=[], model=MODEL, transport="grpc")  # fmt: skip
    with pytest.raises(UsageError, match="openai_responses"):
        AsyncHostLoop(protocol="anthropic_messages", base_url="http://x.invalid", **common)
