"""Exact binding of tool results to calls."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from callgate import BindingError, ToolResult, UsageError, bind_results


def r(call_id: str, output: object = "ok", *, is_error: bool = False) -> ToolResult:
    return ToolResult(call_id, output, is_error=is_error)


def test_results_are_returned_in_call_order() -> None:
    bound = bind_results(["a", "b", "c"], [r("c"), r("a"), r("b", is_error=True)])
    assert [x.call_id for x in bound] == ["a", "b", "c"]
    assert bound[1].is_error is True


def test_empty_turn_binds_no_results() -> None:
    assert bind_results([], []) == ()


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([r("a")], "no result"),
        ([r("a"), r("b"), r("a")], "more results"),
        ([r("a"), r("a")], "duplicate"),
        ([r("a"), r("zzz")], "unknown"),
        (["a", "b"], "not a ToolResult"),
    ],
    ids=["missing", "extra", "duplicate", "unknown_call_id", "wrong_type"],
)
def test_binding_failures(results: list[object], message: str) -> None:
    with pytest.raises(BindingError, match=message):
        bind_results(["a", "b"], results)  # type: ignore[arg-type]


def test_endless_generator_fails_fast_and_is_consumed_one_past_expected() -> None:
    consumed = 0

    def endless() -> Iterator[ToolResult]:
        nonlocal consumed
        for n in itertools.count():
            consumed += 1
            yield r(["a", "b"][n % 2] if n < 2 else f"x{n}")

    with pytest.raises(BindingError):
        bind_results(["a", "b"], endless())
    assert consumed == 3


def test_duplicate_call_ids_are_a_usage_error() -> None:
    with pytest.raises(UsageError):
        bind_results(["a", "a"], [r("a")])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"call_id": "", "output": "x"},
        {"call_id": 5, "output": "x"},
        {"call_id": "a", "output": 5},
        {"call_id": "a", "output": {"k": float("nan")}},
        {"call_id": "a", "output": "x", "is_error": 1},
    ],
    ids=["empty_id", "int_id", "int_output", "nan_in_output", "non_bool_is_error"],
)
def test_tool_result_rejects_bad_fields(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        ToolResult(**kwargs)  # type: ignore[arg-type]
