"""The plugin's one server per pytest session: each test a registered session of its own.

Like ``test_mock_plugin``, each test writes a user's suite and runs pytest on it
(``pytester``), then checks what pytest reported.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import callgate

from .test_mock_plugin import _plugin_args, _write_weather, run

pytest_plugins = ["pytester"]

SHARED_SUITE = """
import json

import httpx
import openai
import pytest

SEEN = []
STORED = []


@pytest.mark.callgate_script("scripts/weather.json")
@pytest.mark.parametrize("n", [0, 1, 2])
def test_loop(callgate_server, request, n):
    assert len(callgate_server.journal) == 0  # nothing from the tests before
    assert callgate_server.test_id == request.node.nodeid
    SEEN.append((callgate_server.url, callgate_server.test_id))
    assert ask(callgate_server.openai_client(), n == 1) == "It is sunny in Paris."
    assert {e.test_id for e in callgate_server.journal} == {request.node.nodeid}
    assert callgate_server.status()["done"] is True


@pytest.mark.callgate_script("scripts/weather.json")
def test_a_client_without_the_header_reaches_the_running_test(callgate_server):
    client = openai.OpenAI(base_url=callgate_server.openai_base_url, api_key="k",
                           max_retries=0, _strict_response_validation=True)
    assert ask(client, False) == "It is sunny in Paris."
    client.close()
    assert [e.test_id for e in callgate_server.journal] == [callgate_server.test_id] * 2
    SEEN.append((callgate_server.url, callgate_server.test_id))
    first = callgate_server.journal.entries()[0]
    STORED.append((callgate_server.test_id, first.response["id"]))


@pytest.mark.callgate_script("scripts/weather.json")
@pytest.mark.callgate_unchecked
@pytest.mark.callgate_verdicts(allow=["native_validation_failed"])  # refused on purpose
def test_nothing_crosses_from_an_earlier_test(callgate_server):
    (earlier_test, response_id), = STORED
    client = callgate_server.openai_client()
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="gpt-test", input="x", tools=TOOLS,
                                previous_response_id=response_id)
    assert refused.value.code == "previous_response_not_found"
    # A late request of the earlier test (its id) does not count against this one.
    late = callgate_server.openai_client(default_headers={"x-callgate-test-id": earlier_test})
    with pytest.raises(openai.BadRequestError):
        late.responses.create(model="gpt-test", input="x")
    assert callgate_server.problems() == [
        "2 turn(s) of conversation 'default' never requested "
        f"(test id {callgate_server.test_id!r})"
    ]
    # A runtime fault armed here is dropped with this test's session.
    armed = httpx.post(f"{callgate_server.url}/_callgate/faults",
                       headers=callgate_server.headers(),
                       json={"fault": {"type": "http_error", "status": 503}, "times": 5})
    assert armed.status_code == 200
    SEEN.append((callgate_server.url, callgate_server.test_id))


@pytest.mark.callgate_script("scripts/weather.json")
def test_after_a_fault_was_left_armed(callgate_server):
    assert ask(callgate_server.openai_client(), True) == "It is sunny in Paris."
    SEEN.append((callgate_server.url, callgate_server.test_id))
    urls = {url for url, _ in SEEN}
    assert len(urls) == 1  # one server for the whole session
    assert len({test_id for _, test_id in SEEN}) == len(SEEN) == 6
"""


def test_one_server_serves_every_test_each_in_a_session_of_its_own(
    pytester: pytest.Pytester,
) -> None:
    _write_weather(pytester, SHARED_SUITE)
    run(pytester).assert_outcomes(passed=6)


OWN_SERVER_SUITE = """
import pytest

URLS = []

pytestmark = pytest.mark.callgate_script("scripts/weather.json")


def test_shared(callgate_server):
    URLS.append(callgate_server.url)
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."


@pytest.mark.callgate_own_server
def test_own(callgate_server):
    URLS.append(callgate_server.url)
    assert callgate_server.test_id == "default"
    assert callgate_server.headers() == {}
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."
    assert [e.test_id for e in callgate_server.journal] == ["default", "default"]


def test_shared_again(callgate_server):
    URLS.append(callgate_server.url)
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."
    shared, own, again = URLS
    assert shared == again != own
"""


def test_own_server_marker_gives_one_test_a_server_of_its_own(pytester: pytest.Pytester) -> None:
    _write_weather(pytester, OWN_SERVER_SUITE)
    run(pytester).assert_outcomes(passed=3)


PER_TEST_SUITE = """
import pytest

URLS = []

pytestmark = pytest.mark.callgate_script("scripts/weather.json")


@pytest.mark.parametrize("n", [0, 1])
def test_loop(callgate_server, n):
    URLS.append(callgate_server.url)
    assert callgate_server.test_id == "default"
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."
    if n == 1:
        assert URLS[0] != URLS[1]
"""


def test_ini_option_gives_every_test_a_server_of_its_own(pytester: pytest.Pytester) -> None:
    _write_weather(pytester, PER_TEST_SUITE)
    pytester.makeini("[pytest]\ncallgate_server_per_test = true\n")
    run(pytester, "--strict-config").assert_outcomes(passed=2)


STRAY_SUITE = """
import openai
import pytest


@pytest.mark.callgate_script("scripts/weather.json")
def test_stray_id(callgate_server):
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."
    stray = callgate_server.openai_client(default_headers={"x-callgate-test-id": "mine"})
    with pytest.raises(openai.BadRequestError):
        stray.responses.create(model="gpt-test", input="x")
"""


def test_a_test_id_no_session_has_is_named_with_the_fix(pytester: pytest.Pytester) -> None:
    _write_weather(pytester, STRAY_SUITE)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mismatch (test id 'mine', conversation 'default', openai_responses): *",
            "*requests with test id 'mine' reached no session of this test: send the headers "
            "of callgate_server.headers(test_id='mine')*",
        ]
    )


XDIST_SUITE = """
import os

import pytest

pytestmark = pytest.mark.callgate_script("scripts/weather.json")


@pytest.mark.parametrize("n", range(8))
def test_loop(callgate_server, n):
    assert ask(callgate_server.openai_client(), False) == "It is sunny in Paris."
    worker = os.environ["PYTEST_XDIST_WORKER"]
    with open(f"seen-{worker}-{n}.txt", "w") as out:
        out.write(callgate_server.url)
"""


def test_each_xdist_worker_runs_one_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    # The workers import the callgate this test imported (PYTHONPATH may be relative).
    here = str(Path(callgate.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    _write_weather(pytester, XDIST_SUITE)
    result = pytester.runpytest_subprocess(*_plugin_args(), "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)
    seen: dict[str, set[str]] = {}
    for path in pytester.path.glob("seen-*.txt"):
        seen.setdefault(path.name.split("-")[1], set()).add(path.read_text())
    assert sorted(seen) == ["gw0", "gw1"]
    assert all(len(urls) == 1 for urls in seen.values()), seen  # one server per worker
    assert len(set.union(*seen.values())) == 2
