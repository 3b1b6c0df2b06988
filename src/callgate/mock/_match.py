"""Check a request against a turn's ``expect`` (or a fixture's ``match``) block; every
problem is named, once.

The results a request carries are matched against the calls being answered: those of the
stored response its previous id names, else of the conversation's previous response
(``previous_calls``). A result named by function ``name`` is looked for among the results
answering those calls when any does (a replayed history holds older results of the same
tool), else among all; one named by ``call`` (a position in that turn's ``calls``) or
``call_id`` is the result with that call's id, or -- on a wire whose results carry no id
(generateContent) -- the result of the same function at the same ordinal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import CallgateError
from .._json import loads_strict
from ._jsonpath import compile_path, select
from ._providers._kit import FunctionResult, RequestView
from ._providers._media_kit import media_in

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
    body: Mapping[str, Any] | None = None,
) -> list[str]:
    """Human-readable problems; an empty list means the request matches. ``body`` is what
    a ``jsonpath`` predicate reads (the request as the engine sees it)."""
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
        elif wanted == "present":
            if view.previous_id is None:
                problems.append("no previous id sent, expected one")
        else:
            target = previous_response_id if wanted == "previous" else wanted
            if view.previous_id != target:
                problems.append(f"previous id is {view.previous_id!r}, expected {target!r}")
    if "text_contains" in expect and expect["text_contains"] not in view.user_text:
        problems.append(f"no user text contains {expect['text_contains']!r}")
    for key in ("instructions", "system"):
        if key in expect and view.instructions != expect[key]:
            problems.append(f"{key} is {view.instructions!r}, expected {expect[key]!r}")
    problems.extend(_last_text_problems(expect, view.last_user_text))
    # Each check below finds nothing when its keys are absent (and, for the results, when
    # none was sent either): skip it then, the common request pays for none of them.
    if "has_tool_results" in expect or "tool_results" in expect:
        pool = _answering(view, previous_calls)
        problems.extend(_presence_problems(expect, view, pool, dict(previous_calls)))
    if "jsonpath" in expect:
        for spec in _predicates(expect["jsonpath"]):
            problem = _predicate_problem(spec, body if body is not None else {})
            if problem is not None:
                problems.append(problem)
    wanted = expect.get("function_results", ())
    if wanted or view.results:
        problems.extend(_result_problems(wanted, view, previous_calls))
    return problems


def _last_text_problems(expect: Mapping[str, Any], text: str) -> list[str]:
    problems = []
    if "last_user_text" in expect and text != expect["last_user_text"]:
        problems.append(f"last user text is {text!r}, expected {expect['last_user_text']!r}")
    wanted = expect.get("last_user_text_contains")
    if wanted is not None and wanted not in text:
        problems.append(f"last user text {text!r} does not contain {wanted!r}")
    pattern = expect.get("last_user_text_regex")
    if pattern is not None and re.search(pattern, text) is None:
        problems.append(f"last user text {text!r} does not match /{pattern}/")
    return problems


def _answering(
    view: RequestView, previous_calls: Sequence[tuple[str, str]]
) -> list[FunctionResult]:
    """The results answering the calls being answered, if any does; else all of them."""
    ids = {call_id for call_id, _ in previous_calls}
    answering = [r for r in view.results if _id(r) in ids]
    return answering or list(view.results)


def _id(result: FunctionResult) -> str | None:
    """A result's call id as a key (a value of the wrong shape as its repr, never a crash)."""
    call_id = result.call_id
    return call_id if call_id is None or isinstance(call_id, str) else repr(call_id)


def _name_of(result: FunctionResult, names: Mapping[str, str]) -> str | None:
    if isinstance(result.name, str) and result.name:
        return result.name
    return names.get(_id(result) or "")


def _presence_problems(
    expect: Mapping[str, Any],
    view: RequestView,
    pool: Sequence[FunctionResult],
    names: Mapping[str, str],
) -> list[str]:
    problems = []
    if "has_tool_results" in expect and bool(view.results) != expect["has_tool_results"]:
        sent = f"{len(view.results)} tool result(s) sent" if view.results else "no tool result sent"
        problems.append(f"{sent}, expected {'some' if expect['has_tool_results'] else 'none'}")
    present = {_name_of(r, names) for r in pool}
    missing = [n for n in expect.get("tool_results", ()) if n not in present]
    if missing:
        known = sorted(n for n in present if n is not None)
        problems.append(f"no tool result for {', '.join(missing)} (results for: {known})")
    return problems


