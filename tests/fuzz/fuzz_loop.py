"""The bounded, seeded fuzz loop over one protocol, with shrinking of what fails.

``fuzz(protocol, seconds=..., max_mutants=..., seed=...)`` first cuts a few streams at
every byte offset (in a strided order, so a short run still spreads over the file), then
draws random mutants until the time or the count runs out.
"""

from __future__ import annotations

import copy
import math
import random
import time
from dataclasses import dataclass
from typing import Any

from . import fuzz_mutations as mut
from .fuzz_readings import decode_events, loads
from .fuzz_runner import (
    TRUNCATED,
    Case,
    Failure,
    Stats,
    _stream_inputs,
    frames_of,
    load_cases,
    probe_body,
    probe_stream_bytes,
    probe_stream_events,
)


class Corpus:
    """A protocol's cases, decoded once: frames per stream, donors, the key vocabulary."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        cases = load_cases(protocol)
        self.streams = [c for c in cases if c.kind == "stream"]
        self.bodies = [c for c in cases if c.kind == "body"]
        self.frames = {c.name: frames_of(c.data) for c in self.streams}
        self.donors = [f for fs in self.frames.values() for f in fs]
        trees: list[Any] = [f.tree for f in self.donors]
        trees += [loads(c.data) for c in self.bodies]
        self.vocab = mut.build_vocab(trees)


# -- drawing one mutant -------------------------------------------------------------------


@dataclass
class Mutant:
    """One input: ``data`` is its wire bytes, ``python`` the decoded objects when they
    were built directly (JSON-level mutants: they may hold non-JSON Python values)."""

    case: Case
    data: bytes
    python: Any
    recipe: list[str]
    n: int


def _bytes_edits(rng: random.Random, data: bytes, most: int, recipe: list[str]) -> bytes:
    for _ in range(rng.randint(1, most)):
        data, what = mut.mutate_bytes(rng, data)
        recipe.append(what)
    return data


def draw(corpus: Corpus, rng: random.Random, n: int) -> Mutant:
    roll = rng.random()
    if corpus.bodies and roll < 0.15:
        case = rng.choice(corpus.bodies)
        recipe = [case.name]
        if rng.random() < 0.4:
            return Mutant(case, _bytes_edits(rng, case.data, 2, recipe), None, recipe, n)
        tree = loads(case.data)
        for _ in range(rng.randint(1, 3)):
            recipe.append(mut.mutate_json(rng, tree, corpus.vocab))
        data = mut.to_text(tree).encode("utf-8", "surrogatepass")
        return Mutant(case, data, mut.to_python(tree), recipe, n)
    case = rng.choice(corpus.streams)
    recipe = [case.name]
    if roll < 0.45:
        return Mutant(case, _bytes_edits(rng, case.data, 3, recipe), None, recipe, n)
    frames = copy.deepcopy(corpus.frames[case.name])
    for _ in range(rng.randint(1, 3)):
        recipe.append(mut.mutate_frames(rng, frames, corpus.vocab, corpus.donors))
    data = mut.encode_frames(frames)
    extra = rng.random()
    if extra < 0.3:  # the same events, spelled differently
        data, what = (mut.line_end_variant if extra < 0.15 else mut.framing_variant)(rng, data)
        recipe.append(what)
    elif extra < 0.4:
        data, what = mut.mutate_bytes(rng, data)
        recipe.append(what + " (bytes path only)")
    return Mutant(case, data, [f.python() for f in frames], recipe, n)


# -- running and recording ----------------------------------------------------------------


def _record(stats: Stats, m: Mutant, hit: Any, path: str, data: Any) -> None:
    if hit is None:
        return
    oracle, detail = hit
    if oracle == "known":
        stats.known[detail] += 1
        return
    failure = Failure(m.case.protocol, m.case.name, oracle, path, detail, m.recipe, data, m.n)
    key = failure.signature()
    if key not in stats.failures:
        failure.data = shrink(m.case, failure)
        stats.failures[key] = failure


def run_mutant(stats: Stats, corpus: Corpus, rng: random.Random, n: int) -> None:
    m = draw(corpus, rng, n)
    case = m.case
    stats.mutants += 1
    if case.kind == "body":
        if case.protocol != "openai_responses":  # OpenAI's parse_response takes a mapping
            stats.runs += 1
            path = "parse_response(bytes)"
            _record(stats, m, probe_body(case, m.data, path), path, m.data)
        obj = m.python if m.python is not None else loads(m.data)
        if isinstance(obj, dict):
            stats.runs += 1
            path = "parse_response(dict)"
            _record(stats, m, probe_body(case, obj, path), path, obj)
        return
    whole: Any = None
    for label, chunks in mut.chunkings(rng, m.data):
        stats.runs += 1
        hit, outcome = probe_stream_bytes(case, m.data, chunks, label)
        _record(stats, m, hit, f"feed_bytes {label}", m.data)
        if whole is None:
            whole = outcome
        elif _released(outcome) != _released(whole):
            got, want = _released(outcome), _released(whole)
            hit = ("chunking", f"{label} released {got!r}, whole {want!r}"[:400])
            _record(stats, m, hit, f"feed_bytes {label}", m.data)
    events = m.python if m.python is not None else decode_events(m.data)
    if events is not None:
        fed = _stream_inputs(case.protocol, events)
        stats.runs += 1
        _record(stats, m, probe_stream_events(case, fed), "feed_event", fed)


def _released(outcome: Any) -> Any:
    return outcome[1] if outcome[0] == "released" else None


def run_truncations(stats: Stats, corpus: Corpus, deadline: float, budget: int) -> None:
    cases = [c for c in corpus.streams if c.name in TRUNCATED[corpus.protocol]]
    for case in cases:
        n = len(case.data)
        stride = next(s for s in range(97, n + 98) if math.gcd(s, n + 1) == 1)
        # k * stride mod (n + 1) visits every offset once, spread out from the start.
        for k in range(n + 1):
            if time.monotonic() > deadline or stats.runs >= budget:
                return
            offset = (k * stride) % (n + 1)
            data = case.data[:offset]
            stats.mutants += 1
            stats.runs += 1
            hit, _ = probe_stream_bytes(case, data, [data], "whole")
            m = Mutant(case, data, None, [case.name, f"truncate at {offset}"], -1)
            _record(stats, m, hit, "feed_bytes whole", data)


# -- shrinking ----------------------------------------------------------------------------


def shrink(case: Case, failure: Failure) -> Any:
    """Greedy removal of events (streams), lines or keys while the same failure holds."""

    def same(candidate: Any) -> bool:
        return _fails_alike(case, failure, candidate)

    data = failure.data
    try:
        if isinstance(data, bytes) and case.kind == "stream":
            data = _shrink_seq(data.split(b"\n\n"), lambda parts: b"\n\n".join(parts), same)
            data = _shrink_seq(data.split(b"\n"), lambda parts: b"\n".join(parts), same)
        elif isinstance(data, list):
            data = _shrink_seq(data, list, same)
        elif isinstance(data, dict):
            data = _shrink_dict(data, same)
    except RecursionError:  # pragma: no cover - shrinking is best effort
        pass
    return data


def _shrink_seq(parts: list[Any], join: Any, same: Any) -> Any:
    i = 0
    while i < len(parts):
        trial = parts[:i] + parts[i + 1 :]
        if same(join(trial)):
            parts = trial
        else:
            i += 1
    return join(parts)


def _shrink_dict(obj: dict[str, Any], same: Any) -> dict[str, Any]:
    for key in list(obj):
        trial = {k: v for k, v in obj.items() if k != key}
        if same(trial):
            obj = trial
    return obj


def _fails_alike(case: Case, failure: Failure, candidate: Any) -> bool:
    path = failure.path
    if path.startswith("feed_bytes"):
        hit, _ = probe_stream_bytes(case, candidate, [candidate], "whole")
        if failure.oracle == "chunking":
            return False
    elif path == "feed_event":
        hit = probe_stream_events(case, candidate)
    else:
        hit = probe_body(case, candidate, path)
    if hit is None or hit[0] != failure.oracle:
        return False
    return hit[1].split(":")[0] == failure.detail.split(":")[0]


# -- the loop -----------------------------------------------------------------------------


def fuzz(protocol: str, *, seconds: float, max_mutants: int, seed: int) -> tuple[Stats, float]:
    corpus = Corpus(protocol)
    stats = Stats()
    start = time.monotonic()
    deadline = start + seconds
    run_truncations(stats, corpus, start + seconds * 0.25, max_mutants // 4)
    n = 0
    while stats.mutants < max_mutants and time.monotonic() < deadline:
        run_mutant(stats, corpus, random.Random(f"{seed}/{protocol}/{n}"), n)
        n += 1
    return stats, time.monotonic() - start


def replay(protocol: str, seed: int, n: int) -> Stats:
    """Run mutant ``n`` of ``seed`` alone (for debugging a reported failure)."""
    stats = Stats()
    run_mutant(stats, Corpus(protocol), random.Random(f"{seed}/{protocol}/{n}"), n)
    return stats
