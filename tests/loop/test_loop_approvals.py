"""An approval-gated tool waits for a decision; an approval lets it run once, a denial is
an error result the model sees (``is_error`` where the protocol has it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, VARIANTS, make_loop, refund_specs, remote_count


def _script(protocol: str, conversation: str, *, denied: bool) -> object:
    b = ScriptBuilder(seed=3)
    b.turn(protocol, conversation=conversation, calls=[call("refund", order_id=42)])
    result = {"name": "refund", "output_contains": "not approved" if denied else "42"}
    if denied and protocol != "openai_responses":  # OpenAI outputs have no error flag
        result["is_error"] = True
    b.turn(protocol, conversation=conversation, expect={"function_results": [result]}, text=FINAL)
    return b.build()


@pytest.mark.parametrize("variant", ["openai-stateful", "anthropic", "gemini-stateless"])
def test_an_approved_call_runs_once_after_the_decision(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol = VARIANTS[variant][0]
    specs = refund_specs(remote, requires_approval=True)
    with MockServer(_script(protocol, variant, denied=False)) as server:
        with make_loop(server, ledger, variant, specs) as loop:
            waiting = loop.run("run-a", "Refund order 42.")
            assert waiting.status == "waiting"
            (effect,) = waiting.pending
            assert effect.state is EffectState.AWAITING_APPROVAL
            assert remote_count(remote) == 0
            still = loop.resume("run-a")  # nothing decided yet: nothing runs, nothing sent
            assert still.status == "waiting"
            assert len(server.journal.requests(conversation=variant)) == 1
            ledger.approve(effect.effect_id, actor="alice")
            done = loop.resume("run-a")
        server.assert_script_done()
    assert done.status == "final"
    assert done.text == FINAL
    assert remote_count(remote) == 1
    assert ledger.effect(effect.effect_id).state is EffectState.DELIVERED


@pytest.mark.parametrize("variant", ["openai-stateless", "anthropic", "gemini-stateful"])
def test_a_denial_is_an_error_result_the_model_sees(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol = VARIANTS[variant][0]
    specs = refund_specs(remote, requires_approval=True)
    with MockServer(_script(protocol, variant, denied=True)) as server:
        with make_loop(server, ledger, variant, specs) as loop:
            waiting = loop.run("run-d", "Refund order 42.")
            (effect,) = waiting.pending
            ledger.deny(effect.effect_id, actor="bob", reason="not approved by finance")
            done = loop.resume("run-d")
        server.assert_script_done()
        continuation = server.journal.requests(conversation=variant)[-1].body
    assert done.status == "final"
    assert remote_count(remote) == 0
    text = str(continuation)
    assert "not approved by finance" in text
    if protocol == "anthropic_messages":
        (block,) = continuation["messages"][-1]["content"]
        assert block["is_error"] is True
