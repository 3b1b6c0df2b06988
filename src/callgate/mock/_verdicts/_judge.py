"""The judge: verdicts computed from each journal entry as it closes, per test id.

:class:`Verdicts` is the journal's judge (``Journal.judge``). Each closed entry of a
provider route is judged once against what the test id's earlier entries left in its
:class:`_Lane` (the cut turns and their calls, the last failed attempt of each request);
nothing rescans the journal. A continuation's previous request (for its controls) is read
from the state's stored objects. A test id without history is judged without a lane: an
answer that failed nothing leaves nothing to remember (the fast path). Its state is bounded like
the journal's: a lane keeps at most ``_MAX_CALLS`` calls, ``_MAX_CUT`` cut turns and
``_MAX_VERDICTS`` verdicts, and at most ``max_lanes`` test ids are kept (the least
recently judged is forgotten first).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .._journal import JournalEntry
from .._providers import PROTOCOLS, provider
from ._catalogue import (
    CATALOGUE,
    NO_BACKOFF_S,
    NON_RETRYABLE,
    RETRY_AFTER_SLACK_S,
    STORM_RETRIES,
    Verdict,
)

__all__ = ["Verdicts"]

_MAX_CALLS = 10_000
_MAX_CUT = 32
_MAX_VERDICTS = 1000
_MAX_LANES = 1024
# Request fields that a continuation by previous id does not inherit.
CONTROLS = ("instructions", "system_instruction", "tools")
# Replayed output: items (steps) a model emitted, in a request's ``input``.
_OUTPUT_TYPES = frozenset({"function_call", "reasoning", "model_output", "thought"})
_OUTPUT_ROLES = frozenset({"assistant", "model"})
_FAILED = "failed"  # an attempt whose answer was an HTTP error or a cut turn


@dataclasses.dataclass(slots=True)
class _Turn:
    """A served turn with calls, as the gate decided on it."""

    seq: int
    id: str
    calls: list[str]
    released: bool
    reason: str | None
    fault: Any
    partial: list[str]
    body: Any  # the request that got it (a re-post is compared with it)
    resumable: bool = False  # cut while stored and resumable by id
    answered: set[str] = dataclasses.field(default_factory=set)
    twin: _Turn | None = None  # the turn the same request got again after this one was cut


@dataclasses.dataclass(slots=True)
class _Attempt:
    """The last request on one route of one conversation, and how it was answered."""

    seq: int
    body: Any
    status: int | None
    ended: float
    retry_after: float | None
    failed: bool
    retries: int = 0  # sends of this body after failures, in a row


class _Lane:
    """What the judge remembers of one test id."""

    __slots__ = ("attempts", "by_name", "calls", "cut", "verdicts")

    def __init__(self) -> None:
        self.calls: dict[str, _Turn] = {}
        self.by_name: dict[str, str] = {}  # function name -> its newest call id
        self.cut: collections.deque[_Turn] = collections.deque(maxlen=_MAX_CUT)
        self.attempts: dict[tuple[Any, ...], _Attempt] = {}
        self.verdicts: list[Verdict] = []


Listener = Callable[[Verdict], None]


class Verdicts:
    """The verdicts of every test id, judged as the journal's entries close."""

    def __init__(self, *, max_lanes: int = _MAX_LANES) -> None:
        self.enabled = True
        self.max_lanes = max_lanes
        # The timing thresholds (docs/verdicts.md); a test may widen them to stay exact.
        self.no_backoff_s = NO_BACKOFF_S
        self._lanes: collections.OrderedDict[str, _Lane] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        # (test id, protocol, stored turn id) -> the request that made that turn, if kept
        # (the state's stored objects: MockState sets it). For controls_not_resent.
        self.previous_request: Callable[[str, str, str], Mapping[str, Any] | None] | None = None

    def listen(self, listener: Listener | None) -> None:
        """Call ``listener(verdict)`` for each new verdict (``callgate serve`` prints them).
        It must not raise."""
        self._listener = listener

    # -- reading ------------------------------------------------------------------------

    def list(self, test_id: str | None = None) -> list[Verdict]:
        with self._lock:
            if test_id is not None:
                lane = self._lanes.get(test_id)
                return list(lane.verdicts) if lane is not None else []
            return [v for lane in self._lanes.values() for v in lane.verdicts]

    def clear(self, test_id: str | None = None) -> None:
        with self._lock:
            if test_id is None:
                self._lanes.clear()
            else:
                self._lanes.pop(test_id, None)

    # -- judging ------------------------------------------------------------------------

    def __call__(self, entry: JournalEntry) -> None:
        """Judge one closed entry (the journal's judge hook)."""
        protocol = entry.protocol
        if not self.enabled or protocol is None:
            return
        body = entry.body
        key = _PREVIOUS.get(protocol)
        previous = body.get(key) if key is not None and type(body) is dict else None
        if previous is None and entry.test_id not in self._lanes and _quiet(entry):
            return  # no history to judge it against, nothing it leaves to remember
        declared = None
        if isinstance(previous, str) and self.previous_request is not None:
            # Outside the judge's lock: the state's lock is taken first everywhere else.
            request = self.previous_request(entry.test_id, protocol, previous)
            declared = None if request is None else tuple(k for k in CONTROLS if request.get(k))
        found: list[Verdict] = []
        with self._lock:
            lane = self._lanes.get(entry.test_id)
            if lane is None:
                lane = self._lanes[entry.test_id] = _Lane()
                if len(self._lanes) > self.max_lanes:
                    self._lanes.popitem(last=False)
            else:
                self._lanes.move_to_end(entry.test_id)
            _Judging(lane, entry, found, self.no_backoff_s, declared).run()
            room = _MAX_VERDICTS - len(lane.verdicts)
            lane.verdicts.extend(found[: max(room, 0)])
        listener = self._listener
        if listener is not None:
            for verdict in found:
                listener(verdict)


