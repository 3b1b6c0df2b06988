"""``callgate ledger ...``: readable output and exit codes scripts can rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgate.cli import main
from callgate.ledger import EffectClass, Tool, open_ledger

from .ledger_harness import record


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    tools = [
        Tool("refund", lambda a, c: "ok"),
        Tool("pay", lambda a, c: "ok", effect=EffectClass.AT_MOST_ONCE, requires_approval=True),
    ]
    with open_ledger(url, tools=tools) as ledger:
        refund, _ = record(ledger, "run-1", [("c1", "refund", {"n": 1}), ("c2", "pay", {})])
        ledger.claim(refund.effect_id, worker_id="dead-worker")
        with ledger.transaction() as tx:
            tx.run("UPDATE ledger_effects SET lease_until = 0")
    return url


def _json(capsys: pytest.CaptureFixture[str]) -> object:
    return json.loads(capsys.readouterr().out)


def test_cli_recover_pending_show_resolve_approve(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ledger", "recover", "--db", db, "--json"]) == 0
    report = _json(capsys)
    assert isinstance(report, dict)
    assert len(report["escalated"]) == 1
    assert main(["ledger", "pending", "--db", db]) == 1
    listing = capsys.readouterr().out
    assert "needs_operator" in listing
    assert "awaiting_approval" in listing
    assert main(["ledger", "pending", "--db", db, "--json", "--state", "needs_operator"]) == 1
    (stuck,) = _json(capsys)  # type: ignore[misc]
    short = stuck["effect_id"][:10]
    assert main(["ledger", "show", "--db", db, short]) == 0
    assert "executing -> unknown" in capsys.readouterr().out
    args = [
        "ledger",
        "resolve",
        "--db",
        db,
        short,
        "--action",
        "commit",
        "--result",
        '{"refund": "done"}',
        "--decision-id",
        "d-1",
        "--reason",
        "checked the bank",
        "--actor",
        "ops",
    ]
    assert main([*args, "--expected-version", str(stuck["version"] - 1)]) == 3
    assert main([*args, "--expected-version", str(stuck["version"])]) == 0
    assert "committed" in capsys.readouterr().out
    assert main(["ledger", "pending", "--db", db, "--json"]) == 1
    (gated,) = _json(capsys)  # type: ignore[misc]
    assert main(["ledger", "approve", "--db", db, gated["effect_id"], "--actor", "ops"]) == 0
    assert main(["ledger", "approve", "--db", db, gated["effect_id"], "--actor", "ops"]) == 3
    capsys.readouterr()
    assert main(["ledger", "pending", "--db", db]) == 0
    assert "nothing pending" in capsys.readouterr().out


def test_cli_deny_and_missing_effects(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "pending", "--db", db, "--json", "--state", "awaiting_approval"]) == 1
    (gated,) = _json(capsys)  # type: ignore[misc]
    assert (
        main(
            [
                "ledger",
                "deny",
                "--db",
                db,
                gated["effect_id"],
                "--actor",
                "ops",
                "--reason",
                "too much",
            ]
        )
        == 0
    )
    assert "rejected" in capsys.readouterr().out
    assert main(["ledger", "show", "--db", db, "0123456789abcdef"]) == 4
    assert main(["ledger", "show", "--db", db, "abc"]) == 4
    assert main(["ledger", "pending", "--db", "mysql://nope"]) == 2
