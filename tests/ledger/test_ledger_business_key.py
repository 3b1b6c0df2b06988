"""A tool's ``business_key`` is the host's code over the model's arguments. A key that
cannot be computed (the callable raises, or returns a non-str) gives that call an error
result the model sees, recorded in the ledger, and the run goes on: the model was paid
for, the other calls of the turn still run. A non-callable is refused when the Tool is
built, never in the middle of a run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from callgate import UsageError
from callgate.ledger import EffectState, Ledger, Tool, open_ledger
from callgate.loop import HostLoop, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call

from .ledger_harness import record

Make = Callable[..., Ledger]


def _ok(args: Any, ctx: Any) -> str:
    return "done"


@pytest.mark.parametrize(
    ("kwargs", "role"),
    [
        ({"business_key": "order_id"}, "business_key"),
        ({"business_key": 3}, "business_key"),
        ({"verify": {"applied": True}}, "verify"),
    ],
)
def test_a_non_callable_is_refused_when_the_tool_is_built(
    kwargs: dict[str, Any], role: str
) -> None:
    with pytest.raises(UsageError, match=f"tool 'refund': {role} must be callable"):
        Tool("refund", _ok, **kwargs)


def test_a_non_callable_run_is_refused_when_the_tool_is_built() -> None:
    with pytest.raises(UsageError, match="run must be callable, not NoneType"):
        Tool("refund", None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "says"),
    [
        (lambda a: a["order_id"], "must be a str, got int"),
        (lambda a: a["order"], "KeyError: 'order'"),
        (lambda a: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_a_key_that_cannot_be_computed_is_that_call_s_error_result(
    make_ledger: Make, key: Callable[[Any], Any], says: str
) -> None:
    ran: list[Any] = []
    tools = [
        Tool("refund", lambda a, c: ran.append(a) or "refunded", business_key=key),
        Tool("note", lambda a, c: "noted"),
    ]
    ledger = make_ledger(tools=tools)
    keyed, other = record(ledger, "run", [("c1", "refund", {"order_id": 7}), ("c2", "note", {})])
    assert keyed.state is EffectState.REJECTED
    assert keyed.result is not None
    assert keyed.result.is_error
    assert says in str(keyed.result.output)
    assert "not run" in str(keyed.result.output)
    assert other.state is EffectState.READY  # the rest of the turn goes on
    ledger.execute(other.effect_id, worker_id="w")
    results = ledger.results("run", keyed.turn_seq)
    assert results is not None
    assert [r.is_error for r in results] == [True, False]
    assert ran == []
    trail = [(e.from_state, e.to_state) for e in ledger.audit(keyed.effect_id)]
    assert trail == [(None, "proposed"), ("proposed", "rejected")]


def test_the_host_loop_returns_the_error_result_and_finishes_the_run(tmp_path: Path) -> None:
    """The docs' old example: an int order id under ``lambda a: a["order_id"]``."""
    ran: list[Any] = []
    refund = Tool(
        "refund", lambda a, c: ran.append(a) or "refunded", business_key=lambda a: a["order_id"]
    )
    schema = {"type": "object", "properties": {"order_id": {"type": "integer"}}}
    result = {"name": "refund", "output_contains": "business key"}
    script = (
        ScriptBuilder()
        .turn("openai_responses", calls=[call("refund", order_id=7)])
        .turn(
            "openai_responses", text="I could not refund it.", expect={"function_results": [result]}
        )
        .build()
    )
    with (
        MockServer(script) as server,
        open_ledger(f"sqlite:///{tmp_path / 'l.db'}", tools=[refund]) as ledger,
        HostLoop(
            protocol="openai_responses",
            base_url=server.openai_base_url,
            api_key="k",
            ledger=ledger,
            model="gpt-5",
            tools=[ToolSpec(refund, description="Refund an order.", parameters=schema)],
        ) as loop,
    ):
        done = loop.run("conversation-1", "Refund order 7.")
        server.assert_script_done()
    assert done.status == "final"
    assert done.text == "I could not refund it."
    assert ran == []
    (effect,) = done.effects
    assert effect.state is EffectState.DELIVERED
    assert effect.result is not None
    assert effect.result.is_error
