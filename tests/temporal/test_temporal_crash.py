"""The crash matrix on Temporal: two worker processes run callgate's workflow over one
ledger; the first to reach a fault point is SIGKILLed there; Temporal retries its activity
on the other worker, and the ledger decides what may run again.

The provider is callgate's mock (its script holds exactly the requests the rules allow, so
its journal proves there is no extra request and no duplicate continuation); the remote
is an fsynced append-only file. Per cell: a worker really died; the run ends ``final``;
the effect is ``delivered``; the remote applied it exactly once (never for ``read``), the
``at_most_once`` one through an operator's decision delivered as a Temporal update; the
audit trail is legal. Bounded in ``make test`` (a few cells: each costs a heartbeat
timeout and two worker starts; the protocol modes rotate through them);
``CALLGATE_CRASH_MATRIX=full`` (``make crash-matrix-temporal``) runs every point x class x
store x protocol mode. ``CALLGATE_CRASH_MODES=anthropic,openai-chat`` narrows the full
matrix to some modes.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHandle

from callgate.ledger import EffectState, is_legal_trail, open_ledger
from callgate.mock import MockServer
from callgate.temporal import CallgateRun, Decision, RunInput, RunOutcome, Timing, start_dev_server

from ..ledger.ledger_harness import remote_count, require_postgres
from ..ledger.test_ledger_crash_loop import FINAL, VARIANTS, _base, _script, expected_posts
from .temporal_harness import require_temporal, spawn_workers, stop

LEASE = 2.0  # the ledger's lease and Temporal's heartbeat timeout, seconds
# Model side (inside model_turn / continue_run) and effect side (inside run_effect).
POINTS = (
    "after_request_record",  # before the request is sent
    "after_request_sent",
    "after_first_event",
    "after_turn_persist",
    "after_claim",
    "after_sent",  # inside the effect: the remote applied it
    "after_return",
    "after_commit",  # after the result is stored
    "after_continuation_record",
    "after_continuation_sent",
)
TOOLS = ("read", "idem", "verif", "amo")
STORES = ("sqlite", "postgres")
# The loop's protocol modes (tests/ledger/test_ledger_crash_loop.py's VARIANTS) over HTTP
# without Anthropic's message threads: one per protocol, and both OpenAI Responses modes.
MODES = (
    "openai-stateful",
    "openai-stateless",
    "openai-chat",
    "anthropic",
    "gemini-stateful",
    "gemini-generate-content",
)
FULL = os.environ.get("CALLGATE_CRASH_MATRIX") == "full"
_ONLY = [m for m in os.environ.get("CALLGATE_CRASH_MODES", "").split(",") if m]
# Before the send, inside the effect after the side effect, after the result is stored;
# the protocol modes rotate through these cells (openai-stateful x after_sent x verifiable
# x SQLite runs in tests/temporal/test_temporal_demo.py).
_BOUNDED = [
    ("after_request_record", "idem", "sqlite"),
    ("after_sent", "amo", "postgres"),
    ("after_commit", "verif", "postgres"),
]
BOUNDED = [(*cell, MODES[(i * 2 + 1) % len(MODES)]) for i, cell in enumerate(_BOUNDED)]
CELLS = list(itertools.product(POINTS, TOOLS, STORES, _ONLY or MODES)) if FULL else BOUNDED


def _url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    require_postgres()
    url: str = request.getfixturevalue("pg_schema_url")
    return url


async def _operator(handle: WorkflowHandle[Any, Any], url: str, remote: Path) -> int:
    """Decide on what waits, from the remote (the ground truth); how many decisions."""
    decided = 0
    for ref in await handle.query(CallgateRun.waiting):
        with open_ledger(url) as ledger:
            effect = ledger.effect(ref.effect_id)
        if effect.state is EffectState.AWAITING_APPROVAL:
            decision = Decision(effect.effect_id, "approve", actor="operator")
        else:
            applied = remote_count(remote, effect.idempotency_token) > 0
            decision = Decision(
                effect.effect_id,
                "resolve",
                actor="operator",
                reason="checked the remote",
                action="commit" if applied else "retry",
                expected_version=effect.version,
                decision_id=f"d-{effect.effect_id}-{effect.version}",
                result={"applied": effect.idempotency_token} if applied else None,
            )
        await handle.execute_update(CallgateRun.decide, decision)
        decided += 1
    return decided


async def _run_cell(
    point: str, tool: str, variant: str, url: str, tmp_path: Path
) -> tuple[Any, ...]:
    remote, marker = tmp_path / "remote.log", tmp_path / "killed"
    protocol, mode = VARIANTS[variant]
    asks, answers = expected_posts(point, variant)
    run_id, queue = f"run-{uuid.uuid4().hex[:12]}", f"q-{uuid.uuid4().hex[:8]}"
    async with (
        await start_dev_server() as env,
        MockServer(_script(variant, tool, asks, answers)) as server,
    ):
        address = env.client.service_client.config.target_host
        workers = spawn_workers(
            "tests.temporal.worker_child",
            tmp_path,
            *(
                [
                    address,
                    queue,
                    url,
                    str(remote),
                    _base(server, variant),
                    point,
                    str(marker),
                    f"w{i}",
                    str(LEASE),
                    protocol,
                    mode,
                ]
                for i in range(2)
            ),
        )
        try:
            handle = await env.client.start_workflow(
                CallgateRun.run,
                args=[
                    RunInput(run_id, "Do it."),
                    Timing(heartbeat=LEASE, retry_initial=0.2, retry_max=1.0),
                ],
                id=run_id,
                task_queue=queue,
            )
            result = asyncio.ensure_future(handle.result())
            for _ in range(240):
                done, _pending = await asyncio.wait({result}, timeout=0.5)
                if done:
                    break
                await _operator(handle, url, remote)
            outcome: RunOutcome = await asyncio.wait_for(result, timeout=1)
        finally:
            codes = [stop(w) for w in workers]
        server.assert_script_done()  # exactly the scripted requests: no more, no fewer
        posts = [e.body for e in server.journal.requests() if e.method == "POST"]
    return outcome, codes, posts[asks:], answers, remote, marker


@pytest.mark.parametrize(
    ("point", "tool", "store", "variant"), CELLS, ids=["-".join(c) for c in CELLS]
)
def test_sigkill_of_a_temporal_worker_never_repeats_a_turn_or_an_effect(
    point: str,
    tool: str,
    store: str,
    variant: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    require_temporal()
    url = _url(store, tmp_path, request)
    outcome, codes, continuations, answers, remote, marker = asyncio.run(
        _run_cell(point, tool, variant, url, tmp_path)
    )
    assert marker.exists(), "no worker reached the fault point"
    assert codes.count(-signal.SIGKILL) == 2, codes  # the victim, then the survivor at the end
    assert outcome.status == "final", outcome
    assert outcome.text == FINAL
    with open_ledger(url) as ledger:
        (run_id,) = _runs(ledger)
        (effect,) = ledger.effects(run_id)
        trail = ledger.audit(effect.effect_id)
    assert effect.state is EffectState.DELIVERED
    assert remote_count(remote, effect.idempotency_token) == (0 if tool == "read" else 1)
    assert is_legal_trail(trail), [(e.from_state, e.event, e.to_state) for e in trail]
    in_doubt = tool == "amo" and point in ("after_claim", "after_sent", "after_return")
    assert outcome.decisions == (1 if in_doubt else 0)  # only a lost at_most_once attempt
    assert len(continuations) == answers
    assert all(body == continuations[0] for body in continuations)  # the same results


def _runs(ledger: Any) -> list[str]:
    with ledger.transaction() as tx:
        return [row[0] for row in tx.rows("SELECT run_id FROM ledger_runs", ())]


def test_the_cells_cover_every_protocol_mode_and_the_bounded_ones_differ() -> None:
    assert set(MODES) <= set(VARIANTS)
    assert len({cell[3] for cell in BOUNDED}) == len(BOUNDED)  # a mode per bounded cell
    if FULL and not _ONLY:
        assert len(CELLS) == len(POINTS) * len(TOOLS) * len(STORES) * len(MODES)
