"""Tool results with media parts, an audit value and Internal markers in the ledger.

Inline media are stored once per digest (``ledger_blobs``), in the transaction that writes
the result naming them; ``results()`` gives them back byte for byte, after a crash too.

Run as a script (``python test_ledger_media.py URL RUN``) it is the child the crash test
SIGKILLs between the blob write and the result write.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from callgate import Internal, MediaPart, TextPart, ToolResult
from callgate.ledger import (
    CallInput,
    EffectClass,
    EffectState,
    FencedError,
    Ledger,
    LedgerError,
    Tool,
    ToolContext,
    TurnInput,
    open_ledger,
)

MiB = 1024 * 1024
# Not a real PNG, but bytes no text codec would round-trip: every byte value, repeated.
IMAGE = (bytes(range(256)) * (5 * MiB // 256 + 1))[: 5 * MiB]
PDF = b"%PDF-1.7\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"


def _parts() -> tuple[Any, ...]:
    return (
        TextPart("the screenshot and the invoice"),
        MediaPart.image(IMAGE, "image/png", filename="shot.png"),
        MediaPart.document(PDF),
        MediaPart.from_url("image", "https://example.com/chart.png", media_type="image/png"),
        MediaPart.from_file_id("document", "file_abc123"),
    )


def _shot(args: Any, ctx: ToolContext) -> Any:
    return ToolResult("ignored", _parts(), audit={"raw_id": 7, "who": "ops"})


def _record(ledger: Ledger, run_id: str, tool: str = "shot") -> str:
    req = ledger.record_request(run_id, provider="test", request_digest="d")
    ledger.mark_sent(req.request_id)
    ledger.identify(req.request_id, f"turn-{run_id}")
    turn = TurnInput("test", f"turn-{run_id}", f"digest-{run_id}", {}, [CallInput("c1", tool, {})])
    (effect,) = ledger.record_turn(req.request_id, turn)
    return effect.effect_id


def _blobs(ledger: Ledger) -> list[tuple[str, int]]:
    with ledger.transaction() as tx:
        rows = tx.rows("SELECT digest, size FROM ledger_blobs ORDER BY digest")
    return [(str(r[0]), int(r[1])) for r in rows]


def _result_bytes(ledger: Ledger) -> int:
    """Characters of every stored result text (effects and late results)."""
    with ledger.transaction() as tx:
        one = tx.one("SELECT COALESCE(SUM(LENGTH(result)), 0) FROM ledger_effects")
        two = tx.one("SELECT COALESCE(SUM(LENGTH(result)), 0) FROM ledger_late_results")
    assert one is not None
    assert two is not None
    return int(one[0]) + int(two[0])


def test_a_result_with_parts_and_audit_comes_back_unchanged(store_url: str) -> None:
    with open_ledger(store_url, tools=[Tool("shot", _shot)]) as ledger:
        effect_id = _record(ledger, "run")
        settled = ledger.execute(effect_id, worker_id="w")
        assert settled.state is EffectState.COMMITTED
    with open_ledger(store_url) as reopened:  # a new handle reads it from the database
        (result,) = reopened.results("run", 1) or ()
        assert result == ToolResult("c1", _parts(), audit={"raw_id": 7, "who": "ops"})
        assert type(result.output) is tuple
        image = result.output[1]
        assert type(image) is MediaPart
        assert type(image.data) is bytes
        assert image.data == IMAGE
        assert image.digest == hashlib.sha256(IMAGE).hexdigest()
        assert result.output[2].data == PDF
        assert result.output[2].media_type == "application/pdf"
        expected = [(hashlib.sha256(b).hexdigest(), len(b)) for b in (IMAGE, PDF)]
        assert _blobs(reopened) == sorted(expected)
        assert _result_bytes(reopened) < 2000  # the result row names the media, never holds it


def test_a_5_mib_image_settled_by_three_attempts_is_stored_once(store_url: str) -> None:
    tool = Tool("shot", _shot, effect=EffectClass.IDEMPOTENT_REMOTE)
    with open_ledger(store_url, tools=[tool]) as ledger:
        effect_id = _record(ledger, "run")
        claims = []
        for _ in range(3):  # each attempt's lease runs out and recovery releases a new one
            claim = ledger.claim(effect_id, worker_id=f"w{len(claims)}")
            assert claim is not None
            claims.append(claim)
            if len(claims) < 3:
                with ledger.transaction() as tx:
                    tx.run("UPDATE ledger_effects SET lease_until = 0")
                ledger.recover("rescuer")
        for stale in claims[:2]:  # the two earlier attempts finish late: kept aside
            with pytest.raises(FencedError):
                ledger.settle(stale, _shot({}, None))  # type: ignore[arg-type]
        assert ledger.settle(claims[2], _shot({}, None)).state is EffectState.COMMITTED  # type: ignore[arg-type]
        assert len(ledger.late_results(effect_id)) == 2
        assert [e[1] for e in ledger.late_results(effect_id)] == ["w0", "w1"]
        late = ledger.late_results(effect_id)[0][2]
        assert late["parts"][1] == {
            "type": "media",
            "kind": "image",
            "media_type": "image/png",
            "filename": "shot.png",
            "digest": hashlib.sha256(IMAGE).hexdigest(),
            "size": 5 * MiB,
        }
        blobs = _blobs(ledger)
        assert (hashlib.sha256(IMAGE).hexdigest(), 5 * MiB) in blobs
        assert len(blobs) == 2
        assert _result_bytes(ledger) < 6000  # three results, three references, one copy
        (result,) = ledger.results("run", 1) or ()
        assert result.output[1].data == IMAGE


def test_a_business_duplicate_replays_the_media_without_a_copy(store_url: str) -> None:
    tool = Tool("shot", _shot, business_key=lambda a: "same", on_business_duplicate="replay")
    with open_ledger(store_url, tools=[tool]) as ledger:
        ledger.execute(_record(ledger, "one"), worker_id="w")
        _record(ledger, "two")
        (first,) = ledger.results("one", 1) or ()
        (second,) = ledger.results("two", 1) or ()
        assert second.output == first.output
        assert second.output[1].data == IMAGE
        assert len(_blobs(ledger)) == 2


def test_internal_markers_and_plain_results_keep_their_shape(store_url: str) -> None:
    outputs = {
        "plain": "text only",
        "json": {"rows": [1, 2.5, None, "x"]},
        "nested": {"visible": 1, "secret": Internal({"token": "t"}), "list": [Internal(3), 4]},
        "whole": Internal("host only"),
        "part": (TextPart("a"), Internal({"k": "v"})),
    }
    tools = [Tool(name, lambda a, c, v=value: v) for name, value in outputs.items()]
    with open_ledger(store_url, tools=tools) as ledger:
        for name in outputs:
            ledger.execute(_record(ledger, name, name), worker_id="w")
        for name, value in outputs.items():
            (result,) = ledger.results(name, 1) or ()
            assert result == ToolResult("c1", value), name
        with ledger.transaction() as tx:  # the text-only envelope is unchanged
            row = tx.one("SELECT result FROM ledger_effects WHERE tool = 'plain'")
        assert row == ('{"is_error":false,"output":"text only"}',)
        assert not _blobs(ledger)


def test_a_media_result_can_be_an_error_and_an_applied_verification(store_url: str) -> None:
    from callgate.ledger import Applied

    def fails(args: Any, ctx: ToolContext) -> Any:
        return ToolResult("x", (TextPart("partial"), MediaPart.image(PDF, "image/gif")), True)

    def verify(args: Any, ctx: ToolContext) -> Any:
        return Applied(_parts())

    tools = [
        Tool("fails", fails),
        Tool("verif", _shot, effect=EffectClass.VERIFIABLE, verify=verify),
    ]
    with open_ledger(store_url, tools=tools) as ledger:
        ledger.execute(_record(ledger, "err", "fails"), worker_id="w")
        (result,) = ledger.results("err", 1) or ()
        assert result.is_error
        assert result.output[1].data == PDF
        effect_id = _record(ledger, "ver", "verif")
        ledger.claim(effect_id, worker_id="dead")
        with ledger.transaction() as tx:
            tx.run("UPDATE ledger_effects SET lease_until = 0")
        ledger.recover("rescuer")
        assert ledger.verify(effect_id).state is EffectState.COMMITTED
        (verified,) = ledger.results("ver", 1) or ()
        assert verified.output == _parts()


def test_a_blob_that_no_longer_hashes_to_its_digest_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with open_ledger(url, tools=[Tool("shot", _shot)]) as ledger:
        ledger.execute(_record(ledger, "run"), worker_id="w")
        with ledger.transaction() as tx:
            tx.run("UPDATE ledger_blobs SET data = ? WHERE size = ?", (b"%PDF-tampered", len(PDF)))
        with pytest.raises(LedgerError, match="does not hash to its digest"):
            ledger.results("run", 1)
        with ledger.transaction() as tx:
            tx.run("DELETE FROM ledger_blobs WHERE size = ?", (len(PDF),))
        with pytest.raises(LedgerError, match="names missing media"):
            ledger.results("run", 1)


def test_show_prints_a_summary_of_media_never_the_bytes(tmp_path: Path, capsys: Any) -> None:
    from callgate.cli import main

    url = f"sqlite:///{tmp_path / 'l.db'}"
    with open_ledger(url, tools=[Tool("shot", _shot)]) as ledger:
        effect_id = _record(ledger, "run")
        ledger.execute(effect_id, worker_id="w")
    assert main(["ledger", "show", "--db", url, effect_id[:12], "--json"]) == 0
    out = capsys.readouterr().out
    shown = json.loads(out)["result"]
    assert shown["audit"] == {"raw_id": 7, "who": "ops"}
    assert shown["parts"][:3] == [
        {"type": "text", "chars": 30},
        {
            "type": "image",
            "media_type": "image/png",
            "size": 5 * MiB,
            "digest": hashlib.sha256(IMAGE).hexdigest(),
            "filename": "shot.png",
        },
        {
            "type": "document",
            "media_type": "application/pdf",
            "size": len(PDF),
            "digest": hashlib.sha256(PDF).hexdigest(),
        },
    ]
    assert shown["parts"][3]["url"] == "https://example.com/chart.png"
    assert main(["ledger", "show", "--db", url, effect_id[:12]]) == 0
    text = capsys.readouterr().out
    assert hashlib.sha256(IMAGE).hexdigest() in text
    assert len(out) < 10_000
    assert len(text) < 10_000


# -- a crash between the blob write and the result write -------------------------------


def _child(url: str, run_id: str) -> None:
    def fault(point: str) -> None:
        if point == "after_media_stored":
            os.kill(os.getpid(), signal.SIGKILL)

    tool = Tool("shot", _shot, effect=EffectClass.IDEMPOTENT_REMOTE)
    ledger = open_ledger(url, tools=[tool], fault=fault)
    ledger.execute(_record(ledger, run_id), worker_id="child", lease_seconds=0.2)


def test_sigkill_between_blob_and_result_write_leaves_no_dangling_reference(
    store_url: str,
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.run(
        [sys.executable, __file__, store_url, "run"],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    tool = Tool("shot", _shot, effect=EffectClass.IDEMPOTENT_REMOTE)
    with open_ledger(store_url, tools=[tool]) as ledger:
        (effect,) = ledger.effects("run")
        assert effect.state is EffectState.EXECUTING
        assert effect.result is None
        assert _blobs(ledger) == []  # the blob rolled back with the result it was for
        with ledger.transaction() as tx:
            tx.run("UPDATE ledger_effects SET lease_until = 0")
        ledger.recover("rescuer")
        assert ledger.execute(effect.effect_id, worker_id="rescuer").state is EffectState.COMMITTED
        (result,) = ledger.results("run", 1) or ()
        assert result.output[1].data == IMAGE
        assert len(_blobs(ledger)) == 2


def test_an_orphan_blob_is_harmless(store_url: str) -> None:
    """A blob no result names (none is left by a crash; an operator may restore one) is
    not read and does not stop the same bytes being stored and read back."""
    with open_ledger(store_url, tools=[Tool("shot", _shot)]) as ledger:
        with ledger.transaction() as tx:
            digest = hashlib.sha256(PDF).hexdigest()
            tx.run(
                "INSERT INTO ledger_blobs (digest, size, data, created_at) VALUES (?, ?, ?, 0)",
                (digest, len(PDF), PDF),
            )
            tx.run(
                "INSERT INTO ledger_blobs (digest, size, data, created_at) VALUES (?, 1, ?, 0)",
                ("0" * 64, b"x"),
            )
        ledger.execute(_record(ledger, "run"), worker_id="w")
        (result,) = ledger.results("run", 1) or ()
        assert result.output == _parts()
        assert len(_blobs(ledger)) == 3


if __name__ == "__main__":
    _child(*sys.argv[1:3])


def test_a_replayed_screenshot_in_request_bodies_is_stored_once(store_url: str) -> None:
    """Stateless continuations replay the history: each request body carries the same
    base64 screenshot; the ledger keeps one copy and gives every body back unchanged."""
    from callgate._digest import canonical_digest

    shot = base64.b64encode(IMAGE[: 96 * 1024]).decode()  # over the 64 KiB threshold
    history: list[Any] = [{"role": "user", "content": "look"}]
    with open_ledger(store_url) as ledger:
        for turn in range(3):
            history = [*history, {"type": "image", "data": shot}, {"text": f"turn {turn}"}]
            body = {"model": "m", "messages": history, "note": "x" * 10}
            req = ledger.record_request("run", provider="t", request_digest="d", body=body)
            assert req.body == body
            assert canonical_digest(req.body) == canonical_digest(body)
            ledger.mark_sent(req.request_id)
            ledger.identify(req.request_id, f"resp-{turn}")
            ledger.record_turn(req.request_id, TurnInput("t", f"resp-{turn}", "g", {}, []))
        bodies = [r.body for r in ledger.requests("run")]
        assert bodies[-1] == body
        assert [len(b["messages"]) for b in bodies] == [3, 5, 7]
        assert all(m["data"] == shot for b in bodies for m in b["messages"] if "data" in m)
        assert len(_blobs(ledger)) == 1  # six copies in three bodies, one row
        with ledger.transaction() as tx:
            stored = tx.one("SELECT SUM(LENGTH(body)) FROM ledger_requests")
        assert stored is not None
        assert int(stored[0]) < 2000


def test_a_tool_answers_with_the_call_id_its_context_carries(store_url: str) -> None:
    """``ctx.call_id`` is the provider's id of the call, in run (any effect class) and in
    verify, so a tool returns ``ToolResult(ctx.call_id, ..., audit=...)`` as it is."""
    from callgate.ledger import Applied

    seen: list[tuple[str, str]] = []

    def run(args: Any, ctx: ToolContext) -> Any:
        seen.append(("run", ctx.call_id))
        return ToolResult(ctx.call_id, "done", audit={"raw_id": 7})

    def verify(args: Any, ctx: ToolContext) -> Any:
        seen.append(("verify", ctx.call_id))
        return Applied("done")

    tools = [
        Tool("plain", run),
        Tool("local", run, effect=EffectClass.LOCAL_TX),
        Tool("verif", run, effect=EffectClass.VERIFIABLE, verify=verify),
    ]
    with open_ledger(store_url, tools=tools) as ledger:
        req = ledger.record_request("ids", provider="test", request_digest="d")
        ledger.mark_sent(req.request_id)
        ledger.identify(req.request_id, "turn-ids")
        calls = [CallInput("c-plain", "plain", {}), CallInput("c-local", "local", {})]
        calls.append(CallInput("c-verif", "verif", {}))
        plain, local, verif = ledger.record_turn(
            req.request_id, TurnInput("test", "turn-ids", "digest-ids", {}, calls)
        )
        ledger.execute(plain.effect_id, worker_id="w")
        ledger.execute(local.effect_id, worker_id="w")
        ledger.claim(verif.effect_id, worker_id="dead")
        with ledger.transaction() as tx:
            tx.run("UPDATE ledger_effects SET lease_until = 0")
        ledger.recover("rescuer")
        assert ledger.verify(verif.effect_id).state is EffectState.COMMITTED
        assert seen == [("run", "c-plain"), ("run", "c-local"), ("verify", "c-verif")]
        results = ledger.results("ids", 1) or ()
        assert [(r.call_id, r.audit) for r in results[:2]] == [
            ("c-plain", {"raw_id": 7}),
            ("c-local", {"raw_id": 7}),
        ]
