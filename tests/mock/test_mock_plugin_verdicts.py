"""The plugin's verdict check, from a user's test file (through ``pytester``): an ``error``
verdict fails the test with its evidence; the marker and the ini option set the level."""

from __future__ import annotations

import httpx  # noqa: F401 - loaded once here, not in every pytester run
import pytest

from .test_mock_plugin import run

pytest_plugins = ["pytester"]

# A user's test whose client executes a call of a turn the stream cut (an error verdict),
# or retries a 500 five times in a row (a retry_storm warning), over plain httpx.
USER = """
import httpx
import pytest

from callgate.mock import ScriptBuilder

CUT = {"type": "disconnect", "before_terminal": True}
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def body(messages):
    return {"model": "m", "max_tokens": 64, "messages": messages}


ASK = [{"role": "user", "content": "Weather?"}]
USE = {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}


@pytest.fixture
def callgate_script(request):
    builder = ScriptBuilder()
    if request.node.get_closest_marker("warn") is not None:  # five 500s, then the answer
        fault = {"type": "http_error", "status": 500, "times": 5}
        return builder.turn("anthropic_messages", text="ok", fault=fault)
    call = {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}
    builder.turn("anthropic_messages", calls=[call], fault=CUT)
    return builder.turn("anthropic_messages", text="ok")


def run_client(server, *, careful=False):
    url = server.anthropic_base_url + "/v1/messages"
    if careful:  # a correct client: the cut turn is asked again, nothing executed
        httpx.post(url, json={**body(ASK), "stream": True}, headers=HEADERS)
        return
    httpx.post(url, json={**body(ASK), "stream": True}, headers=HEADERS)
    history = ASK + [{"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}]
    assert httpx.post(url, json=body(history), headers=HEADERS).status_code == 200


def retry_at_once(server):
    url = server.anthropic_base_url + "/v1/messages"
    codes = [httpx.post(url, json=body(ASK), headers=HEADERS).status_code for _ in range(6)]
    assert codes == [500] * 5 + [200]


{tests}
"""


def _write(pytester: pytest.Pytester, tests: str, ini: str = "") -> None:
    pytester.makeini("[pytest]\nmarkers =\n    warn: a warning scenario\n" + ini)
    pytester.makepyfile(test_user=USER.replace("{tests}", tests))


def test_an_error_verdict_fails_the_test_with_its_rule_and_evidence(
    pytester: pytest.Pytester,
) -> None:
    _write(pytester, "def test_agent(callgate_server):\n    run_client(callgate_server)\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*callgate verdicts on what the client did*",
            "*error executed_unreleased_call (request #*",
            "*a result answers call c1 of turn msg_*, which the gate does not release*",
            "*rule: a tool result answers a call of a turn the gate would not release*",
            "*source: docs/gate.md*",
            '*fault: {"before_terminal": true, "type": "disconnect"}*',
        ]
    )


def test_a_correct_client_passes(pytester: pytest.Pytester) -> None:
    tests = (
        "def test_agent(callgate_server):\n"
        "    run_client(callgate_server, careful=True)\n"
        "    run_client(callgate_server, careful=True)\n"
    )
    _write(pytester, tests)
    run(pytester).assert_outcomes(passed=1)


def test_the_marker_allows_a_verdict_or_turns_the_check_off(pytester: pytest.Pytester) -> None:
    tests = (
        "@pytest.mark.callgate_verdicts(allow=['executed_unreleased_call'])\n"
        "def test_allowed(callgate_server):\n    run_client(callgate_server)\n\n"
        "@pytest.mark.callgate_verdicts('off')\n"
        "def test_off(callgate_server):\n    run_client(callgate_server)\n\n"
        "@pytest.mark.callgate_verdicts(allow=['retry_after_ignored'])\n"
        "def test_other_allowed(callgate_server):\n    run_client(callgate_server)\n"
    )
    _write(pytester, tests)
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_user.py::test_other_allowed - *"])


def test_warnings_pass_by_default_and_fail_at_the_warning_level(pytester: pytest.Pytester) -> None:
    tests = (
        "@pytest.mark.warn\n"
        "def test_default(callgate_server):\n    retry_at_once(callgate_server)\n\n"
        "@pytest.mark.warn\n@pytest.mark.callgate_verdicts('warning')\n"
        "def test_strict(callgate_server):\n    retry_at_once(callgate_server)\n"
    )
    _write(pytester, tests)
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*warning retry_storm (request #*"])


@pytest.mark.parametrize(("level", "outcome"), [("off", "passed"), ("warning", "failed")])
def test_the_ini_option_sets_the_level(pytester: pytest.Pytester, level: str, outcome: str) -> None:
    _write(pytester, "def test_agent(callgate_server):\n    run_client(callgate_server)\n",
           ini=f"callgate_verdicts = {level}\n")  # fmt: skip
    run(pytester).assert_outcomes(**{outcome: 1})


def test_an_unknown_level_is_a_usage_error(pytester: pytest.Pytester) -> None:
    tests = (
        "@pytest.mark.warn\n@pytest.mark.callgate_verdicts('loud')\n"
        "def test_agent(callgate_server):\n    retry_at_once(callgate_server)\n"
    )
    _write(pytester, tests)
    result = run(pytester)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*level must be one of error, warning, off, got 'loud'*"])
