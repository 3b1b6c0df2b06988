"""The ``send`` seam with the official SDK clients: their events go through
``feed_event``, their own retries are off, and the loop's budget is the only one."""

from __future__ import annotations

from pathlib import Path

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.loop import HostLoop, ProviderHTTPError
from callgate.loop.sdk import anthropic_send, openai_send
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, MODEL, refund_script, refund_specs, remote_count

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


@pytest.mark.parametrize("store", [True, False], ids=["stateful", "stateless"])
def test_the_loop_runs_over_the_official_openai_client(
    store: bool, ledger: Ledger, remote: Path
) -> None:
    with MockServer(refund_script({"sdk": ("openai_responses", 1, 1)})) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=5)
        loop = HostLoop(
            protocol="openai_responses",
            send=openai_send(client),
            ledger=ledger,
            tools=refund_specs(remote),
            model=MODEL,
            store=store,
            headers={"x-callgate-conversation": "sdk"},
        )
        result = loop.run("run-sdk", "Refund order 42.")
        client.close()
        server.assert_script_done()
    assert result.status == "final"
    assert result.text == FINAL
    assert remote_count(remote) == 1
    assert result.effects[0].state is EffectState.DELIVERED
    snapshot = ledger.turn_snapshot("run-sdk", 1)
    assert "events" in snapshot  # fed as decoded events, re-parsed the same way on resume


def test_the_loop_runs_over_the_official_anthropic_client(ledger: Ledger, remote: Path) -> None:
    with MockServer(refund_script({"sdk": ("anthropic_messages", 1, 1)})) as server:
        client = anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="k")
        loop = HostLoop(
            protocol="anthropic_messages",
            send=anthropic_send(client),
            ledger=ledger,
            tools=refund_specs(remote),
            model=MODEL,
            headers={"x-callgate-conversation": "sdk"},
        )
        result = loop.run("run-sdk", "Refund order 42.")
        client.close()
        server.assert_script_done()
    assert result.status == "final"
    assert remote_count(remote) == 1


def test_sdk_retries_never_multiply_the_loops_budget(ledger: Ledger, remote: Path) -> None:
    b = ScriptBuilder()
    b.turn(
        "openai_responses",
        conversation="sdk",
        calls=[call("refund", order_id=42)],
        fault={"type": "http_error", "status": 503, "times": 10},
    )
    with MockServer(b.build()) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=5)
        loop = HostLoop(
            protocol="openai_responses",
            send=openai_send(client),
            ledger=ledger,
            tools=refund_specs(remote),
            model=MODEL,
            max_retries=2,
            retry_backoff=0.0,
            headers={"x-callgate-conversation": "sdk"},
        )
        result = loop.run("run-sdk", "Refund order 42.")
        client.close()
        attempts = len(server.journal.requests(conversation="sdk"))
    assert result.status == "refused"
    assert isinstance(result.error, ProviderHTTPError)
    assert attempts == 3  # one send and the loop's two retries; the client's five unused
