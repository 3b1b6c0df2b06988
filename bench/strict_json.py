"""What loads_strict's checks cost over json.loads, measured in one run.

Run: .venv/bin/python bench/strict_json.py
"""

from __future__ import annotations

import json
import platform
import timeit

from callgate import loads_strict

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


def measure(doc: bytes, number: int) -> tuple[float, float]:
    best_plain = min(timeit.repeat(lambda: json.loads(doc), number=number, repeat=5))
    best_strict = min(timeit.repeat(lambda: loads_strict(doc), number=number, repeat=5))
    return best_plain / number, best_strict / number


def main() -> None:
    print(f"python {platform.python_version()} on {platform.machine()}")
    for label, doc, number in (("delta event", DELTA, 50_000), ("terminal", TERMINAL, 2_000)):
        plain, strict = measure(doc, number)
        print(
            f"{label:12} {len(doc):6} B  json.loads {plain * 1e6:7.2f} us"
            f"  loads_strict {strict * 1e6:7.2f} us  ratio {strict / plain:.2f}x"
        )


if __name__ == "__main__":
    main()
