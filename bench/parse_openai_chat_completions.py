"""Benchmark: callgate's Chat Completions parser against bare SSE + json.loads and the SDK.

    .venv/bin/python bench/parse_openai_chat_completions.py [--repeat N]

The stream: a two-call turn as OpenAI streams it (a role chunk, the first delta of each call
with ``id``, ``type`` and ``name``, then ``index`` + ``function.arguments`` deltas), with
8 x 2,000 one-character argument deltas: eight runs of 2,000, alternating between the two
calls (16,000 argument chunks in all), then the finish chunk, the usage chunk and
``data: [DONE]``. In one run, on the same bytes, it times:

- ``bare``: split the bytes into SSE events and ``json.loads`` every ``data`` except
  ``[DONE]`` (a floor: no validation, no accumulation);
- ``sdk``: the official ``client.chat.completions.stream(...)`` helper (openai SDK) over an
  in-memory ``MockTransport``, consumed to ``get_final_completion()``; the tools are
  declared non-strict (with ``strict: true`` the helper re-parses the whole argument text
  after every delta: quadratic, far slower);
- ``floor``: callgate's own kernel alone, the WHATWG ``SSEDecoder`` and ``loads_strict`` per
  chunk, no protocol work (what any strict reader of these bytes pays before the gate);
- ``callgate``: ``callgate.openai_chat_completions.parse_stream`` (strict JSON, every check,
  arguments joined and parsed once per call, released after ``[DONE]``).

Then callgate's per-chunk time at 1k, 4k, 16k and 64k deltas. The three readers are timed
in interleaved rounds (bare, callgate, SDK in every round) in CPU time
(``time.process_time``: the machine is shared, and wall time swings with the other
processes' load); each figure is the best of ``--repeat`` rounds. Targets (issue 27):
callgate <= 1.5x the bare time, >= 10x faster than the SDK helper; per-chunk time flat
(64k within 1.3x of 4k).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai

from callgate import loads_strict
from callgate.openai_chat_completions import parse_stream
from callgate.sse import SSEDecoder

RUNS = 8
HEAD = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1764979200}
HEAD["model"] = "gpt-4o-mini-2024-07-18"
HEAD["system_fingerprint"] = "fp_bench"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**HEAD, "choices": [choice]}


def make_stream(deltas: int) -> tuple[bytes, int]:
    """The stream with ``deltas`` argument chunks in ``RUNS`` alternating runs."""
    per_run = deltas // RUNS
    out = [_chunk({"role": "assistant", "content": None, "refusal": None})]
    for index, (call_id, name) in enumerate((("call_a", "lookup"), ("call_b", "store"))):
        first = {"index": index, "id": call_id, "type": "function"}
        first["function"] = {"name": name, "arguments": ""}
        out.append(_chunk({"tool_calls": [first]}))
    pieces: list[list[str]] = [[], []]
    for run in range(RUNS):
        index = run % 2
        for _ in range(per_run):
            pieces[index].append("a")
            out.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": "a"}}]}))
    # Close each call's arguments into a JSON object: {"k":"aaaa..."}
    for index in (0, 1):
        out.insert(
            2 + index + 1,
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": '{"k":"'}}]}),
        )
    out += [_chunk({"tool_calls": [{"index": i, "function": {"arguments": '"}'}}]}) for i in (0, 1)]
    out.append(_chunk({}, "tool_calls"))
    out.append(
        {
            **HEAD,
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": deltas, "total_tokens": 9 + deltas},
        }
    )
    frames = [f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in out]
    return ("".join(frames) + "data: [DONE]\n\n").encode(), len(out)


def bare(data: bytes) -> int:
    count = 0
    loads = json.loads
    for block in data.split(b"\n\n"):
        if block.startswith(b"data: ") and block != b"data: [DONE]":
            loads(block[6:])
            count += 1
    return count


def floor(data: bytes) -> int:
    count = 0
    for event in SSEDecoder().feed(data):
        if event.data != "[DONE]":
            loads_strict(event.data)
            count += 1
    return count


TOOLS: list[Any] = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("lookup", "store")
]


def sdk(data: bytes) -> int:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    client = openai.OpenAI(
        api_key="bench",
        base_url="http://mock.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    messages: list[Any] = [{"role": "user", "content": "go"}]
    with client.chat.completions.stream(
        model="gpt-bench", messages=messages, tools=TOOLS
    ) as stream:
        final = stream.get_final_completion()
    return len(final.choices[0].message.tool_calls or [])


def callgate(data: bytes) -> int:
    return len(parse_stream(data).calls)


def best(fn: Callable[[bytes], int], data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn(data)
        times.append(time.process_time() - start)
    return min(times)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}, openai {openai.__version__}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data, n_chunks = make_stream(16_000)
    if (callgate(data), sdk(data), bare(data)) != (2, 2, n_chunks):
        raise SystemExit("sanity check failed: the three readers disagree on the stream")
    # Interleaved rounds: each reader is timed in every round, the best round counts.
    t_bare = t_sdk = t_cg = t_floor = float("inf")
    for _ in range(args.repeat):
        t_bare = min(t_bare, best(bare, data, 1))
        t_floor = min(t_floor, best(floor, data, 1))
        t_cg = min(t_cg, best(callgate, data, 1))
        t_sdk = min(t_sdk, best(sdk, data, 1))
    print(f"machine: {machine()}")
    print(f"stream: 2 calls, {RUNS} x 2,000 one-char argument deltas = {n_chunks:,} chunks")
    print(f"{'':34}{'chunks/s':>12}{'us/chunk':>10}")
    for label, t in (
        ("bare SSE split + json.loads", t_bare),
        ("SSEDecoder + loads_strict floor", t_floor),
        ("openai chat.completions.stream", t_sdk),
        ("callgate parse_stream", t_cg),
    ):
        print(f"{label:34}{n_chunks / t:>12,.0f}{t / n_chunks * 1e6:>10.2f}")
    vs_sdk, vs_bare = t_sdk / t_cg, t_cg / t_bare
    print(f"callgate vs SDK helper: {vs_sdk:.1f}x faster (target >= 10x)")
    print(f"callgate vs bare:       {vs_bare:.2f}x the bare time (target <= 1.5x)")
    ratio = t_cg / t_floor
    print(f"floor vs bare:          {t_floor / t_bare:.2f}x; callgate vs floor: {ratio:.2f}x")

    per_chunk = {}
    for total in (1_000, 4_000, 16_000, 64_000):
        sized, count = make_stream(total)
        per_chunk[total] = best(callgate, sized, args.repeat) / count
        print(
            f"per-chunk at {total:>6,} deltas: {per_chunk[total] * 1e6:.2f} us ({count:,} chunks)"
        )
    flat = per_chunk[64_000] / per_chunk[4_000]
    print(f"64k / 4k per-chunk time: {flat:.2f} (target <= 1.3)")
    ok = vs_sdk >= 10 and vs_bare <= 1.5 and flat <= 1.3
    print("targets:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
