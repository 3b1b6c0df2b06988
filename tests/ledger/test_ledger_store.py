"""The ledger's behaviour, one suite run on both stores (SQLite file and PostgreSQL)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from callgate import ToolResult, UsageError
from callgate._digest import canonical_digest
from callgate.ledger import (
    UNKNOWN_OUTCOME,
    Applied,
    ApprovalError,
    CallInput,
    ConflictError,
    EffectClass,
    EffectFailed,
    EffectState,
    FencedError,
    Inconclusive,
    Ledger,
    NotApplied,
    RequestState,
    RunBusyError,
    Tool,
    TurnInput,
    is_legal_trail,
)

from .ledger_harness import record

S = EffectState
Make = Callable[..., Ledger]


def _echo(args: Any, ctx: Any) -> Any:
    return {"echo": args, "token": ctx.idempotency_token}


def _tools(**overrides: Any) -> list[Tool]:
    tools = {
        "read": Tool("read", _echo, effect=EffectClass.READ),
        "idem": Tool("idem", _echo, effect=EffectClass.IDEMPOTENT_REMOTE),
        "verif": Tool(
            "verif", _echo, effect=EffectClass.VERIFIABLE, verify=lambda a, c: NotApplied()
        ),
        "amo": Tool("amo", _echo),
        "local": Tool("local", _echo, effect=EffectClass.LOCAL_TX),
        "gated": Tool("gated", _echo, requires_approval=True),
    }
    tools.update(overrides)
    return list(tools.values())


def _expire(ledger: Ledger, effect_id: str) -> None:
    """Make a lease expire now (the database clock decides; we move the deadline)."""
    with ledger.transaction() as tx:
        tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE effect_id = ?", (effect_id,))


def _legal(ledger: Ledger, effect_id: str) -> bool:
    return is_legal_trail(ledger.audit(effect_id))


# -- R1: the turn and its intents, together -----------------------------------------------


def test_r1_turn_and_one_effect_per_call_in_one_record(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    effects = record(ledger, "run", [("c1", "idem", {"a": 1}), ("c2", "amo", {"b": 2})])
    assert [(e.call_id, e.state, e.turn_seq, e.position) for e in effects] == [
        ("c1", S.READY, 1, 0),
        ("c2", S.READY, 1, 1),
    ]
    (req,) = ledger.requests("run")
    assert req.state is RequestState.TURN_PERSISTED
    assert ledger.turn_snapshot("run", 1) == {"id": req.provider_turn_id}


def test_r1_a_record_interrupted_mid_turn_writes_nothing_of_it(make_ledger: Make) -> None:
    def key(args: Any) -> str:  # runs after the first call's row, inside the transaction
        raise KeyboardInterrupt

    ledger = make_ledger(tools=_tools(bk=Tool("bk", _echo, business_key=key)))
    with pytest.raises(KeyboardInterrupt):
        record(ledger, "run", [("c1", "idem", {}), ("c2", "bk", {})])
    assert ledger.effects("run") == ()
    assert ledger.requests("run")[0].state is RequestState.IDENTIFIED


def test_re_recording_a_turn_is_idempotent_and_conflicts_are_refused(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    first = record(ledger, "run", [("c1", "idem", {"a": 1})], provider_turn_id="t1", digest="d")
    req = ledger.requests("run")[0]
    again = ledger.record_turn(
        req.request_id, TurnInput("test", "t1", "d", {}, [CallInput("c1", "idem", {"a": 1})])
    )
    assert again == first
    with pytest.raises(ConflictError, match="other calls/arguments"):
        ledger.record_turn(
            req.request_id, TurnInput("test", "t1", "d", {}, [CallInput("c1", "idem", {"a": 2})])
        )
    with pytest.raises(ConflictError, match="another digest"):
        ledger.record_turn(
            req.request_id, TurnInput("test", "t1", "d2", {}, [CallInput("c1", "idem", {"a": 1})])
        )


def test_keys_effect_id_token_and_args_digest(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("call_9", "idem", {"z": [1, 2]})])
    assert effect.effect_id == canonical_digest(
        {"scope": "default", "run": "run", "turn": 1, "call": "call_9"}
    )
    assert effect.args_digest == canonical_digest({"z": [1, 2]})
    assert effect.idempotency_token.startswith("cg-")
    done = ledger.execute(effect.effect_id, worker_id="w")
    assert done.result == ToolResult(
        "call_9", {"echo": {"z": [1, 2]}, "token": effect.idempotency_token}
    )


def test_unregistered_tool_is_rejected_with_an_error_result(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "nope", {})])
    assert effect.state is S.REJECTED
    assert effect.result is not None
    assert effect.result.is_error


# -- claims and fencing -------------------------------------------------------------------


def test_claim_is_exclusive_and_a_fenced_settle_is_kept_aside(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "amo", {})])
    claim = ledger.claim(effect.effect_id, worker_id="w1")
    assert claim is not None
    assert claim.attempt == 1
    assert ledger.claim(effect.effect_id, worker_id="w2") is None
    _expire(ledger, effect.effect_id)
    report = ledger.recover("rescuer")
    assert report.lost == (effect.effect_id,)
    assert report.escalated == (effect.effect_id,)
    with pytest.raises(FencedError):
        ledger.settle(claim, "late answer")
    with pytest.raises(FencedError):
        ledger.heartbeat(claim)
    after = ledger.effect(effect.effect_id)
    assert after.state is S.NEEDS_OPERATOR
    assert after.result is None
    assert ledger.late_results(effect.effect_id) == (
        (1, "w1", {"output": "late answer", "is_error": False}),
    )
    assert _legal(ledger, effect.effect_id)


@pytest.mark.parametrize(
    ("tool", "state"),
    [
        ("read", S.READY),
        ("idem", S.READY),
        ("local", S.READY),
        ("verif", S.UNKNOWN),
        ("amo", S.NEEDS_OPERATOR),
        ("gated", S.NEEDS_OPERATOR),
    ],
)
def test_r2_an_expired_lease_is_unknown_and_only_the_class_reruns(
    make_ledger: Make, tool: str, state: EffectState
) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", tool, {})])
    if tool == "gated":
        ledger.approve(effect.effect_id, actor="op")
    assert ledger.claim(effect.effect_id, worker_id="w1", lease_seconds=60) is not None
    assert ledger.recover("r").lost == ()  # a live lease is not touched
    _expire(ledger, effect.effect_id)
    report = ledger.recover("r")
    assert report.lost == (effect.effect_id,)
    assert ledger.effect(effect.effect_id).state is state
    trail = [(e.from_state, e.to_state) for e in ledger.audit(effect.effect_id)]
    assert ("executing", "unknown") in trail
    assert ("executing", "ready") not in trail
    assert _legal(ledger, effect.effect_id)


def test_claim_next_takes_each_ready_effect_once(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    effects = record(ledger, "run", [(f"c{i}", "idem", {"i": i}) for i in range(3)])
    claims = [ledger.claim_next(worker_id="w") for _ in range(4)]
    assert [c.effect_id if c else None for c in claims] == [
        *(e.effect_id for e in effects),
        None,
    ]


def test_tool_errors_in_doubt_follow_the_class(make_ledger: Make) -> None:
    def boom(args: Any, ctx: Any) -> Any:
        raise RuntimeError("connection reset")

    def nope(args: Any, ctx: Any) -> Any:
        raise EffectFailed("card declined")

    ledger = make_ledger(
        tools=[
            Tool("amo", boom),
            Tool("read", boom, effect=EffectClass.READ),
            Tool("declined", nope),
        ]
    )
    amo, read, declined = record(
        ledger, "run", [("a", "amo", {}), ("r", "read", {}), ("d", "declined", {})]
    )
    assert ledger.execute(amo.effect_id, worker_id="w").state is S.NEEDS_OPERATOR
    failed = ledger.execute(read.effect_id, worker_id="w")
    assert failed.state is S.FAILED
    assert failed.result is not None
    assert failed.result.is_error
    refused = ledger.execute(declined.effect_id, worker_id="w")
    assert refused.state is S.FAILED
    assert refused.result == ToolResult("d", "card declined", is_error=True)


# -- verification and operator decisions ---------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "state"),
    [(Applied({"ok": 1}), S.COMMITTED), (NotApplied(), S.READY), (Inconclusive(5), S.UNKNOWN)],
)
def test_verify_settles_an_unknown_effect(make_ledger: Make, outcome: Any, state: S) -> None:
    tool = Tool("verif", _echo, effect=EffectClass.VERIFIABLE, verify=lambda a, c: outcome)
    ledger = make_ledger(tools=[tool])
    (effect,) = record(ledger, "run", [("c1", "verif", {})])
    ledger.claim(effect.effect_id, worker_id="w1")
    _expire(ledger, effect.effect_id)
    assert ledger.recover("r").to_verify == (effect.effect_id,)
    after = ledger.verify(effect.effect_id)
    assert after.state is state
    if state is S.COMMITTED:
        assert after.result == ToolResult("c1", {"ok": 1})
    assert _legal(ledger, effect.effect_id)


def test_resolve_is_versioned_and_idempotent_per_decision(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "amo", {})])
    ledger.claim(effect.effect_id, worker_id="w1")
    _expire(ledger, effect.effect_id)
    ledger.recover("r")
    stuck = ledger.effect(effect.effect_id)
    assert stuck.state is S.NEEDS_OPERATOR
    with pytest.raises(ConflictError, match="version"):
        ledger.resolve(
            effect.effect_id,
            expected_version=stuck.version - 1,
            decision_id="d1",
            action="commit",
            result="refunded",
            reason="checked",
            actor="op",
        )
    done = ledger.resolve(
        effect.effect_id,
        expected_version=stuck.version,
        decision_id="d1",
        action="commit",
        result="refunded",
        reason="checked",
        actor="op",
    )
    assert done.state is S.COMMITTED
    assert done.result == ToolResult("c1", "refunded")
    again = ledger.resolve(
        effect.effect_id,
        expected_version=stuck.version,
        decision_id="d1",
        action="commit",
        result="refunded",
        reason="checked",
        actor="op",
    )
    assert again == done
    with pytest.raises(ConflictError, match="already used"):
        ledger.resolve(
            effect.effect_id,
            expected_version=stuck.version,
            decision_id="d1",
            action="fail",
            reason="x",
            actor="op",
        )
    with pytest.raises(ConflictError):
        ledger.resolve(
            effect.effect_id,
            expected_version=done.version,
            decision_id="d2",
            action="retry",
            reason="x",
            actor="op",
        )
    assert _legal(ledger, effect.effect_id)


# -- approvals (R3) -----------------------------------------------------------------------


def test_r3_an_approval_is_single_use_and_a_retry_needs_a_new_one(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "gated", {"amount": 5})])
    assert effect.state is S.AWAITING_APPROVAL
    assert ledger.claim(effect.effect_id, worker_id="w") is None
    ledger.approve(effect.effect_id, actor="alice", approval_id="a1")
    claim = ledger.claim(effect.effect_id, worker_id="w")
    assert claim is not None
    _expire(ledger, effect.effect_id)
    ledger.recover("r")
    stuck = ledger.effect(effect.effect_id)
    retry = ledger.resolve(
        effect.effect_id,
        expected_version=stuck.version,
        decision_id="d",
        action="retry",
        reason="remote says no",
        actor="op",
    )
    assert retry.state is S.AWAITING_APPROVAL
    with pytest.raises(ConflictError):
        ledger.approve(effect.effect_id, actor="alice", approval_id="a1")  # id is single use
    ledger.approve(effect.effect_id, actor="alice", approval_id="a2")
    assert ledger.execute(effect.effect_id, worker_id="w").state is S.COMMITTED
    used = ledger.approvals(effect.effect_id)
    assert [a[0] for a in used] == ["a1", "a2"]
    assert used[0][2] is not None
    assert used[1][2] is not None
    assert used[0][2] < used[1][2]
    assert _legal(ledger, effect.effect_id)


def test_r3_an_expired_approval_sends_the_effect_back(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "gated", {})])
    ledger.approve(effect.effect_id, actor="alice", expires_in=-1.0)
    with pytest.raises(ApprovalError):
        ledger.claim(effect.effect_id, worker_id="w")
    assert ledger.effect(effect.effect_id).state is S.AWAITING_APPROVAL
    assert _legal(ledger, effect.effect_id)


def test_r3_an_approval_is_bound_to_the_policy_version(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "gated", {})])
    ledger.approve(effect.effect_id, actor="alice")
    newer = make_ledger(tools=_tools(), policy_version="2")
    with pytest.raises(ApprovalError):
        newer.claim(effect.effect_id, worker_id="w")


def test_r3_an_approval_is_bound_to_the_tool_definition(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "gated", {})])
    ledger.approve(effect.effect_id, actor="alice")
    changed = make_ledger(
        tools=_tools(gated=Tool("gated", _echo, effect=EffectClass.READ, requires_approval=True))
    )
    with pytest.raises(ApprovalError):
        changed.claim(effect.effect_id, worker_id="w")


def test_denial_is_an_error_result_the_model_sees(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "gated", {})])
    denied = ledger.deny(effect.effect_id, actor="bob", reason="over the limit")
    assert denied.state is S.REJECTED
    assert ledger.results("run", 1) == (
        ToolResult("c1", "the operator denied this call: over the limit", is_error=True),
    )


# -- business keys --------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["reject", "replay", "allow"])
def test_business_key_catches_a_reissued_intent(make_ledger: Make, policy: Any) -> None:
    tool = Tool("refund", _echo, business_key=lambda a: a["order"], on_business_duplicate=policy)
    ledger = make_ledger(tools=[tool])
    (first,) = record(ledger, "run", [("c1", "refund", {"order": "o-1"})])
    done = ledger.execute(first.effect_id, worker_id="w")
    (second,) = record(ledger, "run", [("c2", "refund", {"order": "o-1"})])
    if policy == "allow":
        assert second.state is S.READY
        return
    assert second.duplicate_of == first.effect_id
    if policy == "replay":
        assert second.state is S.COMMITTED
        assert second.result == ToolResult("c2", done.result.output if done.result else None)
    else:
        assert second.state is S.REJECTED
        assert second.result
        assert second.result.is_error
    assert _legal(ledger, second.effect_id)


# -- results and delivery (R4) --------------------------------------------------------------


def test_results_hold_or_report_unresolved_effects(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    ledger.open_run("held")
    ledger.open_run("told", unresolved="report")
    for run in ("held", "told"):
        ok, amo = record(ledger, run, [("ok", "idem", {}), ("amo", "amo", {})])
        ledger.execute(ok.effect_id, worker_id="w")
        assert ledger.results(run, 1) is None  # amo still ready
        ledger.claim(amo.effect_id, worker_id="w")
        _expire(ledger, amo.effect_id)
    ledger.recover("r")
    assert ledger.results("held", 1) is None
    told = ledger.results("told", 1)
    assert told is not None
    assert told[1] == ToolResult("amo", UNKNOWN_OUTCOME, is_error=True)


def test_r4_results_are_delivered_when_the_continuation_is_accepted(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "idem", {})])
    ledger.execute(effect.effect_id, worker_id="w")
    nxt = ledger.record_request("run", provider="test", request_digest="d2", carries_turn=1)
    ledger.mark_sent(nxt.request_id)
    assert ledger.effect(effect.effect_id).state is S.COMMITTED  # sent is not accepted
    ledger.identify(nxt.request_id, "resp_next")
    delivered = ledger.effect(effect.effect_id)
    assert delivered.state is S.DELIVERED
    assert delivered.delivered_request_id == nxt.request_id
    assert ledger.results("run", 1) == (delivered.result,)
    with pytest.raises(ConflictError):
        ledger.identify(nxt.request_id, "resp_other")


# -- runs, requests, recovery (R5) ----------------------------------------------------------


def test_one_advancing_builder_per_run(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    lease = ledger.acquire_run("run", worker_id="w1")
    with pytest.raises(RunBusyError):
        ledger.acquire_run("run", worker_id="w2")
    ledger.record_request("run", provider="p", request_digest="d", lease=lease)
    with ledger.transaction() as tx:
        tx.run("UPDATE ledger_runs SET owner_until = 0 WHERE run_id = 'run'")
    taken = ledger.acquire_run("run", worker_id="w2")
    with pytest.raises(FencedError):
        ledger.record_request("run", provider="p", request_digest="d", lease=lease)
    ledger.release_run(taken)
    ledger.acquire_run("run", worker_id="w3")


def test_recover_reports_open_requests_and_resumable_runs(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    record(ledger, "done", [("c1", "idem", {})])
    sent = ledger.record_request("lost", provider="p", request_digest="d")
    ledger.mark_sent(sent.request_id)
    ledger.record_request("side", provider="p", request_digest="d", provider_side_effects=True)
    failed = ledger.record_request("gone", provider="p", request_digest="d")
    ledger.request_failed(failed.request_id, definite=True, reason="400")
    report = ledger.recover("r")
    assert {(r.run_id, r.state, r.provider_side_effects) for r in report.requests} == {
        ("lost", RequestState.SENT, False),
        ("side", RequestState.PREPARED, True),
    }
    assert report.resumable_runs == ("done", "lost", "side")


def test_local_tx_writes_commit_with_the_effect_and_the_relay_sends_once(
    make_ledger: Make,
) -> None:
    def book(args: Any, ctx: Any) -> Any:
        ctx.tx.execute("CREATE TABLE IF NOT EXISTS bookings (token TEXT PRIMARY KEY)")
        ctx.tx.execute("INSERT INTO bookings (token) VALUES (?)", (ctx.idempotency_token,))
        return {"queued": ctx.tx.outbox("email", {"to": args["to"]})}

    def refuse(args: Any, ctx: Any) -> Any:
        ctx.tx.execute("CREATE TABLE IF NOT EXISTS bookings (token TEXT PRIMARY KEY)")
        ctx.tx.execute("INSERT INTO bookings (token) VALUES (?)", ("never",))
        ctx.tx.outbox("email", {"to": "never"})
        raise EffectFailed("no seats")

    ledger = make_ledger(
        tools=[
            Tool("book", book, effect=EffectClass.LOCAL_TX),
            Tool("refuse", refuse, effect=EffectClass.LOCAL_TX),
        ]
    )
    ok, no = record(ledger, "run", [("c1", "book", {"to": "a@x"}), ("c2", "refuse", {})])
    assert ledger.execute(ok.effect_id, worker_id="w").state is S.COMMITTED
    assert ledger.execute(no.effect_id, worker_id="w").state is S.FAILED
    with ledger.transaction() as tx:
        assert tx.rows("SELECT token FROM bookings") == [(ok.idempotency_token,)]
    sent: list[Any] = []
    assert ledger.relay(sent.append, worker_id="relay") == 1
    assert ledger.relay(sent.append, worker_id="relay") == 0
    assert [(m.payload, m.idempotency_token) for m in sent] == [
        ({"to": "a@x"}, ok.idempotency_token + ":0")
    ]


def test_relay_puts_a_failed_send_back(make_ledger: Make) -> None:
    def book(args: Any, ctx: Any) -> Any:
        return ctx.tx.outbox("hook", {"n": 1})

    ledger = make_ledger(tools=[Tool("book", book, effect=EffectClass.LOCAL_TX)])
    (effect,) = record(ledger, "run", [("c1", "book", {})])
    ledger.execute(effect.effect_id, worker_id="w")

    def broken(message: Any) -> None:
        raise OSError("down")

    with pytest.raises(OSError, match="down"):
        ledger.relay(broken, worker_id="relay")
    sent: list[Any] = []
    assert ledger.relay(sent.append, worker_id="relay") == 1
    assert sent[0].attempt == 2


def test_lease_deadlines_use_the_database_clock(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "amo", {})])
    ledger.claim(effect.effect_id, worker_id="w", lease_seconds=30)
    with ledger.transaction() as tx:
        row = tx.one("SELECT lease_until - {now} FROM ledger_effects")
    assert row is not None
    assert 25 < float(row[0]) <= 30
    assert abs(time.time() + 30 - float(_lease_until(ledger))) < 60  # same epoch scale


def _lease_until(ledger: Ledger) -> float:
    with ledger.transaction() as tx:
        row = tx.one("SELECT lease_until FROM ledger_effects")
    assert row is not None
    return float(row[0])


def test_record_turn_can_claim_its_ready_effects_in_the_same_commit(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    req = ledger.record_request("run", provider="p", request_digest="d", sent=True)
    assert req.state is RequestState.SENT
    calls = [CallInput("c1", "idem", {}), CallInput("c2", "gated", {})]
    idem, gated = ledger.record_turn(
        req.request_id, TurnInput("p", "t1", "d", {}, calls), claim_as="w1"
    )
    assert (idem.state, gated.state) == (S.EXECUTING, S.AWAITING_APPROVAL)
    assert ledger.claim(idem.effect_id, worker_id="w2") is None
    claim = ledger.held_claim(idem)
    assert claim.worker_id == "w1"
    assert ledger.settle(claim, "done").state is S.COMMITTED
    with pytest.raises(UsageError):
        ledger.held_claim(gated)
    assert _legal(ledger, idem.effect_id)


def test_no_transaction_is_held_while_a_tool_runs(make_ledger: Make) -> None:
    other = make_ledger()
    seen: list[int] = []

    def probe(args: Any, ctx: Any) -> Any:
        # Another connection must be able to lock this very effect row while the tool runs.
        lock = " FOR UPDATE NOWAIT" if other.dialect == "postgres" else ""
        with other.transaction() as tx:
            row = tx.one(
                f"SELECT attempt FROM ledger_effects WHERE effect_id = ?{lock}", (ctx.effect_id,)
            )
        seen.append(int(row[0]) if row else -1)
        return "ok"

    ledger = make_ledger(tools=[Tool("probe", probe, effect=EffectClass.IDEMPOTENT_REMOTE)])
    (effect,) = record(ledger, "run", [("c1", "probe", {})])
    assert ledger.execute(effect.effect_id, worker_id="w").state is S.COMMITTED
    assert seen == [1]


def test_an_inconclusive_verify_is_not_asked_again_before_its_settle_time(
    make_ledger: Make,
) -> None:
    asked: list[str] = []

    def check(args: Any, ctx: Any) -> Any:
        asked.append(ctx.effect_id)
        return Inconclusive(settle_seconds=600)

    tool = Tool("verif", _echo, effect=EffectClass.VERIFIABLE, verify=check)
    ledger = make_ledger(tools=[tool])
    (effect,) = record(ledger, "run", [("c1", "verif", {})])
    ledger.claim(effect.effect_id, worker_id="w1")
    _expire(ledger, effect.effect_id)
    assert ledger.recover("r").to_verify == (effect.effect_id,)
    assert ledger.verify(effect.effect_id).state is S.UNKNOWN
    assert ledger.verify(effect.effect_id).state is S.UNKNOWN  # not due: not asked
    assert asked == [effect.effect_id]
    assert ledger.recover("r").to_verify == ()
    _expire(ledger, effect.effect_id)  # the settle time has passed
    ledger.verify(effect.effect_id)
    assert len(asked) == 2


def test_r4_a_recorded_answer_to_a_continuation_delivers_its_results(make_ledger: Make) -> None:
    ledger = make_ledger(tools=_tools())
    (effect,) = record(ledger, "run", [("c1", "idem", {})])
    ledger.execute(effect.effect_id, worker_id="w")
    nxt = ledger.record_request("run", provider="p", request_digest="d", carries_turn=1, sent=True)
    ledger.record_turn(nxt.request_id, TurnInput("p", "final", "d", {"text": "done"}, []))
    assert ledger.effect(effect.effect_id).state is S.DELIVERED
