"""The builders' shared re-check of a parsed turn, and of their ``results`` argument."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from callgate import BindingError, ContinuationError, ToolResult, UsageError
from callgate._results import bind_argument
from callgate._turncheck import check_parsed_turn
from callgate.contracts import REVISIONS


@dataclasses.dataclass
class _Turn:
    text: str
    digest: str
    baseline: str = sorted(REVISIONS)[0]


def _digest(turn: _Turn) -> str:
    if not isinstance(turn.text, str):
        raise TypeError("text is not a str")
    return f"d:{turn.text}"


def test_an_unaltered_turn_comes_back_as_it_is() -> None:
    turn = _Turn("hi", "d:hi")
    assert check_parsed_turn(turn, _Turn, "openai_responses", _digest, baseline=True) is turn


def test_another_type_is_a_usage_error_naming_the_room() -> None:
    with pytest.raises(UsageError, match=r"^turn must be an openai_responses\.Turn, not int$"):
        check_parsed_turn(3, _Turn, "openai_responses", _digest)
    with pytest.raises(UsageError, match=r"^turn must be a gemini_interactions\.Turn, not str$"):
        check_parsed_turn("t", _Turn, "gemini_interactions", _digest)


def test_a_changed_or_uncomputable_digest_is_the_same_refusal() -> None:
    changed = _Turn("edited", "d:hi")
    broken = _Turn("hi", "d:hi")
    broken.text = None  # type: ignore[assignment]
    for turn in (changed, broken):
        with pytest.raises(ContinuationError) as refused:
            check_parsed_turn(turn, _Turn, "anthropic_messages", _digest)
        assert str(refused.value) == "the turn was mutated after parsing (digest mismatch)"


def test_the_baseline_is_checked_only_where_asked() -> None:
    turn = _Turn("hi", "d:hi", baseline="1999-01-01")
    assert check_parsed_turn(turn, _Turn, "openai_responses", _digest) is turn
    with pytest.raises(ContinuationError, match="unknown baseline '1999-01-01'"):
        check_parsed_turn(turn, _Turn, "openai_chat_completions", _digest, baseline=True)


@pytest.mark.parametrize("bad", ["call_1", b"call_1", {"call_1": "x"}, 3, None])
def test_results_that_are_not_an_iterable_of_results_are_a_usage_error(bad: Any) -> None:
    with pytest.raises(UsageError, match="results must be an iterable of ToolResult"):
        bind_argument(["call_1"], bad)
    with pytest.raises(UsageError, match=r"result #1 is a str, not a ToolResult"):
        bind_argument(["a", "b"], [ToolResult("a", "x"), "b"])


def test_an_endless_results_iterable_is_read_one_past_the_calls() -> None:
    endless = (ToolResult(f"c{n}", "x") for n in itertools.count())
    with pytest.raises(BindingError, match="more results than the 1 call"):
        bind_argument(["c0"], endless)
    assert next(endless).call_id == "c2"  # c0 bound, c1 the one too many; nothing else read
    bound = bind_argument(["b", "a"], iter([ToolResult("a", "1"), ToolResult("b", "2")]))
    assert [r.call_id for r in bound] == ["b", "a"]
