"""Benchmark: what grounding costs callgate's generateContent parser, in one run.

Each case parses the same text stream (N one-delta chunks, then a finishReason chunk):

- plain: no grounding (the baseline of the "grounded" ratio);
- grounded: ``groundingMetadata`` with S supports of 2 chunk indices each on the last
  chunk, checked against the turn and projected into 2*S citations, also against "same
  bytes" (the object under ``citationMetadata``, kept as is): the projection's own cost;
- resent: the accumulated ``groundingMetadata`` re-sent on every chunk, the worst delivery
  the cumulative rule accepts (each chunk compares the earlier lists with the new ones),
  against "same bytes": the very object under ``citationMetadata``, which is kept
  last-wins, so the ratio is the rule's own cost beyond decoding the bigger stream.

Ratios are measured in the same process, the variants interleaved round by round.

Run: ``.venv/bin/python bench/hosted_gemini_generate_content.py`` (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from timing import best

from callgate.gemini_generate_content import parse_stream

WORD = "grounded "


def _grounding(supports: int) -> dict[str, Any]:
    size = len(WORD)
    chunks = [
        {"web": {"uri": f"https://example.com/{i}", "title": f"site{i}.com"}}
        for i in range(supports)
    ]
    return {
        "webSearchQueries": ["q1", "q2"],
        "searchEntryPoint": {"renderedContent": "<div>q1 q2</div>"},
        "groundingChunks": chunks,
        "groundingSupports": [
            {
                "segment": {
                    "startIndex": i * size,
                    "endIndex": (i + 1) * size - 1,
                    "text": WORD[:-1],
                },
                "groundingChunkIndices": [i, (i + 1) % supports],
            }
            for i in range(supports)
        ],
    }


def _frame(parts: list[Any], extra: dict[str, Any] | None, finish: bool) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    candidate.update(extra or {})
    chunk = {"candidates": [candidate], "modelVersion": "m", "responseId": "r"}
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def build(chunks: int, supports: int, mode: str) -> bytes:
    key = "citationMetadata" if mode in ("same-bytes", "same-last") else "groundingMetadata"
    grounding = {key: _grounding(supports)}
    every = grounding if mode in ("resent", "same-bytes") else None
    out = [_frame([{"text": WORD}], every, False) for _ in range(chunks - 1)]
    out.append(_frame([{"text": WORD}], grounding if mode != "plain" else None, True))
    return b"".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(
        "| chunks | supports | plain | grounded / plain | grounded / same bytes "
        "| resent / same bytes | citations |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for chunks, supports in ((1000, 10), (1000, 100), (4000, 100), (4000, 1000)):
        modes = ["plain", "grounded", "same-last"]
        if chunks * supports <= 400_000:  # the re-sent stream grows as chunks x supports
            modes += ["resent", "same-bytes"]
        streams = {mode: build(chunks, supports, mode) for mode in modes}
        if len(parse_stream(streams["grounded"]).citations) != 2 * supports:
            raise SystemExit("the grounded stream did not project its citations")
        times = {mode: float("inf") for mode in streams}
        for _ in range(args.repeat):  # interleaved: the machine's load swings alike
            for mode, data in streams.items():
                times[mode] = min(times[mode], best(lambda d=data: parse_stream(d), 1))
        plain = times["plain"]
        grounded = f"{times['grounded'] / plain:.2f}x"
        projected = f"{times['grounded'] / times['same-last']:.2f}x"
        resent = f"{times['resent'] / times['same-bytes']:.2f}x" if "resent" in times else "—"
        print(
            f"| {chunks:,} | {supports:,} | {plain * 1e3:.1f} ms | {grounded} | {projected} "
            f"| {resent} | "
            f"{2 * supports:,} |"
        )


if __name__ == "__main__":
    main()
