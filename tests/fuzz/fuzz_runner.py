"""The fuzz loop: golden fixtures in, mutants through every entry point, oracles checked.

Oracle 1 (``escape``): nothing but a ``CallgateError`` subclass leaves a parser.
Oracle 2 (``release``): every call released is one the independent reading
(:mod:`fuzz_readings`) of the same input releases too (counted as a multiset).
Oracle 3 (``chunking``): feeding the same bytes in other chunks releases the same calls.

Each mutant is built from ``random.Random(f"{seed}/{protocol}/{n}")`` so any failure is
replayed by its seed and number alone. :data:`KNOWN_BUGS` lists bugs being fixed on other
branches; a failure they match is counted, not reported. Delete an entry once its fix
has merged.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from traceback import extract_tb
from typing import Any

import callgate.anthropic_messages as anthropic
import callgate.gemini_interactions as gemini
import callgate.openai_responses as openai
from callgate import CallgateError
from callgate.contracts import load_fixtures

from . import fuzz_mutations as mut
from .fuzz_readings import DONE, READERS, Call, Event, canon, decode_events, loads

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROTOCOLS = ("openai_responses", "anthropic_messages", "gemini_interactions")
PARSERS: dict[str, Any] = {
    "openai_responses": openai,
    "anthropic_messages": anthropic,
    "gemini_interactions": gemini,
}
# Streams cut at every byte offset (the smallest call-releasing fixtures first).
TRUNCATED = {
    "openai_responses": ("old_baseline_done_name", "sequence_gaps_resumed"),
    "anthropic_messages": (
        "tool_use_single",
        "max_tokens_siblings",
        "baseline_2026_07_21_tool_use",
    ),
    "gemini_interactions": ("stable_v1_call", "event_id_replay"),
}


# -- known bugs (temporary) ---------------------------------------------------------------


@dataclass(frozen=True)
class KnownBug:
    """A bug fixed on another branch. An ``escape`` entry matches the exception's type
    name AND a regex on its message; a ``release`` entry matches a predicate on the
    events that were fed. Both are tied to one protocol."""

    name: str
    item: str
    protocol: str
    oracle: str
    exc_type: str = ""
    message: str = ""
    where: str = ""  # escapes: a regex some "file:function" of the traceback must match
    events: Callable[[list[Event]], bool] | None = None


KNOWN_BUGS: tuple[KnownBug, ...] = ()  # every bug the fuzzer found is fixed


def known_bug(protocol: str, oracle: str, exc: BaseException | None, events: list[Event]) -> str:
    for bug in KNOWN_BUGS:
        if bug.protocol not in (protocol, "*") or bug.oracle != oracle:
            continue
        if oracle == "escape" and exc is not None:
            frames = [f"{Path(f.filename).name}:{f.name}" for f in extract_tb(exc.__traceback__)]
            if (
                type(exc).__name__ == bug.exc_type
                and re.search(bug.message, str(exc))
                and any(re.search(bug.where, frame) for frame in frames)
            ):
                return bug.name
        elif oracle == "release" and bug.events is not None and bug.events(events):
            return bug.name
    return ""


# -- cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    protocol: str
    name: str
    kind: str  # "stream" or "body"
    revision: str
    data: bytes
    source: str = "create"  # Gemini bodies: "create" or "get"


def load_cases(protocol: str) -> list[Case]:
    cases: list[Case] = []
    for fx in load_fixtures(FIXTURES / protocol):
        kind = "body" if fx.layer == "json-body" else "stream"
        source = (fx.expected or {}).get("source", "create")
        source = source if source in ("create", "get") else "create"
        cases.append(Case(protocol, fx.name, kind, fx.contract_revision, fx.data, source))
        if protocol == "openai_responses" and kind == "stream":
            # The final Response of a stream is a non-streaming body of the same turn.
            events = decode_events(fx.data) or []
            objs = [e for e in events if isinstance(e, dict)]
            if objs and objs[-1].get("type") == "response.completed":
                body = mut.to_text(objs[-1]["response"]).encode()
                cases.append(Case(protocol, fx.name + "#body", "body", fx.contract_revision, body))
    return cases


def frames_of(data: bytes) -> list[mut.Frame]:
    from .fuzz_readings import sse_events

    out = []
    for name, text in sse_events(data) or []:
        out.append(mut.Frame(name, DONE if text == DONE else loads(text)))
    return out


# -- running one input --------------------------------------------------------------------


@dataclass
class Failure:
    protocol: str
    case: str
    oracle: str
    path: str
    detail: str
    recipe: list[str]
    data: Any  # the bytes, event list or body that fails
    n: int = -1

    def signature(self) -> tuple[str, ...]:
        return (self.protocol, self.oracle, self.path.split(" ")[0], _shape(self.detail))

    def report(self, seed: int) -> str:
        shown = _safe_repr(self.data)
        return (
            f"[{self.oracle}] {self.protocol} {self.case} via {self.path}: {self.detail}\n"
            f"  recipe: {'; '.join(self.recipe)}\n"
            f"  replay: CALLGATE_FUZZ_SEED={seed} mutant #{self.n}\n"
            f"  input (shrunk): {shown}"
        )


def _safe_repr(data: Any, limit: int = 1500) -> str:
    try:
        shown = repr(data)
    except (RecursionError, ValueError):  # 10,000-deep values, ints over 4,300 digits
        return f"<{type(data).__name__} too deep or too large to print>"
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(shown)} chars)"


def _shape(detail: str) -> str:
    return re.sub(r"\d+", "N", detail)[:120]


Outcome = tuple[str, Any]  # ("released", Counter) | ("refused", name) | ("escaped", exc)


def _calls(turn: Any) -> collections.Counter[Call]:
    return collections.Counter((c.call_id, c.name, canon(c.arguments)) for c in turn.calls)


def _run(action: Callable[[], Any]) -> Outcome:
    try:
        return ("released", _calls(action()))
    except CallgateError as exc:
        return ("refused", type(exc).__name__)
    except Exception as exc:  # oracle 1: anything else is a finding
        return ("escaped", exc)


def feed_bytes(case: Case, chunks: list[bytes]) -> Outcome:
    def go() -> Any:
        parser = PARSERS[case.protocol].Parser(baseline=case.revision)
        for chunk in chunks:
            parser.feed_bytes(chunk)
        return parser.finish()

    return _run(go)


def feed_events(case: Case, events: list[Event]) -> Outcome:
    def go() -> Any:
        parser = PARSERS[case.protocol].Parser(baseline=case.revision)
        for event in events:
            parser.feed_event(event)
        return parser.finish()

    return _run(go)


def parse_body(case: Case, body: Any) -> Outcome:
    module = PARSERS[case.protocol]
    if case.protocol == "gemini_interactions":
        return _run(lambda: module.parse_response(body, source=case.source, baseline=case.revision))
    return _run(lambda: module.parse_response(body, baseline=case.revision))


def check(
    case: Case, path: str, outcome: Outcome, allowed: list[Call], events: list[Event]
) -> tuple[str, str] | None:
    """``(oracle, detail)`` when ``outcome`` breaks oracle 1 or 2, else ``None``."""
    kind, value = outcome
    if kind == "escaped":
        if known_bug(case.protocol, "escape", value, events):
            return ("known", known_bug(case.protocol, "escape", value, events))
        return ("escape", f"{type(value).__name__}: {str(value)[:200]}")
    if kind == "released":
        extra = value - collections.Counter(allowed)
        if extra:
            if known_bug(case.protocol, "release", None, events):
                return ("known", known_bug(case.protocol, "release", None, events))
            return ("release", f"released calls the reading does not: {sorted(extra)!r}"[:400])
    return None


@dataclass
class Stats:
    mutants: int = 0
    runs: int = 0
    failures: dict[tuple[str, ...], Failure] = field(default_factory=dict)
    known: collections.Counter[str] = field(default_factory=collections.Counter)


def _stream_inputs(protocol: str, events: list[Event]) -> list[Event]:
    """What feed_event gets: OpenAI and Anthropic events are objects only."""
    if protocol == "gemini_interactions":
        return events
    return [e for e in events if e != DONE]


def probe_stream_bytes(
    case: Case, data: bytes, chunks: list[bytes], label: str
) -> tuple[Any, Outcome]:
    """Feed ``chunks`` (the pieces of ``data``); ``(oracle hit or None, outcome)``."""
    events = decode_events(data)
    allowed = READERS[case.protocol][0](events) if events is not None else []
    outcome = feed_bytes(case, chunks)
    return check(case, f"feed_bytes {label}", outcome, allowed, events or []), outcome


def probe_stream_events(case: Case, events: list[Event]) -> Any:
    allowed = READERS[case.protocol][0](events)
    return check(case, "feed_event", feed_events(case, events), allowed, events)


def probe_body(case: Case, body: Any, path: str) -> Any:
    obj = loads(body) if isinstance(body, bytes) else body
    allowed = READERS[case.protocol][1](obj) if isinstance(obj, dict) else []
    events: list[Event] = [obj] if isinstance(obj, dict) else []
    return check(case, path, parse_body(case, body), allowed, events)
