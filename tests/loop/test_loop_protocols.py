"""Each protocol's loop against the mock server over a real socket: one tool call, its
effect applied once, the continuation carrying the ledger's result, the final answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from callgate.ledger import EffectState, Ledger
from callgate.mock import MockServer

from .loop_helpers import FINAL, VARIANTS, make_loop, refund_script, refund_specs, remote_count


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_loop_runs_a_tool_once_and_reaches_the_final_answer(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol, store = VARIANTS[variant]
    with MockServer(refund_script({variant: (protocol, 1, 1)})) as server:
        with make_loop(server, ledger, variant, refund_specs(remote)) as loop:
            result = loop.run("run-1", "Refund order 42.")
        server.assert_script_done()
        posts = server.journal.requests(conversation=variant, outcome="matched")
    assert result.status == "final", result
    assert result.text == FINAL
    assert result.turns == 2
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert remote_count(remote) == 1
    assert len(posts) == 2
    second = posts[1].body
    if protocol == "gemini_generate_content":  # the model and the stream are in the path
        assert posts[1].path.endswith(":streamGenerateContent")
        assert [c["role"] for c in second["contents"]] == ["user", "model", "user"]
    else:
        assert second["stream"] is True
    if protocol in ("openai_responses", "gemini_interactions"):
        assert second["store"] is store
        previous = (
            "previous_response_id"
            if protocol == "openai_responses"
            else ("previous_interaction_id")
        )
        assert (previous in second) is store


def test_run_on_a_finished_run_answers_from_the_ledger(ledger: Ledger, remote: Path) -> None:
    with MockServer(refund_script({"anthropic": ("anthropic_messages", 1, 1)})) as server:
        with make_loop(server, ledger, "anthropic", refund_specs(remote)) as loop:
            first = loop.run("run-1", "Refund order 42.")
            again = loop.run("run-1", "Refund order 42.")
        assert len(server.journal.requests(conversation="anthropic")) == 2
    assert first.status == again.status == "final"
    assert again.text == FINAL
    assert remote_count(remote) == 1
