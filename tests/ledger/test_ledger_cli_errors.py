"""``callgate ledger`` as a monitoring script sees it, in a real process: every database or
usage error is exit 2 with one line on stderr naming the database (password masked) and
the cause, never a traceback; read-only commands create nothing; 1 still means "effects
pending" and 0 "nothing pending"."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from callgate.cli._ledger import add_ledger_parser
from callgate.ledger import EffectClass, Tool, open_ledger

from .ledger_harness import PG_URL, record, require_postgres


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callgate.cli", "ledger", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _one_error_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The process exited 2 with exactly one line on stderr holding every needle."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.endswith("\n")
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)
    return done.stderr


@pytest.fixture
def ledger_url(tmp_path: Path) -> str:
    """A ledger with one effect awaiting approval."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    tools = [Tool("pay", lambda a, c: "ok", requires_approval=True)]
    with open_ledger(url, tools=tools) as ledger:
        record(ledger, "run-1", [("c1", "pay", {"n": 1})])
    return url


def test_pending_exit_codes_stay_1_for_waiting_and_0_for_nothing(
    ledger_url: str, tmp_path: Path
) -> None:
    listed = _cli("pending", "--db", ledger_url, cwd=tmp_path)
    assert listed.returncode == 1, listed.stderr
    assert "awaiting_approval" in listed.stdout
    assert listed.stderr == ""
    quiet = _cli("pending", "--db", ledger_url, "--scope", "other-tenant", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "nothing pending\n", "")


@pytest.mark.parametrize("command", [["pending"], ["show", "0123456789ab"], ["recover"]])
def test_a_missing_file_is_exit_2_and_is_not_created(command: list[str], tmp_path: Path) -> None:
    done = _cli(*command, "--db", "sqlite:///typo.db", cwd=tmp_path)  # relative to cwd
    _one_error_line(done, "sqlite:///typo.db", "no such file 'typo.db'")
    assert list(tmp_path.iterdir()) == []


def test_approve_and_deny_on_a_missing_file_create_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gone.db'}"
    for args in (["approve", "--actor", "ops"], ["deny", "--actor", "ops", "--reason", "no"]):
        _one_error_line(_cli(*args, "--db", url, "0123456789ab", cwd=tmp_path), url)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}"
    _one_error_line(_cli("pending", "--db", url, cwd=tmp_path), url, "is a directory")


