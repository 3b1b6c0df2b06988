"""Benchmark: code interpreter code deltas in callgate's Responses parser are O(n).

    .venv/bin/python bench/parse_openai_hosted.py [--repeat N]

One run, on streams rendered by the mock's writer seam: a ``code_interpreter_call`` whose
code arrives as one-character ``response.code_interpreter_call_code.delta`` events (then
``.done``, interpreting, completed, a message with a url citation), at 2k, 8k and 32k
deltas; and, as the baseline in the same process, a ``function_call`` with the same number
of one-character argument deltas (the measured hot path). Reported: callgate's µs per event
for each, the ratio code/arguments, and the growth of the per-event time from 2k to 32k
(flat means linear). Each figure is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time

from callgate.openai_responses import _render, parse_stream

SIZES = (2_000, 8_000, 32_000)


def _chars(text: str) -> list[str]:
    return list(text)


def _code_stream(n: int) -> bytes:
    code = "x" * n
    item = {"id": "ci_1", "type": "code_interpreter_call", "status": "completed",
            "container_id": "cntr_1", "code": code, "outputs": None}  # fmt: skip
    cite = {"type": "url_citation", "url": "https://e.x", "title": "E",
            "start_index": 0, "end_index": 4}  # fmt: skip
    items = [{"type": "code_interpreter_call", "item": item},
             {"type": "message", "id": "msg_1", "text": "done", "annotations": [cite]}]  # fmt: skip
    return _render.render_stream(response_id="resp_b", model="m", items=items, split=_chars)


def _args_stream(n: int) -> bytes:
    arguments = json.dumps({"k": "x" * (n - 8)})
    items = [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
              "arguments": arguments}]  # fmt: skip
    return _render.render_stream(response_id="resp_b", model="m", items=items, split=_chars)


def _best(data: bytes, repeat: int) -> tuple[float, int]:
    events = data.count(b"\n\n")
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        parse_stream(data)
        best = min(best, time.perf_counter() - start)
    return best * 1e6 / events, events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args(argv).repeat
    print(f"# {platform.processor() or platform.machine()}, CPython {sys.version.split()[0]}")
    print("| deltas | code µs/event | arguments µs/event | code / arguments |")
    print("|---:|---:|---:|---:|")
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for n in SIZES:
        code, _ = _best(_code_stream(n), repeat)
        args, _ = _best(_args_stream(n), repeat)
        first.setdefault("code", code)
        first.setdefault("args", args)
        last |= {"code": code, "args": args}
        print(f"| {n:,} | {code:.2f} | {args:.2f} | {code / args:.2f}x |")
    growth = {k: last[k] / first[k] for k in first}
    print(f"\nper-event growth {SIZES[0]:,} -> {SIZES[-1]:,}: code {growth['code']:.2f}x, "
          f"arguments {growth['args']:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
