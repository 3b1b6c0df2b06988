"""Benchmark: what hosted steps and citations cost the Gemini Interactions parser.

Three streams with the same number of events, parsed in one process, interleaved, best of
``--repeat``:

- ``plain``: one ``model_output`` fed by text deltas (the baseline);
- ``hosted``: ``--pairs`` google_search call/result pairs (payload in ``step.start``) and
  a text with ``--pairs`` url_citation annotations, padded with text deltas to the same
  event count;
- ``hosted-deltas``: the same, each hosted payload in one delta after a bare start.

Reported: each stream's time as a ratio to ``plain``, and the share of the hosted parse
spent in the projection (``_hosted.project`` on the finished steps).

Run: ``.venv/bin/python bench/gemini_hosted.py`` (a few seconds).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from timing import best

from callgate.gemini_interactions import parse_stream
from callgate.gemini_interactions._hosted import project

IID = "bench"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events
    )


def _stream(pairs: int, total: int, *, hosted: bool, as_deltas: bool) -> bytes:
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created", "interaction": {"id": IID, "status": "in_progress"}}
    ]
    index = 0
    for n in range(pairs if hosted else 0):
        call = {"type": "google_search_call", "id": f"g{n}", "arguments": {"queries": ["q"]}}
        result = {"type": "google_search_result", "call_id": f"g{n}", "result": [{}]}
        for step in (call, result):
            if as_deltas:
                ident = "id" if "id" in step else "call_id"
                bare = {"type": step["type"], ident: step[ident]}
                rest = {k: v for k, v in step.items() if k not in ("type", ident)}
                events.append({"event_type": "step.start", "index": index, "step": bare})
                delta = {"type": step["type"], **rest}
                events.append({"event_type": "step.delta", "index": index, "delta": delta})
            else:
                events.append({"event_type": "step.start", "index": index, "step": step})
            events.append({"event_type": "step.stop", "index": index})
            index += 1
    events.append({"event_type": "step.start", "index": index, "step": {"type": "model_output"}})
    annotations = [
        {"type": "url_citation", "url": f"https://e/{n}", "start_index": 0, "end_index": 1}
        for n in range(pairs if hosted else 0)
    ]
    tail = 3 if hosted else 2
    while len(events) < total - tail:
        events.append(
            {"event_type": "step.delta", "index": index, "delta": {"type": "text", "text": "x"}}
        )
    if hosted:
        delta = {"type": "text_annotation_delta", "annotations": annotations}
        events.append({"event_type": "step.delta", "index": index, "delta": delta})
    events.append({"event_type": "step.stop", "index": index})
    completed = {"id": IID, "status": "completed"}
    events.append({"event_type": "interaction.completed", "interaction": completed})
    return _sse(events)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    streams = {
        "plain": _stream(args.pairs, args.events, hosted=False, as_deltas=False),
        "hosted": _stream(args.pairs, args.events, hosted=True, as_deltas=False),
        "hosted-deltas": _stream(args.pairs, args.events, hosted=True, as_deltas=True),
    }
    times = {
        name: best(lambda d=data: parse_stream(d), args.repeat) for name, data in streams.items()
    }
    turn = parse_stream(streams["hosted"])
    if (len(turn.hosted_calls), len(turn.citations)) != (args.pairs, args.pairs):
        raise SystemExit("the hosted stream did not project every pair and citation")
    projection = best(lambda: project(turn.steps), args.repeat)
    print(f"{args.events} events, {args.pairs} hosted pairs and citations, best of {args.repeat}")
    for name, seconds in times.items():
        print(f"  {name:14s} {seconds * 1e3:8.2f} ms  {seconds / times['plain']:.2f}x plain")
    print(
        f"  projection     {projection * 1e3:8.2f} ms  {projection / times['hosted']:.1%} of hosted"
    )


if __name__ == "__main__":
    main()
