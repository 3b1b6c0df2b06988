"""Benchmark: the Responses WebSocket connection parser against the SSE path, same events.

    .venv/bin/python bench/parse_openai_responses_ws.py [--repeat N]

The events are those of ``parse_openai_responses.py`` (8 parallel function calls whose
one-character argument deltas interleave round-robin, about 16,000 events). In one run it
times, alternating the two readers so that load on the machine hits both alike:

- ``sse``: ``callgate.openai_responses.parse_stream`` over the SSE bytes of the events
  (``event:`` + ``data:`` lines, fed in 64 KiB slices);
- ``ws``: a ``Connection`` fed the same events as WebSocket text frames, one
  ``feed_message`` per frame (a frame is one event: no SSE framing), then ``close``.

Then the same for many short responses on one socket (64 responses of 256 deltas each:
64 ``parse_stream`` calls against one connection), where the connection's per-response
routing shows. Each figure is the best of ``--repeat`` runs. Target (issue 28): the
connection's events/s within 10% of the SSE path's (ratio ws/sse >= 0.9; it should be
faster, having no framing to undo).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from typing import Any

from parse_openai_responses import machine, make_stream

from callgate.openai_responses import Connection, parse_stream


def events_of(data: bytes) -> list[str]:
    """The JSON text of every event of an SSE body (what a socket's text frames carry)."""
    return [
        line[6:].decode()
        for block in data.split(b"\n\n")
        for line in block.split(b"\n")
        if line.startswith(b"data: ")
    ]


def many(n_responses: int, deltas: int) -> tuple[list[bytes], list[str]]:
    """``n_responses`` streams with distinct ids: their SSE bodies, and all their frames."""
    bodies, frames = [], []
    for n in range(n_responses):
        data, _count = make_stream(deltas)
        data = data.replace(b"resp_68f1c0d2a4e08190b3e4f5a6b7c8d9e0", f"resp_{n:06d}".encode())
        bodies.append(data)
        frames.extend(events_of(data))
    return bodies, frames


def sse_path(bodies: list[bytes]) -> int:
    return sum(len(parse_stream(body).calls) for body in bodies)


def ws_path(frames: list[str]) -> int:
    conn = Connection()
    feed = conn.feed_message
    calls = 0
    for frame in frames:
        for turn in feed(frame):
            calls += len(turn.calls)
    conn.close(1000)
    return calls


def alternate(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best time of each run, the runs alternated within every round."""
    best = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def compare(label: str, bodies: list[bytes], frames: list[str], repeat: int) -> float:
    if sse_path(bodies) != ws_path(frames):
        raise SystemExit("sanity check failed: the two paths release different calls")
    t = alternate({"sse": lambda: sse_path(bodies), "ws": lambda: ws_path(frames)}, repeat)
    n = len(frames)
    print(f"{label}: {n:,} events")
    print(f"  {'':34}{'events/s':>12}{'us/event':>10}")
    for name, what in (("sse", "SSE path (parse_stream)"), ("ws", "connection (feed_message)")):
        print(f"  {what:34}{n / t[name]:>12,.0f}{t[name] / n * 1e6:>10.2f}")
    ratio = t["sse"] / t["ws"]
    print(f"  connection / SSE events/s: {ratio:.2f} (target >= 0.90)")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    data, _count = make_stream(16_000)
    one = compare("one response, 8 calls x 2,000 deltas", [data], events_of(data), args.repeat)
    bodies, frames = many(64, 256)
    several = compare("64 responses of 256 deltas, one socket", bodies, frames, args.repeat)
    ok = one >= 0.9 and several >= 0.9
    print("target:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
