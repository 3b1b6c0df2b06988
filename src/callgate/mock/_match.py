"""Check a request against a turn's ``expect`` block; every problem is named."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import CallgateError
from .._json import loads_strict
from ._requests import FunctionResult, RequestView

__all__ = ["mismatches"]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content blocks: their text, else their JSON
        texts = [b.get("text") for b in value if isinstance(b, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same_output(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str):
        return _as_text(actual) == expected
    if isinstance(actual, str):  # an object result sent as JSON text
        try:
            return bool(loads_strict(actual) == expected)
        except CallgateError:
            return False
    return bool(actual == expected)


def mismatches(
    expect: Mapping[str, Any],
    view: RequestView,
    *,
    previous_response_id: str | None,
    previous_calls: Sequence[tuple[str, str]],
) -> list[str]:
    """Human-readable problems; an empty list means the request matches."""
    problems: list[str] = []
    if "model" in expect and view.model != expect["model"]:
        problems.append(f"model is {view.model!r}, expected {expect['model']!r}")
    if "stream" in expect and view.stream != expect["stream"]:
        problems.append(f"stream is {view.stream}, expected {expect['stream']}")
    missing = [name for name in expect.get("tools", ()) if name not in view.tools]
    if missing:
        problems.append(f"tool(s) {', '.join(missing)} not declared (declared: {list(view.tools)})")
    if "previous_id" in expect:
        wanted = expect["previous_id"]
        if wanted == "absent":
            if view.previous_id is not None:
                problems.append(f"previous id {view.previous_id!r} sent, expected none")
        else:
            target = previous_response_id if wanted == "previous" else wanted
            if view.previous_id != target:
                problems.append(f"previous id is {view.previous_id!r}, expected {target!r}")
    if "text_contains" in expect and expect["text_contains"] not in view.user_text:
        problems.append(f"no user text contains {expect['text_contains']!r}")
    for key in ("instructions", "system"):
        if key in expect and view.instructions != expect[key]:
            problems.append(f"{key} is {view.instructions!r}, expected {expect[key]!r}")
    problems.extend(_result_problems(expect.get("function_results", ()), view, previous_calls))
    return problems


def _nested_hint(view: RequestView) -> str:
    if not view.nested_results:
        return ""
    return (
        f" ({view.nested_results} function_result(s) came inside user_input content, which "
        "Interactions v1 does not admit: a result is a step of its own)"
    )


def _result_problems(
    wanted: Sequence[Mapping[str, Any]],
    view: RequestView,
    previous_calls: Sequence[tuple[str, str]],
) -> list[str]:
    problems: list[str] = []
    names = dict(previous_calls)
    by_id = {}
    for sent in view.results:
        if sent.call_id in by_id:
            problems.append(f"two results for call_id {sent.call_id!r}")
        by_id[sent.call_id] = sent
    for spec in wanted:
        result: FunctionResult | None
        if "call_id" in spec:
            label, result = repr(spec["call_id"]), by_id.get(spec["call_id"])
        else:
            label = f"call of {spec['name']!r}"
            hits = [
                r for r in view.results if (r.name or names.get(r.call_id or "")) == spec["name"]
            ]
            result = hits[0] if len(hits) == 1 else None
            if len(hits) > 1:
                problems.append(f"{len(hits)} results for {label}; name them by call_id")
                continue
        if result is None:
            problems.append(f"no function result for {label}" + _nested_hint(view))
            continue
        if "output" in spec and not _same_output(spec["output"], result.output):
            problems.append(f"result for {label} is {result.output!r}, expected {spec['output']!r}")
        if "output_contains" in spec and spec["output_contains"] not in _as_text(result.output):
            problems.append(f"result for {label} does not contain {spec['output_contains']!r}")
        if "is_error" in spec and result.is_error != spec["is_error"]:
            problems.append(f"result for {label} has is_error={result.is_error}")
    return problems
