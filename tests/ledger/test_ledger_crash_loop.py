"""The model side of the crash matrix: the host loop in a child process is SIGKILLed at a
named fault point, then a rescuer in this process runs the same loop to the end.

The provider is callgate's mock server; its journal is the witness for the model side:
the script holds exactly the turns the rules allow (a re-sent call turn gets a fresh copy),
and ``assert_script_done`` fails on any request more or less. So per cell: the identified
turn is fetched back (OpenAI stored, Gemini stored: GET) and never asked again; a turn
lost before it was identified, or on a protocol that cannot fetch it, is re-sent once
(R5); every continuation carries the same results. The remote is an fsynced append-only
file: applications <= 1, exactly 1 for the classes that protect it and wherever an
operator or verifier settled a lost attempt. Bounded by default (every point once, a
rotating product of protocols, classes and stores); ``CALLGATE_CRASH_MATRIX=full`` runs
every point x class x store x protocol. On Anthropic message threads a re-sent
continuation finds its message already continued and the loop replays the conversation in
a new thread: the provider sees the same answers asked as without threads.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import EffectState, Ledger, is_legal_trail, open_ledger
from callgate.loop import MODEL_FAULT_POINTS
from callgate.mock import MockServer, ScriptBuilder, call

from .ledger_harness import PG_URL, crash_tools, outbox_sender, remote_count, require_postgres
from .loop_crash_child import STORED, loop_for

EFFECT_POINTS = ("after_claim", "after_sent", "after_return", "after_commit")
POINTS = (*MODEL_FAULT_POINTS, *EFFECT_POINTS)
TOOLS = ("read", "idem", "verif", "amo", "amo_approved", "local")
VARIANTS = {
    "openai-stateful": ("openai_responses", "stateful"),
    "openai-stateless": ("openai_responses", "stateless"),
    # OpenAI Responses over one WebSocket per run: a killed host drops its socket.
    "openai-ws-stateful": ("openai_responses", "ws-stateful"),
    "openai-ws-stateless": ("openai_responses", "ws-stateless"),
    # The same on AsyncHostLoop (websockets.asyncio), driven on one event loop.
    "openai-ws-async-stateful": ("openai_responses", "ws-async-stateful"),
    "openai-ws-async-stateless": ("openai_responses", "ws-async-stateless"),
    "anthropic": ("anthropic_messages", "stateful"),
    "anthropic-threads": ("anthropic_messages", "threads"),
    "gemini-stateful": ("gemini_interactions", "stateful"),
    "gemini-stateless": ("gemini_interactions", "stateless"),
    "gemini-generate-content": ("gemini_generate_content", "stateless"),
    "openai-chat": ("openai_chat_completions", "stateless"),
}
STORES = ("sqlite", "postgres")
FINAL = "Done."
FULL = os.environ.get("CALLGATE_CRASH_MATRIX") == "full"
_V, _T = list(VARIANTS), list(TOOLS)
BOUNDED = [
    (point, _V[i % len(_V)], _T[(i * 5 + 1) % len(_T)], STORES[i % 2])
    for i, point in enumerate(POINTS)
]
CELLS = list(itertools.product(POINTS, VARIANTS, TOOLS, STORES)) if FULL else BOUNDED
S = EffectState


def _retrievable(variant: str) -> bool:
    protocol, store = VARIANTS[variant]
    return store in STORED and protocol != "anthropic_messages"


def expected_posts(point: str, variant: str) -> tuple[int, int]:
    """(call turns, final answers) the provider must see: R5 re-sends only what it must."""
    asks = answers = 1
    lost = point in ("after_first_event", "before_turn_persist")
    if point == "after_request_sent" or (lost and not _retrievable(variant)):
        asks = 2
    if point == "after_continuation_sent" or (
        point == "after_continuation_identified" and not _retrievable(variant)
    ):
        answers = 2
    return asks, answers


def _script(variant: str, tool: str, asks: int, answers: int) -> Any:
    protocol = VARIANTS[variant][0]
    b = ScriptBuilder(seed=11)
    prefixes = {"openai_responses": "call_", "openai_chat_completions": "call_"}
    prefix = {**prefixes, "anthropic_messages": "toolu_"}.get(protocol, "")
    for ask in range(asks):  # a re-sent request gets fresh call ids, as from a provider
        b.turn(
            protocol,
            calls=[{**call(tool, n=1), "id": f"{prefix}crash{ask}"}],
            chunking={"fixed": 9},
        )
    answered = [{"call_id": f"{prefix}crash{asks - 1}"}]
    for _ in range(answers):
        b.turn(protocol, expect={"function_results": answered}, text=FINAL)
    return b.build()


def _url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    require_postgres()
    url: str = request.getfixturevalue("pg_schema_url")
    return url


def _base(server: MockServer, variant: str) -> str:
    protocol = VARIANTS[variant][0]
    return {
        "openai_responses": server.openai_base_url,
        "openai_chat_completions": server.openai_base_url,
        "anthropic_messages": server.anthropic_base_url,
        "gemini_interactions": server.gemini_base_url,
        "gemini_generate_content": server.gemini_base_url,
    }[protocol]


def _settle(ledger: Ledger, pending: Any, remote: Path) -> None:
    """An operator's look at the remote (the ground truth) for what recovery left open."""
    for effect in pending:
        if effect.state is S.AWAITING_APPROVAL:
            ledger.approve(effect.effect_id, actor="operator")
        elif effect.state in (S.NEEDS_OPERATOR, S.UNKNOWN):
            applied = remote_count(remote, effect.idempotency_token) > 0
            ledger.resolve(
                effect.effect_id,
                expected_version=effect.version,
                decision_id=f"d-{effect.effect_id}-{effect.version}",
                action="commit" if applied else "retry",
                result={"applied": effect.idempotency_token} if applied else None,
                reason="checked the remote",
                actor="operator",
            )


