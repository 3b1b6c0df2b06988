"""Benchmark: the mock's request pipeline of two (or more) source trees, in process.

Each measurement runs in its own process with ``PYTHONPATH=<tree>/src``: it builds the app
``callgate serve`` runs for ``bench/server_throughput.py``'s streamed two-call turn (its
``script`` and ``throughput_wire.py``'s request, from this checkout) and answers
``--requests`` requests through ``MockApp.direct`` -- the path the mock's own HTTP/1.1
connection takes: every pipeline stage, turn selection, the render memo, the store, the
journal, the response object; no sockets, no event loop. Each request carries a fresh
``x-callgate-test-id``, as in the throughput benchmark, so each is a new session. Per run:
CPU time (``time.process_time``) per request, best of ``--repeat`` batches. The (tree,
protocol) runs are shuffled in every round, so drift in the machine's load hits every tree
alike; a second ``--tree`` with the same path as the first is a control (noise alone).

    python bench/mock_pipeline_ab.py --tree before=../base --tree after=. --rounds 5

Prints, per protocol and tree, the best and the median (over rounds) time per request and
the ratio of each to the first tree's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PROTOCOLS = ("openai_responses", "anthropic_messages", "gemini_interactions")
PROTOCOLS += ("gemini_generate_content", "openai_chat_completions")


def worker(protocol: str, requests: int, repeat: int) -> float:
    """Best CPU seconds per request over ``repeat`` batches (run inside the tree's process)."""
    sys.path.insert(0, str(BENCH))
    from server_throughput import script
    from throughput_wire import WIRES

    from callgate.mock import create_app

    wire = WIRES[protocol]
    app = create_app(script(protocol))
    body = wire.body().encode()
    headers = [(k.lower().encode(), v.encode()) for k, v in wire.headers.items()]
    headers += [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
    path, _, query = wire.mock_path.partition("?")

    def scope(n: int) -> dict[str, Any]:
        return {
            "type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
            "query_string": query.encode(), "root_path": "", "scheme": "http",
            "http_version": "1.1", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 9),
            "headers": [*headers, (b"x-callgate-test-id", b"t%d" % n)],
        }  # fmt: skip

    first = app.direct(scope(-1), body)
    if first is None or first.status_code != 200:
        raise SystemExit(f"{protocol}: the benchmark request was not served: {first!r}")
    best = float("inf")
    n = 0
    for _ in range(repeat):
        scopes = [scope(n + i) for i in range(requests)]
        n += requests
        start = time.process_time()
        for one in scopes:
            app.direct(one, body)
        best = min(best, (time.process_time() - start) / requests)
    return best


def run(tree: Path, protocol: str, requests: int, repeat: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    args = [sys.executable, __file__, "--worker", protocol]
    args += ["--requests", str(requests), "--repeat", str(repeat)]
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=PROTOCOLS, help=argparse.SUPPRESS)
    parser.add_argument("--tree", action="append", default=[], help="name=path (repeatable)")
    parser.add_argument("--protocol", action="append", choices=PROTOCOLS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=3000, help="requests per batch")
    parser.add_argument("--repeat", type=int, default=5, help="batches per run (best kept)")
    args = parser.parse_args()
    if args.worker:
        seconds = worker(args.worker, args.requests, args.repeat)
        print(json.dumps({"seconds": seconds}))
        return
    pairs = [t.partition("=") for t in args.tree]
    trees = [(name, Path(path).resolve()) for name, _, path in pairs]
    if len(trees) < 2:
        parser.error("give at least two --tree name=path")
    protocols = args.protocol or list(PROTOCOLS)
    load = os.getloadavg()[0]
    print(f"{sys.version.split()[0]}, {os.cpu_count()} cores; {args.rounds} rounds, "
          f"{args.repeat} x {args.requests} requests per run; load {load:.1f}")  # fmt: skip
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        cells = [(name, path, p) for name, path in trees for p in protocols]
        random.shuffle(cells)
        for name, path, protocol in cells:
            seconds = run(path, protocol, args.requests, args.repeat)
            times.setdefault((protocol, name), []).append(seconds)
            print(f"  round {r + 1} {protocol} {name}: {seconds * 1e6:.1f} us/request", flush=True)
    print("\n| protocol | tree | best us/request | ratio | median us/request | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for protocol in protocols:
        base = times[(protocol, trees[0][0])]
        for name, _ in trees:
            mine = times[(protocol, name)]
            best, median = min(mine), statistics.median(mine)
            print(f"| {protocol} | {name} | {best * 1e6:.1f} | {best / min(base):.3f} | "
                  f"{median * 1e6:.1f} | {median / statistics.median(base):.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
