"""pytest plugin overhead: 200 tests of a two-turn tool loop through ``callgate_server``
against the same requests on one warm server, in the same invocation.

Each run is ``pytest`` in a subprocess on a generated test file; a conftest times the test
loop (``pytest_runtestloop``: every test's setup, call and teardown, so the plugin's lazy
server start and its session teardown count against it, while the baseline's server is
started at import, warm). The same requests in both: a module-level ``httpx.Client`` posts
the first turn (a tool call) and its ``function_call_output`` continuation; the baseline
gives each test a fresh unregistered test id on its warm server, the plugin a registered
session per test plus its end-of-test check. Modes: ``shared`` (the default: one server
per session), ``per_test`` (``callgate_server_per_test = true``: a server per test),
``baseline``. Rounds alternate the modes; the medians are reported.

Also in the same process: ``MockServer.stop()`` idle against uvicorn's own shutdown
(``should_exit`` polled), the cost a server per test paid before. ``--before SRC`` adds a
``before`` mode: the plugin suite run with another callgate source tree first on the path
(e.g. ``git archive <commit> src | tar -x -C /tmp/before``, then ``--before /tmp/before/src``).

Run: PYTHONPATH=src python bench/plugin_overhead.py [--tests 200] [--rounds 3] [--before SRC]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn

from callgate.mock import MockServer, Script

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
import httpx

CLIENT = httpx.Client(timeout=30)
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
AUTH = {"authorization": "Bearer k"}


def loop(base, headers):
    url = base + "/responses"
    first = CLIENT.post(url, headers={**AUTH, **headers},
                        json={"model": "m", "input": "Weather in Paris?", "tools": TOOLS})
    first.raise_for_status()
    body = first.json()
    call = body["output"][0]
    output = [{"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}]
    second = CLIENT.post(url, headers={**AUTH, **headers},
                         json={"model": "m", "input": output, "previous_response_id": body["id"]})
    second.raise_for_status()
    assert second.json()["output"][0]["content"][0]["text"] == "It is sunny in Paris."
"""

PLUGIN_TESTS = """
import json
import pytest

SCRIPT = json.loads({script!r})


@pytest.fixture
def callgate_script():
    return SCRIPT


@pytest.mark.parametrize("n", range({tests}))
def test_loop(callgate_server, n):
    loop(callgate_server.openai_base_url, callgate_server.headers())
"""

BASELINE_TESTS = """
import json
import pytest
from callgate.mock import MockServer, Script

SERVER = MockServer(Script.from_dict(json.loads({script!r}))).start()  # warm before the loop


@pytest.mark.parametrize("n", range({tests}))
def test_loop(n):
    loop(SERVER.openai_base_url, {{"x-callgate-test-id": f"test-{{n}}"}})
"""

CONFTEST = """
import os
import time

import pytest

import callgate.mock  # imported by both runs before the loop (the plugin imports it lazily)


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
    head = "from _loop import loop\n"
    plugin = head + PLUGIN_TESTS.format(script=script, tests=tests)
    (root / "test_plugin.py").write_text(plugin)
    (root / "test_baseline.py").write_text(head + BASELINE_TESTS.format(script=script, tests=tests))


def _run(root: Path, mode: str, before: str | None) -> float:
    """Seconds the test loop of one pytest run took (the run must pass)."""
    out = root / f"{mode}.time"
    target = "test_baseline.py" if mode == "baseline" else "test_plugin.py"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", target]
    if mode == "per_test":
        args += ["-o", "callgate_server_per_test=true"]
    src = before if mode == "before" and before else None
    env = {**os.environ, "CALLGATE_BENCH_OUT": str(out), "PYTHONPATH": _pythonpath(root, src)}
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{done.stdout}\n{done.stderr}")
    return float(out.read_text())


def _pythonpath(root: Path, src: str | None) -> str:
    src = src or str(Path(__file__).resolve().parents[1] / "src")
    return os.pathsep.join([src, str(root), os.environ.get("PYTHONPATH", "")])


def _stop_ms(rounds: int) -> tuple[float, float]:
    """Median ms of an idle stop: MockServer's, then plain uvicorn's (should_exit polled)."""
    script = Script.from_dict(SCRIPT)
    ours, theirs = [], []
    for _ in range(rounds):
        server = MockServer(script).start()
        started = time.perf_counter()
        server.stop()
        ours.append((time.perf_counter() - started) * 1000)
        theirs.append(_uvicorn_stop_ms(server))
    return statistics.median(ours), statistics.median(theirs)


def _uvicorn_stop_ms(mock: MockServer) -> float:
    config = uvicorn.Config(mock.app, port=0, log_level="warning", lifespan="off", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.001)
    started = time.perf_counter()
    server.should_exit = True
    thread.join()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="another callgate src tree, run as mode 'before'")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"baseline": [], "shared": [], "per_test": []}
    if args.before:
        times["before"] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_suite(root, args.tests)
        for _ in range(args.rounds):
            for mode in times:
                times[mode].append(_run(root, mode, args.before))
    base = statistics.median(times["baseline"])
    print(f"{args.tests} tests of a two-turn loop, median of {args.rounds} alternated rounds")
    print(f"{'mode':<10} {'loop s':>8} {'ms/test':>8} {'ratio':>7} {'overhead ms/test':>17}")
    for mode, runs in times.items():
        median = statistics.median(runs)
        per_test = median / args.tests * 1000
        overhead = (median - base) / args.tests * 1000
        print(
            f"{mode:<10} {median:>8.3f} {per_test:>8.2f} {median / base:>6.2f}x {overhead:>17.2f}"
        )
    ours, theirs = _stop_ms(max(5, args.rounds))
    print(f"idle stop: MockServer {ours:.2f} ms, uvicorn's own shutdown {theirs:.1f} ms "
          f"({theirs / ours:.0f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
