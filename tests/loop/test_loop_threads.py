"""The host loop on Anthropic message threads (``HostLoop(threads=True)``), against the mock
over a real socket: a thread is created, continued with only the new user message, and a
thread lost under the loop (a re-send after a crash finds its message already continued;
the thread expired) is replayed whole in a new thread, rebuilt from the ledger, with no
tool run twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from callgate import UsageError
from callgate.ledger import Ledger, open_ledger
from callgate.loop import HostLoop
from callgate.loop.sdk import anthropic_send
from callgate.mock import MockServer

from .loop_helpers import FINAL, MODEL, make_loop, refund_script, refund_specs, remote_count

BETA = "message-threads-2026-08-12"
VARIANT = "anthropic-threads"


def _script(answers: int = 1) -> Any:
    return refund_script({VARIANT: ("anthropic_messages", 1, answers)})


def _sent(server: MockServer) -> list[Any]:
    return [e for e in server.journal.requests(conversation=VARIANT) if e.method == "POST"]


def test_a_threaded_run_sends_only_the_new_turn(ledger: Ledger, remote: Path) -> None:
    with MockServer(_script()) as server:
        with make_loop(server, ledger, VARIANT, refund_specs(remote)) as loop:
            result = loop.run("run-1", "Refund order 42.")
        server.assert_script_done()
        first, second = _sent(server)
    assert (result.status, result.text, remote_count(remote)) == ("final", FINAL, 1)
    assert first.body["thread"] == {"type": "create"}
    assert BETA in first.headers["anthropic-beta"]
    assert second.body["thread"]["type"] == "continue"
    assert [m["role"] for m in second.body["messages"]] == ["user"]
    assert "tools" not in second.body
    assert BETA in second.headers["anthropic-beta"]


class Crash(BaseException):
    """Stands in for the process dying at a fault point."""


def test_a_continuation_re_sent_after_a_crash_is_replayed_in_a_new_thread(
    tmp_path: Path, remote: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'loop.db'}"

    def fault(point: str) -> None:
        if point == "after_continuation_identified":
            raise Crash(point)

    with MockServer(_script(answers=2)) as server:  # the lost answer costs one more
        with (
            open_ledger(url, fault=fault) as dying,
            make_loop(server, dying, VARIANT, refund_specs(remote)) as loop,
            pytest.raises(Crash),
        ):
            loop.run("run-1", "Refund order 42.")
        # The provider answered the continuation, but its turn was lost with the process.
        specs = refund_specs(remote)
        with open_ledger(url) as ledger, make_loop(server, ledger, VARIANT, specs) as loop:
            result = loop.resume("run-1")
        sent = _sent(server)
    assert (result.status, result.text, remote_count(remote)) == ("final", FINAL, 1)
    kinds = [(e.body["thread"]["type"], e.outcome) for e in sent]
    # create; continue (lost); the same continue again: already continued; a new thread.
    assert kinds == [("create", "matched"), ("continue", "matched"),
                     ("continue", "rejected"), ("create", "matched")]  # fmt: skip
    assert sent[2].response["error"]["details"]["error_code"] == "thread_already_continued"
    replay = sent[3].body
    assert [m["role"] for m in replay["messages"]] == ["user", "assistant", "user"]
    assert replay["messages"][2] == sent[1].body["messages"][0]  # the same results, no re-run
    assert replay["tools"] == sent[0].body["tools"]


def test_a_thread_that_expired_while_the_tool_ran_is_replayed(ledger: Ledger, remote: Path) -> None:
    with MockServer(_script()) as server:
        specs = refund_specs(remote)
        run = specs[0].tool.run

        def expiring(args: Any, ctx: Any) -> Any:
            latest = list(server.state.session("default").store.records)[-1]
            url = f"{server.url}/_callgate/anthropic/threads/{latest}/expire"
            httpx.post(url).raise_for_status()
            return run(args, ctx)

        object.__setattr__(specs[0].tool, "run", expiring)
        with make_loop(server, ledger, VARIANT, specs) as loop:
            result = loop.run("run-1", "Refund order 42.")
        sent = _sent(server)
    assert (result.status, result.text, remote_count(remote)) == ("final", FINAL, 1)
    assert [e.response.get("error", {}).get("details", {}).get("error_code")
            for e in sent if e.outcome == "rejected"] == ["thread_not_found"]  # fmt: skip
    assert sent[-1].body["thread"] == {"type": "create"}


def test_threads_over_the_official_anthropic_client(ledger: Ledger, remote: Path) -> None:
    anthropic = pytest.importorskip("anthropic")
    if tuple(int(p) for p in anthropic.__version__.split(".")[:2]) < (2, 14):
        pytest.skip("message threads arrived in anthropic 2.14.0")
    with MockServer(_script()) as server:
        client = anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="k")
        loop = HostLoop(
            protocol="anthropic_messages", send=anthropic_send(client), ledger=ledger,
            tools=refund_specs(remote), model=MODEL, threads=True,
            headers={"x-callgate-conversation": VARIANT, "anthropic-beta": "other-beta"},
        )  # fmt: skip
        result = loop.run("run-sdk", "Refund order 42.")
        client.close()
        server.assert_script_done()
        first, second = _sent(server)
    assert (result.status, result.text, remote_count(remote)) == ("final", FINAL, 1)
    assert first.headers["anthropic-beta"].split(",") == ["other-beta", BETA]
    assert second.body["thread"]["type"] == "continue"


def test_threads_are_only_for_anthropic(ledger: Ledger, remote: Path) -> None:
    with pytest.raises(UsageError, match="anthropic_messages"):
        HostLoop(
            protocol="openai_responses", base_url="http://127.0.0.1:9", ledger=ledger,
            tools=refund_specs(remote), model=MODEL, threads=True,
        )  # fmt: skip
