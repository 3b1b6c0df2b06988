"""pytest plugin overhead, measured as a user would see it: 100 generated tests, each a
two-request tool loop through ``callgate_server.openai_client()``, against the same
requests in a plain loop on one warm server, in the same invocation.

Every mode runs in a subprocess of its own, on the same generated files:

- ``plain``: a plain Python loop, no pytest: one ``MockServer`` started before the loop,
  one ``openai.OpenAI`` client, a fresh test id per iteration; the loop is timed.
- ``pytest``: pytest without the plugin's fixtures: the same module-level server and client,
  one generated test per iteration (what pytest itself costs per test);
- ``plugin``: each test takes ``callgate_server`` (a session registered on the plugin's one
  server, the end-of-test check) and asks it for ``openai_client()``;
- ``before`` (with ``--before SRC``): ``plugin`` with another callgate source tree first on
  the path (``git archive <commit> src | tar -x -C /tmp/before``).

The pytest modes are timed by a conftest around ``pytest_runtestloop`` (every test's setup,
call and teardown: the plugin's lazy server start and its session teardown count against
it). Rounds alternate the modes; the medians and the fastest rounds are reported, with
the overhead per test against ``plain`` and the ratio.

Run: PYTHONPATH=src python bench/plugin_overhead.py [--tests 100] [--rounds 5] [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = {
    "seed": 1,
    "turns": [
        {
            "protocol": "openai_responses",
            "expect": {"tools": ["get_weather"], "previous_id": "absent"},
            "respond": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        },
        {
            "protocol": "openai_responses",
            "expect": {
                "previous_id": "previous",
                "function_results": [{"name": "get_weather", "output": "sunny"}],
            },
            "respond": {"text": "It is sunny in Paris."},
        },
    ],
}

LOOP = """
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"},
          "strict": False}]


def loop(client, headers=None):
    first = client.responses.create(model="m", input="Weather in Paris?", tools=TOOLS,
                                    extra_headers=headers)
    call = first.output[0]
    output = [{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}]
    second = client.responses.create(model="m", input=output, previous_response_id=first.id,
                                     extra_headers=headers)
    assert second.output_text == "It is sunny in Paris."
"""

WARM = """
import json

import openai

from callgate.mock import MockServer, Script

SERVER = MockServer(Script.from_dict(json.loads({script!r}))).start()  # warm before the loop
CLIENT = openai.OpenAI(base_url=SERVER.openai_base_url, api_key="k", max_retries=0)
"""

PLAIN = """
import os
import time

from _loop import loop
from _warm import CLIENT

started = time.perf_counter()
for n in range({tests}):
    loop(CLIENT, {{"x-callgate-test-id": f"test-{{n}}"}})
with open(os.environ["CALLGATE_BENCH_OUT"], "w") as out:
    out.write(str(time.perf_counter() - started))
"""

PYTEST_TESTS = """
import pytest

from _loop import loop
from _warm import CLIENT


@pytest.mark.parametrize("n", range({tests}))
def test_loop(n):
    loop(CLIENT, {{"x-callgate-test-id": f"test-{{n}}"}})
"""

PLUGIN_TESTS = """
import json

import pytest

from _loop import loop

SCRIPT = json.loads({script!r})


@pytest.fixture
def callgate_script():
    return SCRIPT


@pytest.mark.parametrize("n", range({tests}))
def test_loop(callgate_server, n):
    loop(callgate_server.openai_client())
"""

CONFTEST = """
import os
import time

import openai
import pytest

import callgate.mock  # imported by every run before the loop (the plugin imports it lazily)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        with open(os.environ["CALLGATE_BENCH_OUT"], "w") as out:
            out.write(str(time.perf_counter() - started))
"""


def _write_suite(root: Path, tests: int) -> None:
    script = json.dumps(SCRIPT)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "_loop.py").write_text(LOOP)
    (root / "_warm.py").write_text(WARM.format(script=script))
    (root / "plain.py").write_text(PLAIN.format(tests=tests))
    (root / "test_pytest.py").write_text(PYTEST_TESTS.format(tests=tests))
    (root / "test_plugin.py").write_text(PLUGIN_TESTS.format(script=script, tests=tests))


def _run(root: Path, mode: str, before: str | None) -> float:
    """Seconds the loop of one run took (the run must pass)."""
    out = root / f"{mode}.time"
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"]
    args = {
        "plain": [sys.executable, "plain.py"],
        "pytest": [*pytest, "test_pytest.py"],
        "plugin": [*pytest, "test_plugin.py"],
        "before": [*pytest, "test_plugin.py"],
    }[mode]
    src = before if mode == "before" else None
    env = {**os.environ, "CALLGATE_BENCH_OUT": str(out), "PYTHONPATH": _pythonpath(root, src)}
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{done.stdout}\n{done.stderr}")
    return float(out.read_text())


def _pythonpath(root: Path, src: str | None) -> str:
    src = src or str(Path(__file__).resolve().parents[1] / "src")
    return os.pathsep.join([src, str(root), os.environ.get("PYTHONPATH", "")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="another callgate src tree, run as mode 'before'")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"plain": [], "pytest": [], "plugin": []}
    if args.before:
        times["before"] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_suite(root, args.tests)
        for _ in range(args.rounds):
            for mode in times:
                times[mode].append(_run(root, mode, args.before))
    print(
        f"{args.tests} tests of a two-request loop, median of {args.rounds} alternated rounds "
        f"(every round, ms/test: {_rounds(times, args.tests)})"
    )
    # The fastest round as well: on a shared machine the other processes only ever add.
    for name, pick in (("median", statistics.median), ("fastest", min)):
        base = pick(times["plain"])
        print(f"{name:<8} {'loop s':>8} {'ms/test':>8} {'ratio':>7} {'overhead ms/test':>17}")
        for mode, runs in times.items():
            value = pick(runs)
            per_test = value / args.tests * 1000
            overhead = (value - base) / args.tests * 1000
            print(
                f"{mode:<8} {value:>8.3f} {per_test:>8.2f} {value / base:>6.2f}x {overhead:>17.2f}"
            )


def _rounds(times: dict[str, list[float]], tests: int) -> str:
    return "; ".join(
        f"{mode} " + " ".join(f"{t / tests * 1000:.1f}" for t in runs)
        for mode, runs in times.items()
    )


if __name__ == "__main__":
    main()
