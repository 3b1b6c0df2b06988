"""A refused turn is never executed and comes back with its typed error; the loop's own
retry budget is the only one, and a definite HTTP error is not retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callgate import ProviderError, TruncatedStreamError
from callgate.ledger import Ledger, RequestState
from callgate.loop import ProviderHTTPError, TurnRefused
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, make_loop, refund_specs, remote_count

REFUSALS: dict[str, tuple[str, dict[str, Any], type[Exception]]] = {
    "openai-stateful": (
        "openai_responses",
        {"status": "incomplete", "calls": [{"name": "refund", "raw": '{"order_id": 4'}]},
        ProviderError,
    ),
    "anthropic": (
        "anthropic_messages",
        {
            "status": "max_tokens",
            "calls": [call("refund", order_id=42), {"name": "refund", "raw": '{"order_id'}],
        },
        TurnRefused,
    ),
    "gemini-stateful": (
        "gemini_interactions",
        {"calls": [call("refund", order_id=42)], "disconnect_after": 5},
        TruncatedStreamError,
    ),
}


@pytest.mark.parametrize("variant", list(REFUSALS))
def test_a_refused_turn_runs_nothing_and_reports_its_typed_error(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol, respond, error = REFUSALS[variant]
    script = ScriptBuilder().turn(protocol, conversation=variant, **respond).build()
    with MockServer(script) as server:
        with make_loop(server, ledger, variant, refund_specs(remote)) as loop:
            result = loop.run("run-r", "Refund order 42.")
            again = loop.resume("run-r")
        assert len(server.journal.requests(conversation=variant)) == 1  # never re-asked
    assert result.status == "refused"
    assert isinstance(result.error, error), result.error
    assert result.effects == ()
    assert remote_count(remote) == 0
    (req,) = ledger.requests("run-r")
    assert req.state is RequestState.FAILED_DEFINITE
    assert again.status == "refused"


def _http_script(status: int, times: int) -> Any:
    b = ScriptBuilder()
    b.turn(
        "openai_responses",
        conversation="openai-stateful",
        calls=[call("refund", order_id=42)],
        fault={"type": "http_error", "status": status, "times": times},
    )
    b.turn("openai_responses", conversation="openai-stateful", text=FINAL)
    return b.build()


def test_retryable_http_errors_spend_the_loops_budget_then_succeed(
    ledger: Ledger, remote: Path
) -> None:
    with MockServer(_http_script(503, 2)) as server:
        with make_loop(server, ledger, "openai-stateful", refund_specs(remote)) as loop:
            result = loop.run("run-h", "Refund order 42.")
        statuses = [e.status for e in server.journal.requests(conversation="openai-stateful")]
    assert result.status == "final"
    assert statuses == [503, 503, 200, 200]
    assert remote_count(remote) == 1


def test_an_exhausted_budget_is_a_refusal_with_the_http_error(ledger: Ledger, remote: Path) -> None:
    with MockServer(_http_script(503, 2)) as server:
        with make_loop(
            server, ledger, "openai-stateful", refund_specs(remote), max_retries=1
        ) as loop:
            result = loop.run("run-h", "Refund order 42.")
        assert len(server.journal.requests(conversation="openai-stateful")) == 2
    assert result.status == "refused"
    assert isinstance(result.error, ProviderHTTPError)
    assert result.error.status == 503
    assert remote_count(remote) == 0


def test_a_definite_http_error_is_not_retried(ledger: Ledger, remote: Path) -> None:
    with MockServer(_http_script(400, 1)) as server:
        with make_loop(server, ledger, "openai-stateful", refund_specs(remote)) as loop:
            result = loop.run("run-h", "Refund order 42.")
        assert len(server.journal.requests(conversation="openai-stateful")) == 1
    assert result.status == "refused"
    assert isinstance(result.error, ProviderHTTPError)
    assert not result.error.retryable


def test_a_503_is_retried_even_with_provider_side_effects(ledger: Ledger, remote: Path) -> None:
    # An HTTP error before any event started no turn: retrying it is not a re-send in doubt.
    specs = refund_specs(remote)
    with (
        MockServer(_http_script(503, 1)) as server,
        make_loop(server, ledger, "openai-stateful", specs, provider_side_effects=True) as loop,
    ):
        result = loop.run("run-h", "Refund order 42.")
    assert result.status == "final"
    states = [r.state for r in ledger.requests("run-h")]
    assert states[0] is RequestState.FAILED_DEFINITE
    assert remote_count(remote) == 1
