"""Order-free fixtures: a response chosen by matching the request, not by its position.

Besides (or instead of) ordered ``turns``, a script may hold::

    "fixtures": [{"protocol": p,        # optional: without it, the fixture serves every
                                        # protocol (its respond must be valid on each)
                  "match": {...},       # the keys of a turn's ``expect`` (all must hold)
                  "respond": {...},     # a turn's ``respond`` block
                  "times": n}],         # optional: uses per session (default unlimited)
    "fallback": {"protocol": p, "respond": {...}}   # optional: answers what nothing else did

A request of a conversation is served by, in this order: the conversation's next ordered
turn, if it matches; else the first fixture, in file order, on the request's protocol whose
``match`` holds and which has uses left; else the ``fallback``; else the mismatch reply
naming the ordered turn's problems and each fixture's. A fixture never moves a
conversation's cursor; in a conversation of fixtures only, its response becomes the
previous response (``previous_id: "previous"``, results named by call position), while
in one with ordered turns the previous response stays the last turn's. Each use is
rendered with ids of its own (the same script gives the same ids in every session).

A fixture whose respond holds an ``http_error`` fault answers that error on each use
(its ``times`` counts them; the fault's own ``times`` is refused), so the request an SDK
retries with is served by the next fixture that matches. Provider-native request
validation runs before any of this, exactly as for ordered turns.

Match (and expect) keys added with fixtures: ``last_user_text`` / ``last_user_text_contains``
/ ``last_user_text_regex`` (the newest user message with text: a replayed history's
tool-result message is skipped), ``tool_results`` (function names whose results the
request carries), ``has_tool_results`` (bool), ``jsonpath`` (one predicate or a list:
``{"path": "$...", "exists": bool | "equals": value | "contains": value | "regex": str}``,
in the subset of :mod:`callgate.mock._jsonpath`), ``previous_id: "present"``, and
``function_results[].call`` (a call's position in the previous turn).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._jsonpath import JSONPathError, compile_path
from ._providers import PROTOCOLS

if TYPE_CHECKING:
    from ._script import ScriptError, ScriptTurn, _Ctx

__all__ = ["MATCH_KEYS", "Fixture", "check_match", "parse_fixtures"]

MATCH_KEYS = frozenset(
    {
        "last_user_text", "last_user_text_contains", "last_user_text_regex", "tool_results",
        "has_tool_results", "jsonpath",
    }
)  # fmt: skip
_FIXTURE_KEYS = {"protocol", "match", "respond", "times"}
_FALLBACK_KEYS = {"protocol", "respond"}
_PREDICATE_TESTS = ("exists", "equals", "contains", "regex")
MAX_TIMES = 2**31


@dataclasses.dataclass(frozen=True, slots=True)
class Fixture:
    """One validated fixture: its turn on each protocol it serves, and its use count."""

    location: str  # "/fixtures/<n>" or "/fallback"
    turns: Mapping[str, ScriptTurn]  # protocol -> the fixture as a turn of that protocol
    times: int | None = None  # uses per session (None: unlimited)

    def turn_for(self, protocol: str) -> ScriptTurn | None:
        return self.turns.get(protocol)


ParseTurn = Callable[["_Ctx", Any, str], "ScriptTurn"]


def parse_fixtures(
    ctx: _Ctx, top: Mapping[str, Any], parse_turn: ParseTurn
) -> tuple[tuple[Fixture, ...], Fixture | None]:
    """The script's ``fixtures`` and ``fallback``. Raises ``ScriptError`` at their location."""
    raw = top.get("fixtures", [])
    if not isinstance(raw, list):
        raise ctx.fail("/fixtures", "fixtures is a list of {match, respond, times} objects")
    fixtures = tuple(
        _fixture(ctx, spec, f"/fixtures/{i}", parse_turn, _FIXTURE_KEYS)
        for i, spec in enumerate(raw)
    )
    fallback = None
    if "fallback" in top:
        fallback = _fixture(ctx, top["fallback"], "/fallback", parse_turn, _FALLBACK_KEYS)
    return fixtures, fallback


