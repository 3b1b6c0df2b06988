"""A randomised model test of the ledger's state machine (Hypothesis, stateful).

Random turns, claims, settles by current and by stale workers, crashes (a claim abandoned
and its lease expired), recovery, verification and operator decisions, checked against a
plain model after every step: the stored state, the result (never overwritten once
settled), the late results and a legal audit trail for every effect.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

from callgate.ledger import (
    Applied,
    ApprovalError,
    Claim,
    ConflictError,
    EffectClass,
    EffectState,
    FencedError,
    Inconclusive,
    NotApplied,
    Tool,
    is_legal_trail,
    open_ledger,
)

from .ledger_harness import PG_URL, record, require_postgres

S = EffectState
CLASSES = {
    "read": EffectClass.READ,
    "idem": EffectClass.IDEMPOTENT_REMOTE,
    "verif": EffectClass.VERIFIABLE,
    "amo": EffectClass.AT_MOST_ONCE,
    "local": EffectClass.LOCAL_TX,
}
RETRY = {"read", "idem", "local"}
VERDICTS: list[Any] = []


def _run(args: Any, ctx: Any) -> Any:
    return {"ran": ctx.attempt}


def _verify(args: Any, ctx: Any) -> Any:
    return VERDICTS.pop() if VERDICTS else Inconclusive()


def _fresh_schema() -> tuple[str, str]:
    import psycopg

    schema = f"cgm_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    return schema, f"{PG_URL}{sep}options=-csearch_path%3D{schema}%20-csynchronous_commit%3Doff"


def _tools() -> list[Tool]:
    tools = [
        Tool(name, _run, effect=cls, verify=_verify if name == "verif" else None)
        for name, cls in CLASSES.items()
    ]
    tools.append(Tool("gated", _run, requires_approval=True))
    return tools


class LedgerMachine(RuleBasedStateMachine):
    claims = Bundle("claims")
    store = "sqlite"

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.schema: str | None = None
        url = f"sqlite:///{Path(self.dir) / 'm.db'}"
        if self.store == "postgres":
            self.schema, url = _fresh_schema()
        self.ledger = open_ledger(url, tools=_tools())
        self.state: dict[str, S] = {}
        self.tool: dict[str, str] = {}
        self.result: dict[str, Any] = {}
        self.late: dict[str, int] = {}
        self.turns = 0

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.schema is not None:
            import psycopg

            with psycopg.connect(PG_URL, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {self.schema} CASCADE")

    def _ids(self, *states: S) -> list[str]:
        return sorted(e for e, s in self.state.items() if s in states)

    @rule(tools=st.lists(st.sampled_from([*CLASSES, "gated"]), min_size=1, max_size=3))
    def record_turn(self, tools: list[str]) -> None:
        self.turns += 1
        calls = [(f"t{self.turns}c{i}", t, {"i": i}) for i, t in enumerate(tools)]
        for effect in record(self.ledger, "run", calls):
            self.state[effect.effect_id] = (
                S.AWAITING_APPROVAL if effect.tool == "gated" else S.READY
            )
            self.tool[effect.effect_id] = effect.tool
            self.late[effect.effect_id] = 0

    @precondition(lambda self: self._ids(S.AWAITING_APPROVAL))
    @rule(data=st.data(), grant=st.booleans())
    def decide_approval(self, data: st.DataObject, grant: bool) -> None:
        effect_id = data.draw(st.sampled_from(self._ids(S.AWAITING_APPROVAL)))
        if grant:
            self.ledger.approve(effect_id, actor="op")
            self.state[effect_id] = S.READY
        else:
            self.ledger.deny(effect_id, actor="op", reason="no")
            self.state[effect_id] = S.REJECTED

    @precondition(lambda self: self.state)
    @rule(target=claims, data=st.data())
    def claim(self, data: st.DataObject) -> Claim | None:
        effect_id = data.draw(st.sampled_from(sorted(self.state)))
        try:
            claim = self.ledger.claim(effect_id, worker_id="w")
        except ApprovalError:
            pytest.fail("a granted approval was refused")
        if self.state[effect_id] is S.READY:
            assert claim is not None
            self.state[effect_id] = S.EXECUTING
        else:
            assert claim is None
        return claim

    @rule(claim=consumes(claims), applied=st.booleans())
    def settle(self, claim: Claim | None, applied: bool) -> None:
        if claim is None:
            return
        current = self.ledger.effect(claim.effect_id)
        live = self.state[claim.effect_id] is S.EXECUTING and current.epoch == claim.epoch
        try:
            self.ledger.settle(claim, {"attempt": claim.attempt}, applied=applied)
        except FencedError:
            assert not live
            self.late[claim.effect_id] += 1
            return
        assert live
        self.state[claim.effect_id] = S.COMMITTED if applied else S.FAILED

    @rule()
    def crash_and_recover(self) -> None:
        executing = self._ids(S.EXECUTING)
        with self.ledger.transaction() as tx:
            tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE state = 'executing'")
        report = self.ledger.recover("rescuer")
        assert sorted(report.lost) == executing
        for effect_id in executing:
            tool = self.tool[effect_id]
            if tool in RETRY:
                self.state[effect_id] = S.READY
            elif tool == "verif":
                self.state[effect_id] = S.UNKNOWN
            else:
                self.state[effect_id] = S.NEEDS_OPERATOR

    @precondition(lambda self: any(self.tool[e] == "verif" for e in self._ids(S.UNKNOWN)))
    @rule(data=st.data(), verdict=st.sampled_from(["applied", "not_applied", "inconclusive"]))
    def verify(self, data: st.DataObject, verdict: str) -> None:
        candidates = [e for e in self._ids(S.UNKNOWN) if self.tool[e] == "verif"]
        effect_id = data.draw(st.sampled_from(candidates))
        outcome = {"applied": Applied("yes"), "not_applied": NotApplied()}.get(verdict)
        VERDICTS[:] = [outcome or Inconclusive(1.0)]
        after = self.ledger.verify(effect_id)
        expected = {"applied": S.COMMITTED, "not_applied": S.READY}.get(verdict, S.UNKNOWN)
        assert after.state is expected
        self.state[effect_id] = expected

    @precondition(lambda self: self._ids(S.UNKNOWN, S.NEEDS_OPERATOR))
    @rule(data=st.data(), action=st.sampled_from(["commit", "fail", "retry"]), stale=st.booleans())
    def resolve(self, data: st.DataObject, action: str, stale: bool) -> None:
        effect_id = data.draw(st.sampled_from(self._ids(S.UNKNOWN, S.NEEDS_OPERATOR)))
        version = self.ledger.effect(effect_id).version - int(stale)
        decision = f"{'stale' if stale else 'd'}-{effect_id[:8]}-{version}-{action}"
        try:
            self.ledger.resolve(
                effect_id,
                expected_version=version,
                decision_id=decision,
                action=action,
                result="resolved",
                reason="r",
                actor="op",
            )
        except ConflictError:
            assert stale
            return
        assert not stale
        needs = self.tool[effect_id] == "gated"
        retry_state = S.AWAITING_APPROVAL if needs else S.READY
        self.state[effect_id] = {"commit": S.COMMITTED, "fail": S.FAILED}.get(action, retry_state)

    @invariant()
    def matches_the_model(self) -> None:
        for effect in self.ledger.effects("run"):
            assert effect.state is self.state[effect.effect_id], effect.effect_id
            if effect.state in (S.COMMITTED, S.FAILED, S.REJECTED):
                first = self.result.setdefault(effect.effect_id, effect.result)
                assert effect.result == first  # a settled result is never overwritten
            assert len(self.ledger.late_results(effect.effect_id)) == self.late[effect.effect_id]
            assert is_legal_trail(self.ledger.audit(effect.effect_id))


LedgerMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_ledger_state_machine_sqlite = LedgerMachine.TestCase


class PostgresLedgerMachine(LedgerMachine):
    store = "postgres"


PostgresLedgerMachine.TestCase.settings = settings(
    max_examples=8,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_ledger_state_machine_postgres() -> None:
    require_postgres()
    PostgresLedgerMachine.TestCase("runTest").runTest()
