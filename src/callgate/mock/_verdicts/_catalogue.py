"""The verdict catalogue: every verdict the mock can give, with its severity and its rule.

A verdict is what a client *did* with what the mock served, judged against a rule whose
source is callgate's gate (docs/gate.md) or the provider's own documentation. The ids are
stable: tests and CI configurations name them. docs/verdicts.md is the reference.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["CATALOGUE", "ERROR", "WARNING", "Rule", "Verdict"]

ERROR = "error"
WARNING = "warning"

# Thresholds of the timing verdicts (documented in docs/verdicts.md).
NO_BACKOFF_S = 0.1  # a retry after a failure sooner than this had no backoff
STORM_RETRIES = 5  # this many retries of one request in a row is a storm
RETRY_AFTER_SLACK_S = 0.01  # clock granularity allowed under a Retry-After delay
# 409 is left out: the official openai and anthropic SDKs retry it (a lock timeout).
NON_RETRYABLE = frozenset({400, 401, 403, 404, 413, 422})

_GATE = "docs/gate.md"
_OPENAI_ERRORS = "https://platform.openai.com/docs/guides/error-codes"
_ANTHROPIC_ERRORS = "https://docs.anthropic.com/en/api/errors"
_GEMINI_ERRORS = "https://ai.google.dev/gemini-api/docs/troubleshooting"
_RETRY_AFTER = "https://www.rfc-editor.org/rfc/rfc9110#field.retry-after"


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """One catalogue entry: its id, severity, what it forbids and where that is written."""

    id: str
    severity: str
    rule: str
    source: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """One verdict on one test id: which rule, the request that broke it (journal ``seq``,
    arrival time) and the evidence (call ids, earlier journal entries, times)."""

    id: str
    severity: str
    test_id: str
    seq: int
    at: float
    message: str
    evidence: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        rule = CATALOGUE[self.id]
        return {
            "id": self.id,
            "severity": self.severity,
            "test_id": self.test_id,
            "seq": self.seq,
            "at": self.at,
            "message": self.message,
            "rule": rule.rule,
            "source": list(rule.source),
            "evidence": self.evidence,
        }


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {r.id: r for r in rules}


CATALOGUE: dict[str, Rule] = _rules(
    Rule(
        "executed_unreleased_call", ERROR,
        "a tool result answers a call of a turn the gate would not release (cut, ended in "
        "an error event, failed/incomplete/max-tokens/refusal terminal, or no terminal)",
        (_GATE,),
    ),
    Rule(
        "executed_partial_arguments", ERROR,
        "a tool result answers a call whose arguments the stream cut before they were whole",
        (_GATE,),
    ),
    Rule(
        "duplicate_execution_suspected", ERROR,
        "after a turn was cut, the same request was posted again, got new call ids, and "
        "results came for calls of both turns: a side effect may have run twice",
        (_GATE,),
    ),
    Rule(
        "retried_non_retryable", ERROR,
        "the same request was sent again after 400, 401, 403, 404, 413 or 422, which "
        "the same request can never turn into a success",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "retry_after_ignored", ERROR,
        "the next attempt came sooner than the Retry-After / retry-after-ms delay the "
        "answer asked for",
        (_RETRY_AFTER, _OPENAI_ERRORS, _ANTHROPIC_ERRORS),
    ),
    Rule(
        "no_backoff", WARNING,
        f"a failed request was sent again less than {int(NO_BACKOFF_S * 1000)} ms after "
        "its failure, with no Retry-After to follow",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "retry_storm", WARNING,
        f"one request was sent again {STORM_RETRIES} times in a row after failures",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "reposted_instead_of_resuming", WARNING,
        "a stored stream that can be resumed (a Gemini interaction: GET with "
        "last_event_id; an OpenAI background response: GET with starting_after) was cut "
        "and the client created it again instead",
        (
            "https://ai.google.dev/gemini-api/docs/interactions",
            "https://platform.openai.com/docs/guides/background",
        ),
    ),
    Rule(
        "history_and_previous_id", WARNING,
        "a continuation names the previous response/interaction and also replays its "
        "output: the model reads the context twice and it is billed twice",
        (
            "https://platform.openai.com/docs/guides/conversation-state",
            "https://ai.google.dev/gemini-api/docs/interactions",
        ),
    ),
    Rule(
        "controls_not_resent", WARNING,
        "a continuation by previous id left out the instructions / tools / system "
        "instruction its previous request declared: they are not inherited",
        (
            "https://platform.openai.com/docs/api-reference/responses/create",
            "https://ai.google.dev/gemini-api/docs/interactions",
        ),
    ),
    Rule(
        "unanswered_call", ERROR,
        "the provider refused the request: a tool call of the continued turn got no result",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "dropped_reasoning", ERROR,
        "the provider refused the request: reasoning, a thinking block or a thought "
        "signature the model emitted was left out of the replay",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "modified_thinking", ERROR,
        "the provider refused the request: a replayed thinking block, signature or output "
        "item differs from what the model emitted",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
    Rule(
        "native_validation_failed", ERROR,
        "the provider refused the request for another native rule (a result out of place, "
        "an unknown reference, a field the API does not accept)",
        (_OPENAI_ERRORS, _ANTHROPIC_ERRORS, _GEMINI_ERRORS),
    ),
)  # fmt: skip