def _fixture(ctx: _Ctx, spec: Any, loc: str, parse_turn: ParseTurn, keys: set[str]) -> Fixture:
    spec = ctx.obj(spec, loc, keys)
    if "respond" not in spec:
        raise ctx.fail(loc, "a fixture needs a 'respond' block")
    times = None
    if "times" in spec:
        times = ctx.bounded(spec["times"], f"{loc}/times", 1, MAX_TIMES)
    given = spec.get("protocol")
    protocols = (given,) if given is not None else PROTOCOLS
    turns, failed = {}, []
    for protocol in protocols:
        doc = {"protocol": protocol, "expect": spec.get("match", {}), "respond": spec["respond"]}
        try:
            turns[protocol] = parse_turn(ctx, doc, loc)
        except Exception as exc:  # a ScriptError, said in the fixture's own words
            failed.append((protocol, exc))
    if failed:
        # Valid on some protocols only: say that the fixture was meant for every one.
        protocol, first = failed[0]
        raise _renamed(ctx, first, loc, bool(turns), protocol) from None
    return Fixture(location=loc, turns=turns, times=times)


def _renamed(ctx: _Ctx, exc: Exception, loc: str, every: bool, protocol: str) -> Exception:
    location = getattr(exc, "location", None)
    if location is None:
        return exc
    if location.startswith(f"{loc}/expect"):
        location = f"{loc}/match" + location[len(f"{loc}/expect") :]
    message: str = getattr(exc, "reason", str(exc))
    if every:
        message += (
            f" (on {protocol}: a fixture without 'protocol' serves every protocol; "
            "give 'protocol' to serve one)"
        )
    error: ScriptError = ctx.fail(location, message)
    return error


def check_match(ctx: _Ctx, expect: Mapping[str, Any], loc: str) -> None:
    """Validate the match keys added with fixtures (in ``expect`` or ``match``)."""
    for key in ("last_user_text", "last_user_text_contains", "last_user_text_regex"):
        if key in expect:
            ctx.typed(expect[key], str, f"{loc}/{key}")
    if "last_user_text_regex" in expect:
        _regex(ctx, expect["last_user_text_regex"], f"{loc}/last_user_text_regex")
    if "has_tool_results" in expect:
        ctx.typed(expect["has_tool_results"], bool, f"{loc}/has_tool_results")
    names = ctx.typed(expect.get("tool_results", []), list, f"{loc}/tool_results")
    for i, name in enumerate(names):
        ctx.typed(name, str, f"{loc}/tool_results/{i}")
    if "jsonpath" in expect:
        value = expect["jsonpath"]
        many = isinstance(value, list)
        for i, spec in enumerate(value if many else [value]):
            _predicate(ctx, spec, f"{loc}/jsonpath" + (f"/{i}" if many else ""))


def _predicate(ctx: _Ctx, spec: Any, loc: str) -> None:
    spec = ctx.obj(spec, loc, {"path", *_PREDICATE_TESTS})
    path = ctx.typed(spec.get("path"), str, f"{loc}/path")
    try:
        compile_path(path)
    except JSONPathError as exc:
        raise ctx.fail(f"{loc}/path", str(exc)) from None
    tests = [key for key in _PREDICATE_TESTS if key in spec]
    if len(tests) != 1:
        raise ctx.fail(loc, f"give exactly one of {', '.join(_PREDICATE_TESTS)}")
    if "exists" in spec:
        ctx.typed(spec["exists"], bool, f"{loc}/exists")
    if "regex" in spec:
        _regex(ctx, ctx.typed(spec["regex"], str, f"{loc}/regex"), f"{loc}/regex")


def _regex(ctx: _Ctx, pattern: str, loc: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ctx.fail(loc, f"not a regular expression (Python re syntax): {exc}") from None
