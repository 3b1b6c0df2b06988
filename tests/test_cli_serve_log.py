"""``callgate serve`` as a user runs it: a real process, the official openai SDK, a signal.

Each request is one line on stderr (time, method, path, test id, status, the turn it
matched or why it did not); SIGINT or SIGTERM stops the server with a summary per
session; ``--require-done`` turns a session not done into exit code 1.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from callgate.cli import main, parser
from callgate.cli._serve import EXIT_NOT_DONE, request_line
from callgate.mock import Journal

SCRIPT = {
    "turns": [
        {
            "protocol": "openai_responses",
            "expect": {"last_user_text_contains": "ping"},
            "respond": {"text": "pong"},
        },
        {
            "protocol": "openai_responses",
            "expect": {"last_user_text_contains": "second"},
            "respond": {"text": "two"},
        },
    ]
}
CLOCK = r"\d\d:\d\d:\d\d\.\d\d\d"


class Served:
    """A running ``callgate serve`` process and its root URL."""

    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc = proc
        self.url = url

    def client(self, **headers: str) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=f"{self.url}/openai/v1", api_key="k", max_retries=0, default_headers=headers
        )

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Send ``signum``; the exit code and everything written on stderr."""
        self.proc.send_signal(signum)
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(*options: str, script: object = SCRIPT) -> Served:
        argv = [sys.executable, "-m", "callgate.cli", "serve", *options]
        if script is not None:
            path = tmp_path / "script.json"
            path.write_text(json.dumps(script))
            argv += ["--script", str(path)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout is not None
        url = proc.stdout.readline().rsplit(" ", 1)[-1].strip()  # printed once listening
        assert url.startswith("http://127.0.0.1:"), url
        return Served(proc, url)

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def _one_match_one_mismatch(served: Served) -> None:
    with served.client() as client:
        assert client.responses.create(model="m", input="ping").output_text == "pong"
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="m", input="something else")
    assert "does not match the script" in str(refused.value)


def test_each_request_is_one_line_and_sigint_prints_the_summary(serve: object) -> None:
    served = serve()  # type: ignore[operator]
    _one_match_one_mismatch(served)
    code, err = served.stop(signal.SIGINT)
    assert code == 0  # no --require-done: stopping is success
    lines = err.splitlines()
    assert re.fullmatch(
        CLOCK + r" POST /openai/v1/responses test=default 200 matched /turns/0", lines[0]
    ), lines[0]
    assert re.fullmatch(
        CLOCK + r" POST /openai/v1/responses test=default 400 mismatch at /turns/1: .*second.*",
        lines[1],
    ), lines[1]
    assert lines[2:] == [
        "callgate serve stopped. Sessions:",
        "  test id 'default': served 1, left 1, mismatches 1 (NOT done)",
        "    conversation 'default': served 1, left 1",
        "1 of 1 session(s) not done",
    ]


def test_require_done_exits_1_on_sigterm_when_a_turn_is_left(serve: object) -> None:
    served = serve("--require-done")  # type: ignore[operator]
    _one_match_one_mismatch(served)
    code, err = served.stop(signal.SIGTERM)
    assert code == EXIT_NOT_DONE == 1
    assert err.endswith("1 of 1 session(s) not done\n")


def test_require_done_exits_0_when_every_turn_was_served(serve: object) -> None:
    served = serve("--require-done", "--quiet")  # type: ignore[operator]
    with served.client() as client:
        assert client.responses.create(model="m", input="ping").output_text == "pong"
        assert client.responses.create(model="m", input="second").output_text == "two"
    code, err = served.stop(signal.SIGINT)
    assert code == 0
    assert err.splitlines() == [  # --quiet: the summary only
        "callgate serve stopped. Sessions:",
        "  test id 'default': served 2, left 0, mismatches 0 (done)",
        "every session done",
    ]


