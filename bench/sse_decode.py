"""Micro-benchmark: callgate.sse.SSEDecoder vs a bare split-and-partition loop.

Run: ``.venv/bin/python bench/sse_decode.py``. Prints events/s for each variant (best of
several repeats) and the decoder / baseline ratios.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from callgate.sse import SSEDecoder

EVENT = (
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta","sequence_number":123,'
    b'"item_id":"fc_1","output_index":0,"delta":"a"}\n\n'
)
N_EVENTS = 16_000
CHUNK = 64 * 1024
STREAM = EVENT * N_EVENTS
CHUNKS = [STREAM[i : i + CHUNK] for i in range(0, len(STREAM), CHUNK)]


def bare_split() -> int:
    """The floor: split blocks on blank lines, lines on LF, fields on the first colon."""
    out = []
    for block in STREAM.split(b"\n\n"):
        event = None
        data = None
        for line in block.split(b"\n"):
            name, _, value = line.partition(b":")
            if name == b"data":
                data = value
            elif name == b"event":
                event = value
        if data is not None:
            out.append((event, data))
    return len(out)


def bare_split_json() -> int:
    """The reference parser loop: bare split plus ``json.loads`` of each data line."""
    out = []
    for block in STREAM.split(b"\n\n"):
        for line in block.split(b"\n"):
            name, _, value = line.partition(b":")
            if name == b"data":
                out.append(json.loads(value))
    return len(out)


def decoder_whole() -> int:
    dec = SSEDecoder()
    events = dec.feed(STREAM)
    dec.finish()
    return len(events)


def decoder_chunked() -> int:
    dec = SSEDecoder()
    n = 0
    for chunk in CHUNKS:
        n += len(dec.feed(chunk))
    dec.finish()
    return n


def decoder_chunked_json() -> int:
    dec = SSEDecoder()
    out = []
    for chunk in CHUNKS:
        for ev in dec.feed(chunk):
            out.append(json.loads(ev.data))
    dec.finish()
    return len(out)


def measure(fn: Callable[[], int], repeat: int = 15) -> float:
    """Best-of-``repeat`` throughput in events per second."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t0)
    if n != N_EVENTS:
        raise SystemExit(f"{fn.__name__} produced {n} events, expected {N_EVENTS}")
    return N_EVENTS / best


def main() -> None:
    print(f"{N_EVENTS} events, {len(STREAM)} bytes, {len(CHUNKS)} chunks of {CHUNK} bytes")
    results = {
        fn.__name__: measure(fn)
        for fn in (
            bare_split,
            decoder_whole,
            decoder_chunked,
            bare_split_json,
            decoder_chunked_json,
        )
    }
    for name, rate in results.items():
        print(f"  {name:<22} {rate:>12,.0f} events/s")
    base = results["bare_split"]
    base_json = results["bare_split_json"]
    print(f"  ratio decoder_whole   / bare_split      {base / results['decoder_whole']:.2f}x")
    print(f"  ratio decoder_chunked / bare_split      {base / results['decoder_chunked']:.2f}x")
    ratio = base_json / results["decoder_chunked_json"]
    print(f"  ratio decoder+json    / bare_split_json {ratio:.2f}x")


if __name__ == "__main__":
    main()
