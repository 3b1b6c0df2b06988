"""Recording overhead: a streamed turn through ``recording_transport`` vs the same client
without it, in one run (turns alternated, CPU time, median of per-round ratios); and the memory
of a recorded stream (tracemalloc peak) for 1k vs 64k chunks.

Run: PYTHONPATH=src python bench/recording_overhead.py
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import httpx2
import openai

from callgate.mock import MockServer, ScriptBuilder
from callgate.recording import Recorder, recording_transport

TURNS = 20
ROUNDS = 9
TEXT = "The weather in Paris is mild with light rain later in the day. " * 6  # ~380 chars


def _sdk_turn(client: openai.OpenAI) -> None:
    for _ in client.responses.create(model="m", input="weather?", stream=True):
        pass


def _raw_turn(client: httpx2.Client, url: str) -> None:
    body = {"model": "m", "input": "weather?", "stream": True}
    with client.stream("POST", url, json=body, headers={"authorization": "Bearer x"}) as r:
        for _ in r.iter_bytes():
            pass


def _pairs(plain: Callable[[], None], recorded: Callable[[], None]) -> tuple[float, float]:
    """Alternate plain and recorded turns (so load changes hit both alike); CPU time of
    this process (client and in-process mock), which other jobs on the machine do not
    inflate the way they inflate wall time."""
    a = b = 0.0
    for _ in range(TURNS):
        t0 = time.process_time()
        plain()
        t1 = time.process_time()
        recorded()
        t2 = time.process_time()
        a += t1 - t0
        b += t2 - t1
    return a / TURNS, b / TURNS


def overhead() -> None:
    turns = ScriptBuilder(seed=1)
    for _ in range(TURNS * ROUNDS * 4 + 8):
        turns.turn("openai_responses", text=TEXT, chunking="char")
    with MockServer(turns.build()) as server:
        out = Path(tempfile.mkdtemp(prefix="callgate-bench-"))
        try:
            recorder = Recorder(out)
            plain_http = httpx2.Client()
            rec_http = httpx2.Client(
                transport=recording_transport(httpx2.HTTPTransport(), recorder)
            )
            sdk_plain = openai.OpenAI(base_url=server.openai_base_url, api_key="x",
                                      http_client=plain_http, max_retries=0)  # fmt: skip
            sdk_rec = openai.OpenAI(base_url=server.openai_base_url, api_key="x",
                                    http_client=rec_http, max_retries=0)  # fmt: skip
            url = f"{server.openai_base_url}/responses"
            cases = {
                "openai SDK, streamed turn": (
                    lambda: _sdk_turn(sdk_plain), lambda: _sdk_turn(sdk_rec)),
                "bare httpx2 client, streamed turn": (
                    lambda: _raw_turn(plain_http, url), lambda: _raw_turn(rec_http, url)),
            }  # fmt: skip
            _sdk_turn(sdk_plain)  # warm up
            _sdk_turn(sdk_rec)
            print(f"{TURNS} turns per round, {ROUNDS} rounds, {len(TEXT)} text deltas per turn")
            for name, (plain, recorded) in cases.items():
                ratios, base, rec = [], [], []
                for _ in range(ROUNDS):
                    a, b = _pairs(plain, recorded)
                    base.append(a)
                    rec.append(b)
                    ratios.append(b / a)
                print(f"{name}: plain {statistics.median(base) * 1e3:.2f} ms, "
                      f"recorded {statistics.median(rec) * 1e3:.2f} ms, "
                      f"ratio median {statistics.median(ratios):.3f} "
                      f"(min {min(ratios):.3f}, max {max(ratios):.3f})")  # fmt: skip
            sdk_plain.close()
            sdk_rec.close()
        finally:
            shutil.rmtree(out)


def _stream(chunks: int) -> Iterator[bytes]:
    for i in range(chunks):
        yield (
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
            b'"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word ",'
            b'"sequence_number":' + str(i).encode() + b"}\n\n"
        )


def _peak(chunks: int, record: bool) -> int:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=_stream(chunks)
        )

    out = Path(tempfile.mkdtemp(prefix="callgate-bench-"))
    try:
        inner = httpx.MockTransport(handler)
        transport = recording_transport(inner, Recorder(out)) if record else inner
        with httpx.Client(transport=transport) as client:
            tracemalloc.start()
            with client.stream("POST", "https://api.openai.com/v1/responses", json={}) as r:
                for _ in r.iter_bytes():
                    pass
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return peak
    finally:
        shutil.rmtree(out)


def memory() -> None:
    for record in (False, True):
        small, large, huge = (_peak(n, record) for n in (1_000, 64_000, 256_000))
        label = "recorded" if record else "plain   "
        print(f"memory {label}: peak {small / 1024:.0f} KiB (1k chunks), "
              f"{large / 1024:.0f} KiB (64k), {huge / 1024:.0f} KiB (256k); "
              f"64k/1k {large / small:.2f}, 256k/64k {huge / large:.2f}")  # fmt: skip


if __name__ == "__main__":
    overhead()
    memory()