def test_sessions_registered_over_http_are_logged_and_summarised(serve: object) -> None:
    # A suite in another language: a session per test, no script of the server's own.
    served = serve("--require-done", script=None)  # type: ignore[operator]
    sessions = f"{served.url}/_callgate/sessions"
    for test_id in ("t-done", "t-left"):
        assert httpx.post(f"{sessions}/{test_id}", json=SCRIPT).status_code == 201
    for test_id in ("t-done", "t-left"):
        with served.client(**{"x-callgate-test-id": test_id}) as client:
            client.responses.create(model="m", input="ping")
            if test_id == "t-done":
                client.responses.create(model="m", input="second")
    assert httpx.delete(f"{sessions}/t-done").json()["done"] is True
    assert httpx.delete(f"{sessions}/t-left").json()["left"] == 1
    code, err = served.stop(signal.SIGINT)
    assert code == 1
    lines = err.splitlines()
    assert re.fullmatch(
        CLOCK + r" session registered: test id 't-done': served 0, left 2, mismatches 0 "
        r"\(NOT done\)",
        lines[0],
    ), lines[0]
    assert [line.split(" ", 1)[1] for line in lines[2:5]] == [
        "POST /openai/v1/responses test=t-done 200 matched /turns/0",
        "POST /openai/v1/responses test=t-done 200 matched /turns/1",
        "POST /openai/v1/responses test=t-left 200 matched /turns/0",
    ]
    assert lines[5].endswith(
        " session dropped: test id 't-done': served 2, left 0, mismatches 0 (done)"
    )
    assert lines[7:] == [
        "callgate serve stopped. Sessions:",
        "  test id 'default': served 0, left 0, mismatches 0 (done)",
        "  test id 't-left': served 1, left 1, mismatches 0 (NOT done), dropped during the run",
        "    conversation 'default': served 1, left 1",
        "  1 dropped session(s) were done",
        "1 of 3 session(s) not done",
    ]


def test_a_refusal_line_carries_the_provider_error_message() -> None:
    journal = Journal()
    entry = journal.begin(
        test_id="t1", conversation="billing", protocol="openai_responses", method="POST",
        path="/openai/v1/responses", query="api-version=1", headers={}, body=None,
    )  # fmt: skip
    entry.close(401, {"error": {"message": "Missing bearer\n  token"}}, "rejected")
    line = request_line(entry)
    assert line.split(" ", 1)[1] == (
        "POST /openai/v1/responses?api-version=1 test=t1 conversation=billing 401 rejected: "
        "Missing bearer token"
    )


def test_help_lists_every_command_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    listed = re.findall(r"^    (\w+)\s{2,}\S", out, flags=re.MULTILINE)
    assert listed == ["demo", "serve", "check", "script", "ledger", "record", "drift"]
    assert "``" not in out


def _commands(
    parser: argparse.ArgumentParser, path: str = "callgate"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, f"{path} {name}")


def test_every_command_and_option_has_a_one_line_plain_help() -> None:
    missing, marked = [], []
    for path, command in _commands(parser()):
        if path.startswith("callgate ledger "):
            continue  # the ledger's own options are documented with the ledger
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:  # each subcommand's one line
                    if choice.help is None:
                        missing.append(f"{path} {choice.dest}")
                continue
            text = action.help
            if text is None:
                missing.append(f"{path} {action.option_strings or action.dest}")
            elif "``" in text or ":" in text.split(" ", 1)[0] or "\n" in text:
                marked.append(f"{path}: {text}")
    assert missing == []
    assert marked == []


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"callgate {version('callgate')}\n"


# -- verdicts (docs/verdicts.md) ---------------------------------------------------------

VERDICT_SCRIPT = {
    "turns": [
        {
            "protocol": "anthropic_messages",
            "respond": {"text": "ok", "fault": {"type": "http_error", "status": 400}},
        }
    ]
}
VERDICT_BODY = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
VERDICT_HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def test_a_verdict_is_printed_as_it_happens_and_in_the_summary(serve: object) -> None:
    served = serve("--quiet", script=VERDICT_SCRIPT)  # type: ignore[operator]
    url = f"{served.url}/anthropic/v1/messages"
    assert httpx.post(url, json=VERDICT_BODY, headers=VERDICT_HEADERS).status_code == 400
    again = httpx.post(url, json=VERDICT_BODY, headers=VERDICT_HEADERS)  # retried anyway
    assert again.status_code == 200
    code, err = served.stop(signal.SIGINT)
    assert code == 0
    lines = err.splitlines()
    assert re.fullmatch(
        CLOCK + r" VERDICT error retried_non_retryable test=default request=#1: "
        r"the request answered 400 \(#0\) was sent again",
        lines[0],
    ), lines[0]
    assert lines[1:] == [
        "callgate serve stopped. Sessions:",
        "  test id 'default': served 1, left 0, mismatches 0 (done)",
        "verdicts: 1 error(s), 0 warning(s): retried_non_retryable x1",
        "every session done",
    ]
