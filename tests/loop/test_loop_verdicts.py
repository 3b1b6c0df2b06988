"""callgate's own loop, judged by the mock: on every protocol variant, a clean run gives no
verdict, and so does a run whose call turn is cut or ends in an error event (the loop
refuses that turn and runs nothing), or answered 429/500 first (the loop waits as asked)
(docs/verdicts.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callgate.ledger import Ledger
from callgate.loop import HostLoop
from callgate.loop._model import MAX_RETRY_AFTER, retry_after_of
from callgate.mock import MockServer, Script, ScriptBuilder, call

from .loop_helpers import (
    FINAL,
    MODEL,
    VARIANTS,
    base_url,
    make_loop,
    refund_specs,
    remote_count,
)

FAULTS = {
    "clean": None,
    "cut": {"type": "disconnect", "before_terminal": True},
    "error_event": {"type": "error_event", "before_terminal": True},
}


def _script(variant: str, fault: dict[str, Any] | None) -> Script:
    """The refund turn (with ``fault`` on its stream), then the answer."""
    protocol, _ = VARIANTS[variant]
    b = ScriptBuilder(seed=7)
    ask = {"calls": [call("refund", order_id=42)], "chunking": {"fixed": 7}}
    b.turn(protocol, conversation=variant, **ask, **({"fault": fault} if fault else {}))
    results = {"function_results": [{"name": "refund", "output_contains": "42"}]}
    return b.turn(protocol, conversation=variant, expect=results, text=FINAL).build()


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_the_loop_commits_no_verdict(
    variant: str, fault: str, ledger: Ledger, remote: Path
) -> None:
    with MockServer(_script(variant, FAULTS[fault])) as server:
        with make_loop(server, ledger, variant, refund_specs(remote)) as loop:
            result = loop.run("run-1", "Refund order 42.")
        verdicts = server.verdicts()
        done = server.status()["done"]
    assert verdicts == []
    if fault == "clean":
        assert (result.status, remote_count(remote), done) == ("final", 1, True), result
    else:
        assert (result.status, remote_count(remote), done) == ("refused", 0, False), result


@pytest.mark.parametrize("variant", ["openai-stateful", "gemini-generate-content"])
@pytest.mark.parametrize(
    "fault",
    [
        {"type": "http_error", "status": 429, "retry_after": 1},
        {"type": "http_error", "status": 500},
    ],
    ids=["429-retry-after", "500"],
)
def test_the_loop_waits_as_asked_before_a_retry(
    variant: str, fault: dict[str, Any], ledger: Ledger, remote: Path
) -> None:
    """The Retry-After (Gemini: the RetryInfo delay) is waited out; a 500 gets the backoff."""
    protocol, store = VARIANTS[variant]
    b = ScriptBuilder(seed=7)
    b.turn(protocol, conversation=variant, text=FINAL, fault=fault)
    with MockServer(b.build()) as server:
        loop = HostLoop(
            protocol=protocol, base_url=base_url(server, protocol), api_key="k", ledger=ledger,
            tools=refund_specs(remote), model=MODEL, store=store,
            headers={"x-callgate-conversation": variant},
        )  # fmt: skip
        with loop:
            result = loop.run("run-1", "Hello.")
        assert server.verdicts() == []
    assert result.status == "final", result


@pytest.mark.parametrize(
    ("headers", "body", "delay"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, None, 1.5),
        ({"retry-after": "2"}, None, 2.0),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, None, None),
        ({"retry-after": "86400"}, None, MAX_RETRY_AFTER),
        ({}, '{"error": {"details": [{"retryDelay": "3s"}]}}', 3.0),
        ({}, '{"error": {"details": "retryDelay"}}', None),
        (None, None, None),
    ],
)
def test_the_retry_delay_a_response_asks_for(
    headers: dict[str, str] | None, body: str | None, delay: float | None
) -> None:
    assert retry_after_of(headers, body) == delay
