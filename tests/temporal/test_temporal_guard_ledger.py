"""The guard's decisions, outside Temporal (the same code runs inside an activity): the
ledger lets a guarded call run once, replays its result, refuses a business key reused
with other arguments, and never re-runs a lost ``at_most_once`` attempt."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import EffectClass, ToolContext
from callgate.temporal import guarded
from callgate.temporal._guard import GuardError


def test_a_guarded_call_runs_once_and_then_returns_its_recorded_result(tmp_path: Path) -> None:
    ran: list[str] = []

    @guarded(f"sqlite:///{tmp_path / 'g.db'}", business_key=lambda a: f"order-{a['order_id']}")
    def refund(order_id: int, note: str = "", *, ctx: ToolContext) -> dict[str, Any]:
        ran.append(ctx.idempotency_token)
        return {"refunded": order_id}

    assert list(inspect.signature(refund).parameters) == ["order_id", "note"]  # no ctx
    assert refund(42) == {"refunded": 42}
    assert refund(order_id=42) == {"refunded": 42}  # the same intent: the recorded result
    assert len(ran) == 1
    assert refund(7) == {"refunded": 7}  # another order is another effect
    assert len(ran) == 2


def test_a_business_key_reused_with_other_arguments_is_rejected(tmp_path: Path) -> None:
    @guarded(f"sqlite:///{tmp_path / 'g.db'}", business_key=lambda a: f"order-{a['order_id']}")
    def refund(order_id: int, amount: int) -> str:
        return "ok"

    assert refund(42, 10) == "ok"
    with pytest.raises(GuardError) as refused:
        refund(42, 99)  # the model asks again for order 42, with another amount
    assert refused.value.state == "rejected"
    assert not refused.value.retryable


def test_a_lost_at_most_once_attempt_waits_for_an_operator(tmp_path: Path) -> None:
    calls: list[int] = []

    @guarded(f"sqlite:///{tmp_path / 'g.db'}", business_key=lambda a: str(a["n"]),
             effect=EffectClass.AT_MOST_ONCE)  # fmt: skip
    def pay(n: int) -> str:
        calls.append(n)
        raise TimeoutError("no answer")  # applied or not: nobody knows

    for _ in range(2):
        with pytest.raises(GuardError) as held:
            pay(1)
        assert held.value.state == "needs_operator"
    assert calls == [1]  # never attempted again without a decision
