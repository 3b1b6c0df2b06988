"""Benchmark: what the script schema adds to loading a script.

``Script.from_dict`` on a two-turn tool loop (the framework examples' script) and on a
1,000-turn script, with the schema check and with it switched off (the loader's own
checks alone), interleaved in one process; best of ``--repeat`` rounds, reported as
microseconds per load and as the ratio schema+loader / loader alone.

Run: ``.venv/bin/python bench/script_load.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from callgate.mock import Script, _script

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "frameworks" / "weather_openai.json"


def _per_load(doc: Any, loads: int) -> float:
    start = time.perf_counter()
    for _ in range(loads):
        Script.from_dict(doc)
    return (time.perf_counter() - start) / loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    small = json.loads(EXAMPLE.read_text())
    small.pop("$schema")
    docs = {"2 turns": (small, 2000), "1000 turns": ({"turns": small["turns"] * 500}, 20)}
    checked = _script._schema.check_document
    for name, (doc, loads) in docs.items():
        with_schema, alone = [], []
        for _ in range(args.repeat):
            with_schema.append(_per_load(doc, loads))
            _script._schema.check_document = lambda document, path, error: document
            try:
                alone.append(_per_load(doc, loads))
            finally:
                _script._schema.check_document = checked
        best, base = min(with_schema), min(alone)
        print(f"{name}: schema + loader {best * 1e6:.0f} us, loader alone {base * 1e6:.0f} us, "
              f"{best / base:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