@pytest.mark.parametrize(
    ("point", "variant", "tool", "store"), CELLS, ids=["-".join(c) for c in CELLS]
)
def test_sigkill_of_the_host_loop_never_repeats_a_turn_or_an_effect(
    point: str, variant: str, tool: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(store, tmp_path, request)
    remote = tmp_path / "remote.log"
    protocol, mode = VARIANTS[variant]
    asks, answers = expected_posts(point, variant)
    run_id = f"loop-{point}"
    with MockServer(_script(variant, tool, asks, answers)) as server:
        args = [
            url,
            protocol,
            mode,
            tool,
            point,
            str(remote),
            run_id,
            _base(server, variant),
            "default",
        ]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        child = subprocess.run(
            [sys.executable, "-m", "tests.ledger.loop_crash_child", *args],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-3000:]
        with open_ledger(url) as ledger:
            with ledger.transaction() as tx:  # the dead child's leases run out
                tx.run("UPDATE ledger_effects SET lease_until = 0 WHERE lease_until IS NOT NULL")
                tx.run("UPDATE ledger_runs SET owner_until = 0 WHERE owner_until IS NOT NULL")
            with loop_for(ledger, protocol, mode, tool, remote, _base(server, variant), "default",
                          "rescuer") as loop:  # fmt: skip
                result = loop.run(run_id, "Do it.")
                for _ in range(4):
                    if result.status != "waiting":
                        break
                    _settle(ledger, result.pending, remote)
                    result = loop.resume(run_id)
            ledger.relay(outbox_sender(remote), worker_id="rescuer")
            (effect,) = ledger.effects(run_id)
            trail = ledger.audit(effect.effect_id)
            approvals = ledger.approvals(effect.effect_id)
        server.assert_script_done()  # exactly the scripted requests: no more, no fewer
        posts = [e for e in server.journal.requests() if e.method in ("POST", "WS")]
    assert result.status == "final", result
    assert result.text == FINAL
    assert effect.state is S.DELIVERED
    token = effect.idempotency_token + (":0" if tool == "local" else "")
    applied = remote_count(remote, token)
    assert applied == (0 if tool == "read" else 1)
    assert is_legal_trail(trail), [(e.from_state, e.event, e.to_state) for e in trail]
    consumed = [a for a in approvals if a[2] is not None]
    assert len({a[0] for a in consumed}) == len(consumed)
    if mode == "threads" and answers == 2:
        _check_thread_replay(posts[asks:])
        return
    continuations = [p.body for p in posts[asks:]]
    assert len(continuations) == answers
    assert all(body == continuations[0] for body in continuations)  # the same results


def _check_thread_replay(continuations: list[Any]) -> None:
    """The lost continuation, its re-send refused (already continued), then the whole
    conversation in a new thread ending with the very same results."""
    lost, refused, replay = continuations
    assert [lost.outcome, refused.outcome, replay.outcome] == ["matched", "rejected", "matched"]
    assert refused.body == lost.body
    assert refused.response["error"]["details"]["error_code"] == "thread_already_continued"
    assert replay.body["thread"] == {"type": "create"}
    new = lost.body["messages"]
    assert replay.body["messages"][-len(new) :] == new


def test_the_cell_table_covers_every_point(tmp_path: Path) -> None:
    points = {cell[0] for cell in CELLS}
    assert points == set(POINTS)
    assert {cell[1] for cell in CELLS} == set(VARIANTS)
    assert {cell[3] for cell in CELLS} == set(STORES)
    assert PG_URL  # the PostgreSQL cells read the same server as the rest of the suite
    assert crash_tools(tmp_path / "r")  # one tool per class