def _predicates(value: Any) -> list[Mapping[str, Any]]:
    return [value] if isinstance(value, dict) else list(value)


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``true`` is not ``1``)."""
    try:
        return canonical_bytes(a) == canonical_bytes(b)
    except (CallgateError, ValueError, TypeError):
        return False


def _predicate_problem(spec: Mapping[str, Any], body: Mapping[str, Any]) -> str | None:
    path = spec["path"]
    nodes = select(compile_path(path), body)
    if "exists" in spec:
        if bool(nodes) == spec["exists"]:
            return None
        return (
            f"{path} reaches {len(nodes)} node(s), expected {'some' if spec['exists'] else 'none'}"
        )
    if "equals" in spec:
        if any(_same(node, spec["equals"]) for node in nodes):
            return None
        return f"no node at {path} equals {spec['equals']!r} (found {_shown(nodes)})"
    if "contains" in spec:
        wanted = spec["contains"]
        if any(
            (isinstance(n, str) and wanted in n)
            or (isinstance(n, list) and any(_same(e, wanted) for e in n))
            for n in nodes
        ):
            return None
        return f"no node at {path} contains {wanted!r} (found {_shown(nodes)})"
    pattern = spec["regex"]
    if any(isinstance(n, str) and re.search(pattern, n) for n in nodes):
        return None
    return f"no string at {path} matches /{pattern}/ (found {_shown(nodes)})"


def _shown(nodes: list[Any]) -> str:
    text = json.dumps(nodes[:3], ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:197] + "..."


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
    by_id: dict[str | None, FunctionResult] = {}
    for sent in view.results:
        if _id(sent) in by_id:
            problems.append(f"two results for call_id {sent.call_id!r}")
        by_id[_id(sent)] = sent
    pool = _answering(view, previous_calls)
    ambiguous: set[str] = set()
    for spec in wanted:
        if "name" in spec:
            label = f"call of {spec['name']!r}"
            hits = [r for r in pool if _name_of(r, names) == spec["name"]]
            if len(hits) > 1:
                if spec["name"] not in ambiguous:  # said once, however many specs name it
                    ambiguous.add(spec["name"])
                    problems.append(
                        f"{len(hits)} results for calls of {spec['name']!r}; name each by its "
                        "position in the previous turn ('call': i) or its 'call_id'"
                    )
                continue
            result = hits[0] if hits else None
        else:
            label, result, problem = _by_call(spec, view, by_id, previous_calls)
            if problem is not None:
                problems.append(problem)
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
        if "media" in spec:
            problems.extend(_media_problems(label, spec["media"], result))
    return problems


def _media_problems(
    label: str, wanted: Sequence[Mapping[str, Any]], result: FunctionResult
) -> list[str]:
    """The result's inline media, in order, against ``wanted`` (kind, media type, size
    and digest of the decoded bytes; a key left out is not compared)."""
    urlsafe = result.parts is not None  # generateContent sends URL-safe base64
    sent = [m.summary(urlsafe=urlsafe) for m in (*media_in(result.output), *media_in(result.parts))]
    if len(sent) != len(wanted):
        return [
            f"result for {label} carries {len(sent)} inline media part(s), expected {len(wanted)}"
        ]
    problems = []
    for index, (spec, got) in enumerate(zip(wanted, sent, strict=True)):
        for key, value in spec.items():
            if got.get(key) != value:
                problems.append(
                    f"media part {index} of the result for {label} has {key} {got.get(key)!r}, "
                    f"expected {value!r}"
                )
    return problems


def _by_call(
    spec: Mapping[str, Any],
    view: RequestView,
    by_id: Mapping[str | None, FunctionResult],
    previous_calls: Sequence[tuple[str, str]],
) -> tuple[str, FunctionResult | None, str | None]:
    """(label, result, problem) of a spec naming its call by ``call`` or ``call_id``."""
    if "call" in spec:
        position = spec["call"]
        if position >= len(previous_calls):
            made = len(previous_calls)
            return "", None, f"the previous turn made {made} call(s); there is no call {position}"
        call_id = previous_calls[position][0]
        label = f"call {position} ({call_id!r})"
    else:
        call_id = spec["call_id"]
        label = repr(call_id)
    found = by_id.get(call_id)
    if found is not None:
        return label, found, None
    # A wire whose results carry no id: the same function's result at the same ordinal.
    at = next((i for i, (cid, _) in enumerate(previous_calls) if cid == call_id), None)
    if at is None:
        return label, None, None
    name = previous_calls[at][1]
    ordinal = sum(1 for _, n in previous_calls[:at] if n == name)
    known = {cid for cid, _ in previous_calls}
    idless = [r for r in view.results if _id(r) not in known and r.name == name]
    return label, idless[ordinal] if ordinal < len(idless) else None, None
