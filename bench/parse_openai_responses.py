"""Benchmark: callgate's OpenAI Responses parser against bare SSE + json.loads and the SDK.

    .venv/bin/python bench/parse_openai_responses.py [--repeat N]

The stream: 8 parallel function calls whose one-character argument deltas interleave
round-robin (2,000 per call, about 16,000 events), framed exactly as the API frames them
(``event:`` + ``data:`` lines). In one run, on the same bytes, it times:

- ``bare``: split the bytes into SSE events and ``json.loads`` every ``data`` (a floor: no
  validation, no accumulation);
- ``sdk``: the official ``client.responses.stream(...)`` helper (openai SDK) over an
  in-memory ``MockTransport``, consumed to ``get_final_response()``;
- ``callgate``: ``callgate.openai_responses.parse_stream`` (strict JSON, full checks,
  arguments joined and parsed once per call).

Then callgate's per-event time at 1k, 4k, 16k and 64k deltas in total. Each figure is the
best of ``--repeat`` runs. Targets (design): callgate >= 8x the SDK's events/s, <= 3x the bare
time, and per-event time flat (64k within 1.3x of 4k).
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

from callgate.openai_responses import parse_stream

N_CALLS = 8


def _response(rid: str, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": 1764000000,
        "model": "gpt-bench",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if status == "completed":
        body["usage"] = {
            "input_tokens": 1,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 2,
        }
    return body


def make_stream(total_deltas: int) -> tuple[bytes, int]:
    """SSE bytes of ``N_CALLS`` interleaved calls with ``total_deltas`` 1-char deltas."""
    per_call = total_deltas // N_CALLS
    events: list[dict[str, Any]] = []
    rid = "resp_68f1c0d2a4e08190b3e4f5a6b7c8d9e0"

    def emit(type_: str, **fields: Any) -> None:
        events.append({"type": type_, **fields, "sequence_number": len(events)})

    emit("response.created", response=_response(rid, "in_progress", []))
    emit("response.in_progress", response=_response(rid, "in_progress", []))
    items = []
    for i in range(N_CALLS):
        arguments = '{"text":"' + "x" * (per_call - 11) + '"}'
        item = {
            "type": "function_call",
            "id": f"fc_68f1c0d4b1f48190a{i}",
            "call_id": f"call_Q2kVb8cZ1mN{i}",
            "name": f"tool_{i}",
            "arguments": arguments,
            "status": "completed",
        }
        items.append(item)
        emit("response.output_item.added", output_index=i, item=item | {"arguments": ""})
    for pos in range(per_call):
        for i, item in enumerate(items):
            emit(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=i,
                delta=item["arguments"][pos],
            )
    for i, item in enumerate(items):
        emit(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=i,
            arguments=item["arguments"],
        )
        emit("response.output_item.done", output_index=i, item=item)
    emit("response.completed", response=_response(rid, "completed", items))
    data = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events
    ).encode()
    return data, len(events)


def bare(data: bytes) -> int:
    count = 0
    for block in data.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                json.loads(line[6:])
                count += 1
    return count


def sdk(data: bytes) -> int:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    client = openai.OpenAI(
        api_key="bench",
        base_url="http://mock.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    with client.responses.stream(model="gpt-bench", input="go") as stream:
        final = stream.get_final_response()
    return len(final.output)


def callgate(data: bytes) -> int:
    return len(parse_stream(data).calls)


def best(fn: Callable[[bytes], int], data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - start)
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

    data, n_events = make_stream(16_000)
    if (callgate(data), sdk(data), bare(data)) != (N_CALLS, N_CALLS, n_events):
        raise SystemExit("sanity check failed: the three readers disagree on the stream")
    t_bare = best(bare, data, args.repeat)
    t_sdk = best(sdk, data, max(1, args.repeat // 2))
    t_cg = best(callgate, data, args.repeat)
    rate = {name: n_events / t for name, t in (("bare", t_bare), ("sdk", t_sdk), ("cg", t_cg))}
    print(f"machine: {machine()}")
    print(f"stream: {N_CALLS} parallel calls x 2,000 one-char deltas = {n_events:,} events")
    print(f"{'':28}{'events/s':>12}{'us/event':>10}")
    for label, key, t in (
        ("bare SSE split + json.loads", "bare", t_bare),
        ("openai responses.stream", "sdk", t_sdk),
        ("callgate parse_stream", "cg", t_cg),
    ):
        print(f"{label:28}{rate[key]:>12,.0f}{t / n_events * 1e6:>10.2f}")
    vs_sdk, vs_bare = t_sdk / t_cg, t_cg / t_bare
    print(f"callgate vs SDK helper: {vs_sdk:.1f}x faster (target >= 8x)")
    print(f"callgate vs bare:       {vs_bare:.2f}x the bare time (target <= 3x)")

    per_event = {}
    for total in (1_000, 4_000, 16_000, 64_000):
        sized, count = make_stream(total)
        per_event[total] = best(callgate, sized, args.repeat) / count
        print(
            f"per-event at {total:>6,} deltas: {per_event[total] * 1e6:.2f} us ({count:,} events)"
        )
    flat = per_event[64_000] / per_event[4_000]
    print(f"64k / 4k per-event time: {flat:.2f} (target <= 1.3)")
    ok = vs_sdk >= 8 and vs_bare <= 3 and flat <= 1.3
    print("targets:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
