"""Benchmark: callgate.anthropic_messages.parse_stream against bare SSE + json.loads and the
official anthropic SDK's MessageStream, on the same bytes, in one run.

The stream: message_start, 8 tool_use blocks each fed by one-character ``input_json_delta``
events (2,000 per block for the headline 16k figure), message_delta (tool_use), message_stop.
Per-event time is also reported at 4k, 16k and 64k deltas to show it stays flat.

Run: ``.venv/bin/python bench/parse_anthropic_messages.py`` (best of ``--repeat`` runs each).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial

from timing import best

from callgate.anthropic_messages import parse_stream

BLOCKS = 8


def _frame(obj: dict[str, object]) -> bytes:
    data = json.dumps(obj, separators=(",", ":"))
    return f"event: {obj['type']}\ndata: {data}\n\n".encode()


def build_stream(deltas_per_block: int) -> tuple[bytes, int]:
    """The stream bytes and the number of input_json_delta events in it."""
    out = [
        _frame(
            {
                "type": "message_start",
                "message": {
                    "id": "bench-msg",
                    "type": "message",
                    "role": "assistant",
                    "model": "bench-model",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            }
        )
    ]
    for index in range(BLOCKS):
        # {"q":"aaaa…"} cut into one-character fragments.
        body = '{"q":"' + "a" * (deltas_per_block - 8) + '"}'
        out.append(
            _frame(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": f"call-{index}",
                        "name": "lookup",
                        "input": {},
                    },
                }
            )
        )
        out.extend(
            _frame(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": ch},
                }
            )
            for ch in body
        )
        out.append(_frame({"type": "content_block_stop", "index": index}))
    out.append(
        _frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 5000},
            }
        )
    )
    out.append(_frame({"type": "message_stop"}))
    return b"".join(out), BLOCKS * (deltas_per_block - 2)


def bare(data: bytes) -> None:
    """The floor: split frames, pick the data line, json.loads it. No checks at all."""
    loads = json.loads
    for frame in data.split(b"\n\n"):
        for line in frame.split(b"\n"):
            if line.startswith(b"data: "):
                loads(line[6:])


def callgate_parse(data: bytes) -> None:
    turn = parse_stream(data)
    if len(turn.calls) != BLOCKS:
        raise SystemExit("callgate released the wrong number of calls")


def make_sdk() -> Callable[[bytes], None] | None:
    try:
        import anthropic
        import httpx2
    except ImportError:
        return None
    payload: dict[str, bytes] = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=payload["data"]
        )

    client = anthropic.Anthropic(
        api_key="bench",
        base_url="http://bench.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )

    def run(data: bytes) -> None:
        payload["data"] = data
        with client.messages.stream(
            model="bench-model", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as stream:
            message = stream.get_final_message()
        if sum(1 for b in message.content if b.type == "tool_use") != BLOCKS:
            raise SystemExit("SDK accumulated the wrong number of blocks")

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sdk = make_sdk()
    print(f"python {sys.version.split()[0]}; best of {args.repeat}")
    print(
        f"{'deltas':>7} {'bare ev/s':>11} {'sdk ev/s':>10} {'callgate ev/s':>14} "
        f"{'us/ev':>6} {'x vs sdk':>8} {'x bare':>7}"
    )
    per_event: list[float] = []
    for per_block in (500, 2000, 8000):
        data, n = build_stream(per_block)
        # Small streams get more repetitions so every figure rests on similar total time.
        reps = max(args.repeat, args.repeat * 16_000 // n)
        t_bare = best(partial(bare, data), reps)
        t_cg = best(partial(callgate_parse, data), reps)
        t_sdk = best(partial(sdk, data), max(1, reps // 2)) if sdk is not None else float("nan")
        per_event.append(t_cg / n)
        print(
            f"{n:>7} {n / t_bare:>11,.0f} {n / t_sdk:>10,.0f} {n / t_cg:>14,.0f} "
            f"{t_cg / n * 1e6:>6.2f} {t_sdk / t_cg:>8.1f} {t_cg / t_bare:>7.2f}"
        )
    print(f"callgate per-event time, 64k vs 4k deltas: {per_event[-1] / per_event[0]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
