"""What loads_strict's checks cost over json.loads, measured in one run.

Part 1: two everyday events, loads_strict against json.loads on the same bytes.
Part 2: hostile documents of 64 KiB, 1 MiB and 16 MiB. Each is timed through
loads_strict (accepted or refused, whichever it does) and compared with json.loads on a
VALID document of the same size: the same shape repaired ("same shape"), and an
everyday response body of many tool calls ("typical"). A linear pre-check keeps both
ratios flat across sizes; the old regex pre-check took 1.8 s on 32 KiB of the first one.

Run: PYTHONPATH=src .venv/bin/python bench/strict_json.py [--quick]
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys
import time
import timeit
from collections.abc import Callable

from callgate import CallgateError, loads_strict

DELTA = (
    b'{"type":"response.function_call_arguments.delta","sequence_number":12345,'
    b'"item_id":"fc_abc","output_index":3,"delta":"a","obfuscation":"xyz"}'
)
TERMINAL = json.dumps(
    {
        "type": "response.completed",
        "sequence_number": 9,
        "response": {
            "id": "resp_1",
            "status": "completed",
            "output": [
                {
                    "type": "function_call",
                    "id": f"fc_{i}",
                    "call_id": f"call_{i}",
                    "name": "lookup",
                    "arguments": json.dumps({"q": "x" * 2000, "n": i}),
                    "status": "completed",
                }
                for i in range(8)
            ],
            "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
        },
    }
).encode()

KiB = 1024


def measure(doc: bytes, number: int) -> tuple[float, float]:
    best_plain = min(timeit.repeat(lambda: json.loads(doc), number=number, repeat=5))
    best_strict = min(timeit.repeat(lambda: loads_strict(doc), number=number, repeat=5))
    return best_plain / number, best_strict / number


def repeated(head: str, unit: str, tail: str, size: int, sep: str = ",") -> bytes:
    count = max(1, (size - len(head) - len(tail)) // (len(unit) + len(sep)))
    return (head + sep.join([unit] * count) + tail).encode()


def typical(size: int) -> bytes:
    """An everyday response body: many tool calls with JSON-in-a-string arguments."""
    call = {
        "type": "function_call",
        "id": "fc_0",
        "call_id": "call_0",
        "name": "lookup",
        "arguments": json.dumps({"q": "find the nearest open pharmacy " * 4, "n": 7}),
        "status": "completed",
    }
    return repeated('{"output":[', json.dumps(call), "]}", size)


def escaped_quotes(size: int, depth: int = 65) -> tuple[bytes, bytes]:
    """The issue's shape: brackets, then an unterminated string of escaped quotes."""
    run = '\\"' * ((size - 140) // 2)
    return ("[" * depth + '"' + run).encode(), ("[" * 64 + '"' + run + '"' + "]" * 64).encode()


def same(doc: bytes) -> tuple[bytes, bytes]:
    return doc, doc


SHAPES: dict[str, Callable[[int], tuple[bytes, bytes]]] = {
    'unterminated string of \\" after 65 [': escaped_quotes,
    'unterminated string of \\" after 64 [': lambda size: escaped_quotes(size, 64),
    "bracket bomb [[[[": lambda size: (b"[" * size, repeated("[", "[" * 63 + "]" * 63, "]", size)),
    "deep legal nesting (64)": lambda size: same(repeated("[", "[" * 63 + "]" * 63, "]", size)),
    "many empty arrays": lambda size: same(repeated("[", "[]", "]", size)),
    "many short strings": lambda size: same(repeated("[", '""', "]", size)),
    "short strings of brackets": lambda size: same(repeated("[", '"[{"', "]", size)),
    'escaped \\\\ and \\" run': lambda size: same(repeated('["', '\\\\\\"', '"]', size, "")),
    "surrogate pair escapes": lambda size: same(repeated('["', "\\ud83d\\ude00", '"]', size, "")),
    "pairs, then a lone surrogate": lambda size: (
        repeated('["', "\\ud83d\\ude00", '\\ud800"]', size, ""),
        repeated('["', "\\ud83d\\ude00", '"]', size, ""),
    ),
    "many empty objects": lambda size: same(repeated("[", "{}", "]", size)),
    "many small ints": lambda size: same(repeated("[", "1", "]", size)),
}


def best(fn: Callable[[bytes], object], doc: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with contextlib.suppress(CallgateError):
            fn(doc)
        times.append(time.perf_counter() - start)
    return min(times)


def outcome(doc: bytes) -> str:
    try:
        loads_strict(doc)
    except CallgateError as exc:
        return type(exc).__name__
    return "accepted"


def main() -> None:
    quick = "--quick" in sys.argv
    print(f"python {platform.python_version()} on {platform.machine()}")
    for label, doc, number in (("delta event", DELTA, 50_000), ("terminal", TERMINAL, 2_000)):
        plain, strict = measure(doc, number)
        print(
            f"{label:12} {len(doc):6} B  json.loads {plain * 1e6:7.2f} us"
            f"  loads_strict {strict * 1e6:7.2f} us  ratio {strict / plain:.2f}x"
        )
    sizes = (64 * KiB, 1024 * KiB) if quick else (64 * KiB, 1024 * KiB, 16 * 1024 * KiB)
    print("\nhostile document: loads_strict / json.loads(valid, same size)")
    print(f"{'shape':40} {'size':>6} {'result':>19} {'same shape':>10} {'typical':>8}")
    worst = 0.0
    for size in sizes:
        repeat = 7 if size <= 1024 * KiB else 3
        reference = best(json.loads, typical(size), repeat)
        for name, make in SHAPES.items():
            hostile, valid = make(size)
            strict = best(loads_strict, hostile, repeat)
            plain = best(json.loads, valid, repeat)
            worst = max(worst, strict / plain)
            print(
                f"{name:40} {size // KiB:5}K {outcome(hostile):>19}"
                f" {strict / plain:9.2f}x {strict / reference:7.2f}x"
            )
    print(f"\nworst same-shape ratio: {worst:.2f}x")


if __name__ == "__main__":
    main()
