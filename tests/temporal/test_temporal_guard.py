"""callgate's guard for a framework's tool inside Temporal: pydantic-ai's durable execution
(``TemporalDurability``) runs an agent against the mock; its refund tool writes to a remote
that has no idempotency keys (an fsynced append-only file), and the worker running it is
SIGKILLed right after the write. Temporal runs the tool's activity again on the other
worker (same workflow, ``attempt=2``); the guard, keyed by the order (business key) and
the argument digest, lets the ledger decide: the lost attempt is recovered, the verifier
finds the refund at the remote, and the recorded result goes back to the model. The refund
is applied once; the model is asked once per turn."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import uuid
from pathlib import Path

import pytest

from callgate.ledger import EffectState, open_ledger
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.temporal import start_dev_server

from .temporal_harness import require_temporal, spawn_workers, stop

if importlib.util.find_spec("pydantic_ai") is None:  # pragma: no cover - dev installs it
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but pydantic-ai is not installed", pytrace=False)
    pytest.skip("pydantic-ai-slim[temporal] is not installed", allow_module_level=True)


async def _run(tmp_path: Path) -> tuple[str, list[int], list[str]]:
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
    from temporalio.client import Client

    script = (
        ScriptBuilder()
        .turn("openai_responses", calls=[call("refund", order_id=42)])
        .turn(
            "openai_responses",
            text="Refunded order 42.",
            expect={"function_results": [{"name": "refund"}]},
        )
        .build()
    )
    queue = f"pai-{uuid.uuid4().hex[:8]}"
    async with await start_dev_server() as env, MockServer(script) as server:
        address = env.client.service_client.config.target_host
        child_env = {
            **os.environ,
            "CALLGATE_PAI_BASE_URL": server.openai_base_url,
            "CALLGATE_PAI_LEDGER": f"sqlite:///{tmp_path / 'ledger.db'}",
            "CALLGATE_PAI_REMOTE": str(tmp_path / "remote.log"),
            "CALLGATE_PAI_MARKER": str(tmp_path / "killed"),
        }
        workers = spawn_workers(
            "tests.temporal.pai_app", tmp_path, [address, queue], [address, queue], env=child_env
        )
        try:
            client = await Client.connect(address, plugins=[PydanticAIPlugin()])
            answer: str = await asyncio.wait_for(
                client.execute_workflow(
                    "pai-refund",
                    "Refund order 42.",
                    id=f"pai-{queue}",
                    task_queue=queue,
                    result_type=str,
                ),
                timeout=120,
            )
        finally:
            codes = [stop(w) for w in workers]
        server.assert_script_done()  # one call turn, one final answer: no re-asked turn
        lines = (tmp_path / "remote.log").read_text().split()
    return answer, codes, lines


def test_a_guarded_pydantic_ai_tool_applies_once_across_a_worker_sigkill(tmp_path: Path) -> None:
    require_temporal()
    answer, codes, lines = asyncio.run(_run(tmp_path))
    assert (tmp_path / "killed").exists()  # a worker died right after the refund
    assert codes == [-signal.SIGKILL, -signal.SIGKILL]  # that one, and the survivor at the end
    assert answer == "Refunded order 42."
    assert len(lines) == 1  # the refund reached the remote once
    with open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        with ledger.transaction() as tx:
            ((run_id,),) = tx.rows("SELECT run_id FROM ledger_runs", ())
        (effect,) = ledger.effects(run_id)
        events = [e.event for e in ledger.audit(effect.effect_id)]
    assert effect.state is EffectState.COMMITTED
    assert effect.result is not None
    assert effect.result.output["verified"] is True
    assert events.count("claim") == 1  # the retried activity never ran the tool again
    assert lines == [effect.idempotency_token]
