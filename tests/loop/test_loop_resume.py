"""R5 on resume, in process (the crash matrix does it with a real SIGKILL): a stored turn
is fetched back, an unstored one re-sent, and a request that declared provider-side
effects is held for an operator. An unresolved effect under ``report`` reaches the model
as the fixed outcome-unknown error."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from callgate.ledger import UNKNOWN_OUTCOME, Ledger, open_ledger
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import FINAL, VARIANTS, make_loop, refund_script, refund_specs, remote_count


class Crash(BaseException):
    """Stands in for the process dying at a fault point (nothing catches it)."""


def _crashing(tmp_path: Path, point: str) -> Ledger:
    def fault(name: str) -> None:
        if name == point:
            raise Crash(name)

    return open_ledger(f"sqlite:///{tmp_path / 'loop.db'}", fault=fault)


@pytest.mark.parametrize(
    ("variant", "fetched"),
    [("openai-stateful", True), ("gemini-stateful", True), ("anthropic", False),
     ("openai-stateless", False)],
)  # fmt: skip
def test_a_turn_lost_after_its_first_event_is_fetched_back_or_re_sent(
    variant: str, fetched: bool, tmp_path: Path, remote: Path
) -> None:
    protocol = VARIANTS[variant][0]
    asks = 1 if fetched else 2
    with MockServer(refund_script({variant: (protocol, asks, 1)})) as server:
        dying = _crashing(tmp_path, "before_turn_persist")
        with make_loop(server, dying, variant, refund_specs(remote)) as loop, pytest.raises(Crash):
            loop.run("run-1", "Refund order 42.")
        dying.close()
        with (
            open_ledger(f"sqlite:///{tmp_path / 'loop.db'}") as ledger,
            make_loop(server, ledger, variant, refund_specs(remote)) as loop,
        ):
            result = loop.resume("run-1")
        server.assert_script_done()
        gets = [e for e in server.journal.requests(conversation=None) if e.method == "GET"]
    assert result.status == "final"
    assert result.text == FINAL
    assert remote_count(remote) == 1
    assert len(gets) == (1 if fetched else 0)


def test_a_request_with_provider_side_effects_in_doubt_is_held(
    tmp_path: Path, remote: Path
) -> None:
    with MockServer(refund_script({"openai-stateless": ("openai_responses", 1, 1)})) as server:
        dying = _crashing(tmp_path, "after_request_sent")
        specs = refund_specs(remote)
        with (
            make_loop(server, dying, "openai-stateless", specs, provider_side_effects=True) as loop,
            pytest.raises(Crash),
        ):
            loop.run("run-1", "Refund order 42.")
        dying.close()
        with (
            open_ledger(f"sqlite:///{tmp_path / 'loop.db'}") as ledger,
            make_loop(
                server, ledger, "openai-stateless", specs, provider_side_effects=True
            ) as loop,
        ):
            result = loop.resume("run-1")
            again = loop.resume("run-1")
        posts = [e for e in server.journal.requests() if e.method == "POST"]
    assert result.status == again.status == "held"
    assert "provider-side effects" in result.detail
    assert len(posts) == 1  # never re-sent
    assert remote_count(remote) == 0


def test_an_unknown_outcome_under_report_reaches_the_model_as_an_error(
    tmp_path: Path, remote: Path
) -> None:
    b = ScriptBuilder(seed=7)
    b.turn("anthropic_messages", conversation="anthropic", calls=[call("refund", order_id=42)])
    unknown = {"name": "refund", "output_contains": "outcome unknown", "is_error": True}
    b.turn("anthropic_messages", conversation="anthropic",
           expect={"function_results": [unknown]}, text=FINAL)  # fmt: skip
    script = b.build()
    with MockServer(script) as server:
        dying = _crashing(tmp_path, "after_return")
        specs = refund_specs(remote)
        with (
            make_loop(
                server, dying, "anthropic", specs, unresolved="report", lease_seconds=0.2
            ) as loop,
            pytest.raises(Crash),
        ):
            loop.run("run-1", "Refund order 42.")
        dying.close()
        time.sleep(0.3)  # the attempt's lease runs out
        with (
            open_ledger(f"sqlite:///{tmp_path / 'loop.db'}") as ledger,
            make_loop(server, ledger, "anthropic", specs, unresolved="report") as loop,
        ):
            result = loop.resume("run-1")
        server.assert_script_done()
    assert result.status == "final"
    assert remote_count(remote) == 1  # applied once, never re-run (at most once)
    assert UNKNOWN_OUTCOME.startswith("outcome unknown")