_PREVIOUS = {p: provider(p).previous_key for p in PROTOCOLS}


def _quiet(entry: JournalEntry) -> bool:
    """An answer that failed nothing (a success, and a turn the gate releases, if any):
    for a test id with no history, the judge has nothing to say or remember about it."""
    status = entry.status
    if status is None or status >= 400:
        return False
    facts = entry.facts
    if facts is None:
        return True
    turn = facts.get("turn")
    return turn is not None and len(facts) == 1 and turn.get("released", True) is True


class _Judging:
    """One entry judged against its lane (under the judge's lock)."""

    __slots__ = ("declared", "entry", "facts", "found", "lane", "no_backoff_s")

    def __init__(
        self,
        lane: _Lane,
        entry: JournalEntry,
        found: list[Verdict],
        no_backoff_s: float,
        declared: tuple[str, ...] | None,
    ) -> None:
        self.no_backoff_s = no_backoff_s
        self.declared = declared
        self.lane = lane
        self.entry = entry
        self.found = found
        self.facts: Mapping[str, Any] = entry.facts or {}

    def say(self, verdict_id: str, message: str, **evidence: Any) -> None:
        entry = self.entry
        evidence = {"request": entry.seq, **evidence}
        rule = CATALOGUE[verdict_id]
        self.found.append(
            Verdict(verdict_id, rule.severity, entry.test_id, entry.seq, entry.started,
                    message, evidence)
        )  # fmt: skip

    def run(self) -> None:
        entry = self.entry
        body = entry.body
        if entry.method == "GET" and entry.outcome == "state" and entry.status == 200:
            self._retrieved()
            return
        if entry.method != "POST" or not isinstance(body, dict):
            return
        self._attempt(body)
        self._results(body)
        self._continuation(body)
        check = self.facts.get("check")
        if check is not None:
            self._native(check)
        turn = self.facts.get("turn")
        if turn is not None:
            self._served(turn, body)

    # -- the calls a request answers ------------------------------------------------------

    def _results(self, body: dict[str, Any]) -> None:
        if not self.lane.calls:
            return  # no call it could answer is remembered
        try:
            results = provider(self.entry.protocol or "").view(body).results
        except (TypeError, ValueError, AttributeError, KeyError):
            return
        lane = self.lane
        for result in results:
            call_id = result.call_id
            if not isinstance(call_id, str):  # generateContent answers by name
                name = result.name
                call_id = lane.by_name.get(name) if isinstance(name, str) else None
                if call_id is None:
                    continue
            turn = lane.calls.get(call_id)
            if turn is None or call_id in turn.answered:
                continue
            turn.answered.add(call_id)
            if not turn.released:
                self._unreleased(turn, call_id)
            twin = turn.twin
            if twin is not None and twin.answered and turn.answered:
                turn.twin = twin.twin = None  # said once per pair
                self.say(
                    "duplicate_execution_suspected",
                    f"results came for calls of turn {twin.id} (cut, request "
                    f"#{twin.seq}) and of turn {turn.id} (the same request again, "
                    f"#{turn.seq})",
                    cut_turn=twin.id, cut_calls=twin.calls, cut_request=twin.seq,
                    repost_turn=turn.id, repost_calls=turn.calls, repost_request=turn.seq,
                    answered=sorted(twin.answered | turn.answered),
                )  # fmt: skip

    def _unreleased(self, turn: _Turn, call_id: str) -> None:
        fault = turn.fault
        what = fault.get("type") if isinstance(fault, dict) else None
        evidence = {"call_id": call_id, "turn": turn.id, "served_by": turn.seq,
                    "fault": fault, "gate": turn.reason}  # fmt: skip
        if call_id in turn.partial:
            self.say(
                "executed_partial_arguments",
                f"a result answers call {call_id}, whose arguments the {what} fault cut "
                f"(turn {turn.id}, request #{turn.seq})",
                **evidence,
            )
            return
        ended = f"the {what} fault" if what else (turn.reason or "its terminal")
        self.say(
            "executed_unreleased_call",
            f"a result answers call {call_id} of turn {turn.id} (request #{turn.seq}), "
            f"which the gate does not release: {ended}",
            **evidence,
        )

    # -- a served turn ----------------------------------------------------------------------

    def _served(self, facts: Mapping[str, Any], body: dict[str, Any]) -> None:
        lane, entry = self.lane, self.entry
        turn_id = facts.get("id")
        calls = facts.get("calls") or []
        released = facts.get("released", True)
        if released and (not calls or not lane.cut):
            return  # only a cut turn, or one that may be a cut turn's twin, is remembered
        turn = _Turn(entry.seq, turn_id or "", list(calls), bool(facts.get("released")),
                     facts.get("reason"), facts.get("fault"), list(facts.get("partial") or ()),
                     body, bool(facts.get("resumable")))  # fmt: skip
        for cut in lane.cut:
            if cut.body == body and cut.twin is None and cut.calls != turn.calls:
                cut.twin, turn.twin = turn, cut
                break
        if len(lane.calls) + len(calls) <= _MAX_CALLS:
            for call_id, name in zip(calls, facts.get("names") or (), strict=False):
                lane.calls[call_id] = turn
                lane.by_name[name] = call_id
        if not turn.released:
            lane.cut.append(turn)

    def _retrieved(self) -> None:
        """A stored turn read whole (``GET``, a resumed stream) releases its calls."""
        lane = self.lane
        for part in self.entry.path.split("/"):
            for turn in lane.cut:
                if part and turn.id == part:
                    turn.released = True

    # -- retries ----------------------------------------------------------------------------

    def _attempt(self, body: dict[str, Any]) -> None:
        entry, lane = self.entry, self.lane
        key = (entry.conversation, entry.path)
        last = lane.attempts.get(key)
        facts = self.facts
        turn = facts.get("turn")
        status = entry.status
        failed = (status is not None and status >= 400) or (
            turn is not None and not turn.get("released", True)
        )
        retries = 0
        if last is not None and last.failed and last.body == body:
            retries = last.retries + 1
        if failed:  # remembered: the next attempt may retry it
            ended = entry.started + (entry.duration_ms or 0) / 1000
            lane.attempts[key] = _Attempt(
                entry.seq, body, status, ended, facts.get("retry_after"), failed, retries
            )
        elif last is not None:
            del lane.attempts[key]
        if last is None or not retries:
            return
        gap = entry.started - last.ended
        evidence = {"previous": last.seq, "previous_status": last.status,
                    "gap_s": round(gap, 3)}  # fmt: skip
        if last.status in NON_RETRYABLE:
            self.say(
                "retried_non_retryable",
                f"the request answered {last.status} (#{last.seq}) was sent again",
                **evidence,
            )
        elif last.retry_after is not None:
            if gap + RETRY_AFTER_SLACK_S < last.retry_after:
                self.say(
                    "retry_after_ignored",
                    f"sent again {gap:.3f} s after #{last.seq} asked to wait "
                    f"{last.retry_after:g} s",
                    retry_after_s=last.retry_after, **evidence,
                )  # fmt: skip
        elif last.status is not None and last.status >= 400 and gap < self.no_backoff_s:
            self.say(
                "no_backoff",
                f"sent again {gap * 1000:.0f} ms after its failure (#{last.seq})",
                **evidence,
            )
        if retries == STORM_RETRIES:
            self.say(
                "retry_storm",
                f"the same request was sent again {retries} times in a row after failures",
                retries=retries, **evidence,
            )  # fmt: skip
        cut = _cut_turn(lane, last.seq)
        if cut is not None and cut.resumable:
            self.say(
                "reposted_instead_of_resuming",
                f"turn {cut.id} (request #{cut.seq}) was cut while stored and resumable; "
                "the request was posted again instead of resumed",
                cut_turn=cut.id, fault=cut.fault, **evidence,
            )  # fmt: skip

    # -- continuations by previous id ----------------------------------------------------------

    def _continuation(self, body: dict[str, Any]) -> None:
        key = provider(self.entry.protocol or "").previous_key
        previous = body.get(key) if key is not None else None
        if not isinstance(previous, str) or not previous:
            return
        replayed = _replayed_output(body.get("input"))
        if replayed:
            self.say(
                "history_and_previous_id",
                f"the request names {key}={previous} and replays its output too "
                f"({', '.join(replayed)})",
                previous_id=previous, replayed=replayed,
            )  # fmt: skip
        declared = self.declared
        if declared:
            missing = [k for k in declared if not body.get(k)]
            if missing:
                self.say(
                    "controls_not_resent",
                    f"a continuation of {previous} without {', '.join(missing)}, which its "
                    "previous request declared (not inherited)",
                    previous_id=previous, missing=missing,
                )  # fmt: skip

    def _native(self, check: str) -> None:
        verdict_id = native_verdict(check)
        message = _error_message(self.entry.response) or "refused"
        self.say(verdict_id, f"the provider refused the request ({check}): {message}",
                 check=check, status=self.entry.status)  # fmt: skip


def _cut_turn(lane: _Lane, seq: int) -> _Turn | None:
    """The cut turn request ``seq`` got, if it is still remembered."""
    for turn in reversed(lane.cut):
        if turn.seq == seq:
            return turn
    return None


def _replayed_output(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    found: list[str] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in _OUTPUT_TYPES or (item.get("role") in _OUTPUT_ROLES):
            label = kind if isinstance(kind, str) else f"{item.get('role')} message"
            if label not in found:
                found.append(label)
    return found


_NATIVE = (
    (
        ("call_has_output", "tool_use_has_result", "call_has_result", "results_in_one_content"),
        "unanswered_call",
    ),
    (("thinking_kept", "reasoning_has_next_item", "signature_present"), "dropped_reasoning"),
    (("thinking_signature", "signature_unaltered", "replay_matches_emitted"), "modified_thinking"),
)


def native_verdict(check: str) -> str:
    """The verdict id of a refusal by the native check named ``check``."""
    for suffixes, verdict_id in _NATIVE:
        if check.endswith(suffixes):
            return verdict_id
    return "native_validation_failed"


def _error_message(response: Any) -> str | None:
    error = response.get("error") if isinstance(response, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None
