"""Benchmark: what the Gemini parser keeps per seen ``event_id`` (memory), and what the
dedup costs per event (time), on 10^6 small events in one stream.

The stream: ``interaction.created``, one ``model_output`` step fed by one-character
``text`` deltas, ``step.stop``, ``interaction.completed`` — 10^6 events in all (the default
``max_events_per_stream``), each with its own ``event_id``. It is fed in 64 KiB chunks, as
from a socket, so the parser never holds the whole input.

Memory: ``tracemalloc`` peak while parsing, input bytes excluded (they are allocated
before tracing starts), for the stream with ids and the same stream without them; the
difference is the dedup's own cost. Time: best-of-``--repeat`` parse time of both streams
(tracing off), reported as a ratio.

Run: ``.venv/bin/python bench/gemini_event_ids.py`` (takes about a minute).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from typing import Any

from callgate.gemini_interactions import Parser

IID = "bench-interaction"
CHUNK = 64 * 1024
MiB = 1024 * 1024


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def build_stream(events: int, *, ids: bool, text: str = "a") -> bytes:
    """``events`` SSE events (deltas fill the middle), each with an id when ``ids``."""
    frames: list[bytes] = []

    def emit(obj: dict[str, Any]) -> None:
        if ids:
            obj = {"event_type": obj.pop("event_type"), "event_id": f"e{len(frames)}", **obj}
        frames.append(_frame(obj))

    shell = {"id": IID, "status": "in_progress"}
    emit({"event_type": "interaction.created", "interaction": shell})
    emit({"event_type": "step.start", "index": 0, "step": {"type": "model_output"}})
    for _ in range(events - 4):
        emit({"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": text}})
    emit({"event_type": "step.stop", "index": 0})
    emit({"event_type": "interaction.completed", "interaction": {**shell, "status": "completed"}})
    return b"".join(frames)


def parse(data: bytes) -> None:
    parser = Parser()
    view = memoryview(data)
    for start in range(0, len(data), CHUNK):
        parser.feed_bytes(view[start : start + CHUNK])
    turn = parser.finish()
    if turn.status != "completed":
        raise SystemExit("the benchmark stream did not complete")


def peak_bytes(data: bytes) -> int:
    tracemalloc.start()
    try:
        parse(data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best(data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        parse(data)
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--text-chars", type=int, default=1, help="characters per delta")
    parser.add_argument("--no-time", action="store_true", help="memory only")
    args = parser.parse_args()
    text = "a" * args.text_chars
    with_ids = build_stream(args.events, ids=True, text=text)
    without = build_stream(args.events, ids=False, text=text)
    print(f"python {sys.version.split()[0]}; {args.events:,} events")
    print(f"fed: {len(with_ids) / MiB:.1f} MiB with ids, {len(without) / MiB:.1f} MiB without")
    peak_ids, peak_plain = peak_bytes(with_ids), peak_bytes(without)
    print(f"tracemalloc peak: {peak_ids / MiB:.1f} MiB with ids, {peak_plain / MiB:.1f} without")
    per_id = (peak_ids - peak_plain) / args.events
    print(f"dedup memory: {(peak_ids - peak_plain) / MiB:.1f} MiB, {per_id:.0f} B per id")
    if not args.no_time:
        t_ids, t_plain = best(with_ids, args.repeat), best(without, args.repeat)
        print(
            f"time: {t_ids * 1e6 / args.events:.2f} us/event with ids, "
            f"{t_plain * 1e6 / args.events:.2f} without; ratio {t_ids / t_plain:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