def test_a_file_that_is_not_a_database_is_exit_2_and_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 100, encoding="utf-8")
    done = _cli("pending", "--db", f"sqlite:///{path}", cwd=tmp_path)
    _one_error_line(done, f"sqlite:///{path}", "is not a SQLite database")
    assert path.read_text(encoding="utf-8") == "not a database\n" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_an_unreadable_ledger_is_exit_2(ledger_url: str, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from opening the file")
    path = Path(ledger_url[len("sqlite:///") :])
    path.chmod(0)
    try:
        done = _cli("pending", "--db", ledger_url, cwd=tmp_path)
    finally:
        path.chmod(0o600)
    _one_error_line(done, ledger_url, "permission denied")


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: bound by us, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_refused_postgresql_connection_is_exit_2_with_the_password_masked(
    tmp_path: Path,
) -> None:
    pytest.importorskip("psycopg")
    port = _closed_port()
    done = _cli("pending", "--db", f"postgresql://ops:s3cret@127.0.0.1:{port}/app", cwd=tmp_path)
    line = _one_error_line(done, f"postgresql://ops:***@127.0.0.1:{port}/app", "refused")
    assert "s3cret" not in line


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("mysql://ops:s3cret@host/db", "unsupported ledger URL"),
        ("sqlite://", "malformed SQLite ledger URL"),
        ("sqlite:///", "malformed SQLite ledger URL"),
        ("ledger.db", "unsupported ledger URL"),
        ("postgresql://ops:s3cret@[::1/db", "malformed ledger URL"),
        ("postgresql://ops:s3cret@127.0.0.1:notaport/db", "notaport"),
    ],
)
def test_a_bad_url_is_exit_2_with_the_password_masked(url: str, cause: str, tmp_path: Path) -> None:
    if url.startswith("postgresql"):
        pytest.importorskip("psycopg")
    line = _one_error_line(_cli("pending", "--db", url, cwd=tmp_path), cause)
    assert "s3cret" not in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["pending"], "required: --db"),
        (["deny", "--db", "sqlite:///l.db", "0123456789ab", "--actor", "ops"], "--reason"),
        (["resolve", "--db", "sqlite:///l.db", "0123456789ab"], "--action"),
        (["frobnicate"], "invalid choice"),
        ([], "required: COMMAND"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    _one_error_line(_cli(*args, cwd=tmp_path), needle, "--help")
    assert list(tmp_path.iterdir()) == []


def test_a_bad_state_is_exit_2_naming_the_states(ledger_url: str, tmp_path: Path) -> None:
    done = _cli("pending", "--db", ledger_url, "--state", "stuck", cwd=tmp_path)
    _one_error_line(done, "'stuck' is not an effect state", "needs_operator")


def test_a_ledger_newer_than_this_callgate_is_exit_2(ledger_url: str, tmp_path: Path) -> None:
    with open_ledger(ledger_url) as ledger, ledger.transaction() as tx:
        tx.run("UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'")
    done = _cli("pending", "--db", ledger_url, cwd=tmp_path)
    _one_error_line(done, ledger_url, "schema version 99, newer than")


def test_a_sqlite_ledger_refuses_schema(ledger_url: str, tmp_path: Path) -> None:
    done = _cli("pending", "--db", ledger_url, "--schema", "app1", cwd=tmp_path)
    _one_error_line(done, ledger_url, "PostgreSQL option")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_ledger_command_and_option_has_one_plain_line_of_help() -> None:
    root = argparse.ArgumentParser(prog="callgate")
    add_ledger_parser(root.add_subparsers())
    ledger = _subparsers(root)["ledger"]
    commands = _subparsers(ledger)
    assert sorted(commands) == ["approve", "deny", "pending", "recover", "resolve", "show"]
    listed = ledger.format_help()
    for name, command in commands.items():
        assert name in listed
        assert command.description
        assert "\n" not in command.description
        for action in command._actions:
            text = action.help or ""
            assert text, (name, action.dest)
            assert "\n" not in text
            assert not any(mark in text for mark in ("``", ":class:", ":func:", "`")), text
    required = {
        name: sorted(
            a.option_strings[0] for a in command._actions if a.required and a.option_strings
        )
        for name, command in commands.items()
    }
    assert required["approve"] == ["--actor", "--db"]
    assert required["deny"] == ["--actor", "--db", "--reason"]


# -- PostgreSQL: --schema ----------------------------------------------------------------


@pytest.fixture
def pg_app_schema() -> Iterator[str]:
    require_postgres()
    import psycopg

    name = f"cg_cli_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_schema_selects_the_application_ledger(pg_app_schema: str, tmp_path: Path) -> None:
    tools = [Tool("pay", lambda a, c: "ok", effect=EffectClass.READ, requires_approval=True)]
    with open_ledger(PG_URL, schema=pg_app_schema, tools=tools) as ledger:
        record(ledger, "run-1", [("c1", "pay", {})])
    done = _cli("pending", "--db", PG_URL, "--schema", pg_app_schema, "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert '"awaiting_approval"' in done.stdout


def test_a_missing_schema_is_exit_2_and_is_not_created(pg_app_schema: str, tmp_path: Path) -> None:
    import psycopg

    done = _cli("pending", "--db", PG_URL, "--schema", pg_app_schema, cwd=tmp_path)
    _one_error_line(done, f"no schema '{pg_app_schema}'")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (pg_app_schema,))
        assert found.fetchone() is None
