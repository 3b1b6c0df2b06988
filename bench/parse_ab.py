"""Benchmark: the four rooms' parsers of two (or more) source trees, in interleaved rounds.

Each measurement runs in its own process with ``PYTHONPATH=<tree>/src``, so every tree
parses the same stream of the room's ``bench/parse_<room>.py`` (built by that script, from
this checkout) with its own ``callgate``. Per run: CPU time (``time.process_time``, the
garbage collector off), best of ``--repeat`` parses of the whole stream as bytes
(``parse_stream``) and as decoded events (``Parser.feed_event`` per event, then
``finish``), beside the script's bare SSE split + ``json.loads`` floor. The (tree, room)
runs are shuffled in every round, so drift in the machine's load hits every tree alike.

    python bench/parse_ab.py --tree main=../main-tree --tree branch=. --rounds 6

Prints, per room and tree, the best time per event over all rounds and its ratio to the
first tree's; a second ``--tree`` with the same path as the first is a control (what noise
alone does).
"""

from __future__ import annotations

import argparse
import gc
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
#: room -> (bench module, stream builder, argument for a ~16k-event stream, parse function)
ROOMS: dict[str, tuple[str, str, int, str]] = {
    "openai_responses": ("parse_openai_responses", "make_stream", 16_000, "callgate"),
    "anthropic_messages": ("parse_anthropic_messages", "build_stream", 2_000, "callgate_parse"),
    "gemini_interactions": ("parse_gemini_interactions", "build_stream", 2_000, "callgate_parse"),
    "gemini_generate_content": (
        "parse_gemini_generate_content",
        "build_stream",
        16_000,
        "callgate_parse",
    ),
}


def _cpu_best(run: Any, repeat: int) -> float:
    shortest = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.process_time()
        run()
        shortest = min(shortest, time.process_time() - start)
        gc.enable()
    return shortest


def _events(data: bytes) -> list[Any]:
    out: list[Any] = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[6:] for line in block.split(b"\n") if line.startswith(b"data: ")]
        if lines:
            text = b"\n".join(lines).decode()
            out.append(text if text == "[DONE]" else json.loads(text))
    return out


def child(room: str, repeat: int) -> dict[str, Any]:
    """One measurement of ``room`` with whatever ``callgate`` this process imports."""
    sys.path.insert(0, str(BENCH))
    import importlib

    import callgate

    module_name, builder, size, parse = ROOMS[room]
    bench = importlib.import_module(module_name)
    built = getattr(bench, builder)(size)
    data = built[0] if isinstance(built, tuple) else built
    events = _events(data)
    parser_type = importlib.import_module(f"callgate.{room}").Parser

    def by_events() -> None:
        parser = parser_type()
        for event in events:
            parser.feed_event(event)
        parser.finish()

    by_events()  # the stream parses in this mode too
    return {
        "callgate": callgate.__file__,
        "events": len(events),
        "bytes": _cpu_best(lambda: getattr(bench, parse)(data), repeat),
        "feed_event": _cpu_best(by_events, repeat),
        "bare": _cpu_best(lambda: bench.bare(data), repeat),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="label=path")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--room", action="append", choices=sorted(ROOMS))
    parser.add_argument("--child", choices=sorted(ROOMS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return 0
    trees = dict(item.split("=", 1) for item in args.tree)
    rooms = args.room or sorted(ROOMS)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    shuffle = random.Random(0).shuffle
    for round_no in range(args.rounds):
        runs = [(label, room) for label in trees for room in rooms]
        shuffle(runs)
        for label, room in runs:
            env = dict(os.environ, PYTHONPATH=str(Path(trees[label]).resolve() / "src"))
            command = [sys.executable, __file__, "--tree", "x=.", "--child", room]
            out = subprocess.run(
                [*command, "--repeat", str(args.repeat)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout)
            if not result["callgate"].startswith(str(Path(trees[label]).resolve())):
                raise SystemExit(f"{label} imported {result['callgate']}")
            results.setdefault((label, room), []).append(result)
        print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
    first = next(iter(trees))
    print(f"{args.rounds} rounds, best of {args.repeat} CPU-time parses per run")
    print(f"{'room':24}{'tree':>9}{'us/ev bytes':>13}{'/first':>8}{'x bare':>8}", end="")
    print(f"{'us/ev events':>14}{'/first':>8}")
    for room in rooms:
        base = results[first, room]
        b_bytes = min(r["bytes"] for r in base)
        b_events = min(r["feed_event"] for r in base)
        for label in trees:
            runs = results[label, room]
            n = runs[0]["events"]
            t_bytes = min(r["bytes"] for r in runs)
            t_events = min(r["feed_event"] for r in runs)
            x_bare = statistics.median(r["bytes"] / r["bare"] for r in runs)
            print(
                f"{room:24}{label:>9}{t_bytes / n * 1e6:>13.2f}{t_bytes / b_bytes:>8.3f}"
                f"{x_bare:>8.2f}{t_events / n * 1e6:>14.2f}{t_events / b_events:>8.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
