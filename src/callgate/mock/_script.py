"""Conversation scripts: what each request must contain and what the server answers.

A script is one or more named conversations; a conversation is an ordered list of turns.
Each turn has a ``protocol``, an ``expect`` block checked against the request and a
``respond`` block rendered on that protocol's real wire. Scripts are **JSON files** (no
YAML: the core stays dependency-free and JSON is what every language can write); the
Python builder takes the very same dicts, so both have the same power. Loading validates
everything and reports errors with the file path and a JSON-pointer-like location.

``protocol`` is one the mock serves (:data:`callgate.mock.PROTOCOLS`, from the
``callgate._protocols`` registry).

Top level: ``{"seed": int, "baseline": "2026-11" | "2026-07-21", "turns": [...]}`` or
``{..., "conversations": {"name": [...]}}``; the baseline picks wire details that changed
between SDK revisions (e.g. ``name`` on OpenAI's ``function_call_arguments.done``).
Order-free ``"fixtures": [{"protocol", "match", "respond", "times"}]`` and a
``"fallback": {"protocol", "respond"}`` may stand beside the turns or replace them
(:mod:`callgate.mock._fixtures`: which answers a request, and the newer match keys).

A turn is ``{"protocol", "expect": {...}, "respond": {...}}``: ``expect`` holds what
the request must contain (model, tools, stream, function results, previous id, texts,
JSONPath predicates), ``respond`` what the turn answers (text, calls, reasoning, status,
usage, chunking, interleaving, a disconnect, a fault, pacing). Every key, per protocol
where meanings differ, is in ``docs/scripts.md``; ``script.schema.json`` (shipped beside
this module) is the same reference as a JSON Schema, and the loader checks it first.

A provider may add respond keys of its own (generateContent: ``"chunk_plan": [n, ...]``,
the parts each chunk carries, and ``"hosted"``, scripted hosted-tool results and citations:
``docs/hosted-tools.md``); its ``check_respond`` refuses, at load, a turn its wire cannot
carry.

``"validation": {"<check>": false}`` at the top level switches off a provider-native
request check by name (see callgate.mock._validate).

Everything accepted can be served (no 500): a ``status`` is one the provider renders
(OpenAI: ``completed``, ``incomplete``, ``failed``); ``raw`` text that is no JSON object
makes an Anthropic or Gemini turn streamed-only (``expect.stream`` defaults to true; false
is an error); usage counts are ``0 <= n < 2**53``; rendered strings must be UTF-8.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._digest import canonical_bytes
from .._errors import CallgateError, UsageError
from .._json import loads_strict
from ..contracts import CURRENT_REVISION, REVISIONS
from . import _schema
from ._aux import AUX_KEYS, Aux, parse_aux
from ._fixtures import MATCH_KEYS, Fixture, check_match, parse_fixtures
from ._providers import PROTOCOLS, provider
from ._providers._chunking import MAX_SEED, check_chunking, make_splitter
from ._providers._kit import ScriptTurn
from ._providers._media_kit import check_media_spec

__all__ = [
    "PROTOCOLS",
    "Script",
    "ScriptBuilder",
    "ScriptError",
    "ScriptTurn",
    "call",
    "load_script",
    "make_splitter",
]

MAX_SCRIPT_BYTES = 16 * 1024 * 1024  # a script file is read up to this size
_EXPECT_KEYS = {
    "model", "tools", "stream", "function_results", "previous_id", "text_contains",
    "instructions", "system", *MATCH_KEYS,
}  # fmt: skip
_RESPOND_KEYS = {
    "text", "calls", "reasoning", "status", "usage", "chunking", "interleave", "disconnect_after",
    "fault", "pacing",
}  # fmt: skip
_RESULT_KEYS = {"call_id", "name", "call", "output", "output_contains", "is_error", "media"}
_CALL_KEYS = {"name", "arguments", "raw", "id"}
_USAGE_KEYS = {"input_tokens", "output_tokens"}
MAX_TOKENS = 2**53  # a usage count (exact in every JSON reader)


class ScriptError(UsageError):
    """A script is invalid. ``path`` is the file (if any), ``location`` where inside it."""

    def __init__(self, message: str, *, path: str | None = None, location: str = "") -> None:
        where = f"{path or '<script>'}{':' + location if location else ''}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.location = location
        self.reason = message


@dataclasses.dataclass(frozen=True, slots=True)
class Script:
    """Validated conversations. Immutable; a server keeps its own cursors."""

    conversations: Mapping[str, tuple[ScriptTurn, ...]]
    seed: int = 0
    path: str | None = None
    baseline: str = CURRENT_REVISION
    # Provider-native request checks switched on or off by name (all on by default).
    validation: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    fixtures: tuple[Fixture, ...] = ()  # order-free responses (callgate.mock._fixtures)
    fallback: Fixture | None = None
    aux: Aux = dataclasses.field(default_factory=Aux)  # callgate.mock._aux: models, counts

    @classmethod
    def from_dict(cls, obj: Any, *, path: str | None = None) -> Script:
        """Validate a script document. Raises :class:`ScriptError`."""
        return _parse_script(obj, path)


def load_script(path: str | os.PathLike[str]) -> Script:
    """Load and validate a JSON script file. Raises :class:`ScriptError` with the path."""
    name = os.fspath(path)
    try:
        with Path(name).open("rb") as file:
            data = file.read(MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        raise ScriptError(f"cannot read script: {exc.strerror}", path=name) from exc
    if len(data) > MAX_SCRIPT_BYTES:
        raise ScriptError(f"script file is over {MAX_SCRIPT_BYTES} bytes", path=name)
    try:
        obj = loads_strict(data)
    except CallgateError as exc:
        raise ScriptError(f"not strict JSON: {exc}", path=name) from exc
    return _parse_script(obj, name)


class ScriptBuilder:
    """Build a :class:`Script` in Python with the same dicts a file holds.

    ``builder.turn("openai_responses", expect={...}, text="hi", calls=[...])`` appends a
    turn to ``conversation`` (default ``"default"``); ``fixture(protocol, match={...},
    times=n, text=...)`` and ``fallback(protocol, text=...)`` add order-free answers
    (``protocol=None``: every protocol); ``build()`` validates everything.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        baseline: str = CURRENT_REVISION,
        validation: Mapping[str, bool] | None = None,
    ) -> None:
        self._seed = seed
        self._baseline = baseline
        self._validation = dict(validation or {})
        self._conversations: dict[str, list[dict[str, Any]]] = {}
        self._order_free: dict[str, Any] = {}

    def turn(
        self,
        protocol: str,
        *,
        expect: Mapping[str, Any] | None = None,
        conversation: str = "default",
        **respond: Any,
    ) -> ScriptBuilder:
        self._conversations.setdefault(conversation, []).append(
            {"protocol": protocol, "expect": dict(expect or {}), "respond": respond}
        )
        return self

    def fixture(self, protocol: str | None = None, *, match: Mapping[str, Any] | None = None,
                times: int | None = None, **respond: Any) -> ScriptBuilder:  # fmt: skip
        spec = {
            "protocol": protocol,
            "match": dict(match or {}),
            "respond": respond,
            "times": times,
        }
        self._order_free.setdefault("fixtures", []).append(
            {key: value for key, value in spec.items() if value is not None}
        )
        return self

    def fallback(self, protocol: str | None = None, **respond: Any) -> ScriptBuilder:
        self._order_free["fallback"] = {"respond": respond} | (
            {"protocol": protocol} if protocol else {}
        )
        return self

    def build(self) -> Script:
        doc = {
            "seed": self._seed,
            "baseline": self._baseline,
            "validation": self._validation,
            **self._order_free,
        }
        if self._conversations or not self._order_free:
            doc["conversations"] = self._conversations
        return _parse_script(copy.deepcopy(doc), None)


def call(name: str, /, **arguments: Any) -> dict[str, Any]:
    """A scripted function call with JSON arguments (builder convenience)."""
    return {"name": name, "arguments": arguments}


# -- validation ---------------------------------------------------------------------------


class _Ctx:
    def __init__(self, path: str | None) -> None:
        self.path = path

    def fail(self, location: str, message: str) -> ScriptError:
        return ScriptError(message, path=self.path, location=location)

    def obj(self, value: Any, location: str, allowed: set[str] | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(location, f"expected an object, got {type(value).__name__}")
        if allowed is not None:
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise self.fail(location, f"unknown key(s) {', '.join(unknown)}")
        return value

    def typed(self, value: Any, kind: type | tuple[type, ...], location: str) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(location, f"expected {getattr(kind, '__name__', kind)}")
        if isinstance(value, str) and not _encodable(value):
            raise self.fail(location, "a string with a lone surrogate cannot be sent as UTF-8")
        return value

    def bounded(self, value: Any, location: str, low: int, high: int) -> int:
        self.typed(value, int, location)
        if not low <= value < high:
            raise self.fail(location, f"expected an int in [{low}, {high})")
        return int(value)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_script(obj: Any, path: str | None) -> Script:
    obj = _schema.check_document(obj, path, ScriptError)  # the schema first, then the rest
    ctx = _Ctx(path)
    top = ctx.obj(
        obj,
        "",
        {"seed", "baseline", "validation", "conversations", "turns", "fixtures", "fallback"}
        | AUX_KEYS,
    )
    validation = ctx.obj(top.get("validation", {}), "/validation")
    for name, enabled in validation.items():
        ctx.typed(enabled, bool, f"/validation/{name}")
    seed = ctx.bounded(top.get("seed", 0), "/seed", -MAX_SEED + 1, MAX_SEED)
    baseline = top.get("baseline", CURRENT_REVISION)
    if baseline not in REVISIONS:
        raise ctx.fail("/baseline", f"baseline must be one of {', '.join(REVISIONS)}")
    fixtures, fallback = parse_fixtures(ctx, top, _parse_turn)
    order_free = "fixtures" in top or "fallback" in top
    ordered = {"turns", "conversations"} & set(top)
    if len(ordered) > 1 or not (ordered or order_free):
        raise ctx.fail("", "give exactly one of 'turns' (one conversation) or 'conversations'")
    raw = {"default": top["turns"]} if "turns" in top else top.get("conversations", {})
    base = "/turns" if "turns" in top else "/conversations"
    convs = ctx.obj(raw, base) if "conversations" in top else raw
    conversations: dict[str, tuple[ScriptTurn, ...]] = {}
    for name, turns in convs.items():
        where = base if "turns" in top else f"{base}/{name}"
        if not isinstance(turns, list) or not turns:
            raise ctx.fail(where, "a conversation is a non-empty list of turns")
        conversations[name] = tuple(
            _parse_turn(ctx, turn, f"{where}/{i}") for i, turn in enumerate(turns)
        )
    if not conversations and not order_free:
        raise ctx.fail(base, "a script needs at least one conversation")
    return Script(
        conversations=conversations,
        seed=seed,
        path=path,
        baseline=baseline,
        validation=validation,
        fixtures=fixtures,
        fallback=fallback,
        aux=parse_aux(ctx, top),
    )


def _parse_turn(ctx: _Ctx, turn: Any, loc: str) -> ScriptTurn:
    turn = ctx.obj(turn, loc, {"protocol", "expect", "respond"})
    protocol = turn.get("protocol")
    if protocol not in PROTOCOLS:
        raise ctx.fail(f"{loc}/protocol", f"protocol must be one of {', '.join(PROTOCOLS)}")
    expect = ctx.obj(turn.get("expect", {}), f"{loc}/expect", _EXPECT_KEYS)
    wire = provider(protocol)
    respond = ctx.obj(turn.get("respond", {}), f"{loc}/respond", _RESPOND_KEYS | wire.respond_keys)
    for key in ("model", "text_contains", "instructions", "system", "previous_id"):
        if key in expect:
            ctx.typed(expect[key], str, f"{loc}/expect/{key}")
    check_match(ctx, expect, f"{loc}/expect")
    if "stream" in expect:
        ctx.typed(expect["stream"], bool, f"{loc}/expect/stream")
    tools = ctx.typed(expect.get("tools", []), list, f"{loc}/expect/tools")
    for i, tool in enumerate(tools):
        ctx.typed(tool, str, f"{loc}/expect/tools/{i}")
    results = ctx.typed(expect.get("function_results", []), list, f"{loc}/expect/function_results")
    for i, result in enumerate(results):
        rloc = f"{loc}/expect/function_results/{i}"
        ctx.obj(result, rloc, _RESULT_KEYS)
        if sum(key in result for key in ("call_id", "name", "call")) != 1:
            raise ctx.fail(rloc, "name the call by exactly one of 'call_id', 'name' or 'call'")
        if "call" in result:
            ctx.bounded(result["call"], f"{rloc}/call", 0, 2**31)
        if "is_error" in result:
            ctx.typed(result["is_error"], bool, f"{rloc}/is_error")
        if "media" in result:
            check_media_spec(ctx, result["media"], f"{rloc}/media")
    if "text" in respond:
        ctx.typed(respond["text"], str, f"{loc}/respond/text")
    calls = ctx.typed(respond.get("calls", []), list, f"{loc}/respond/calls")
    stream_only = [
        _check_call(ctx, spec, f"{loc}/respond/calls/{i}", protocol, expect.get("stream"))
        for i, spec in enumerate(calls)
    ]
    if any(stream_only) and "stream" not in expect:
        expect = {**expect, "stream": True}  # a JSON body could not carry that text
    if "reasoning" in respond:
        reasoning = ctx.obj(
            respond["reasoning"], f"{loc}/respond/reasoning", {"summary", "signature"}
        )
        for key in ("summary", "signature"):
            ctx.typed(reasoning.get(key, ""), str, f"{loc}/respond/reasoning/{key}")
    if "status" in respond:
        ctx.typed(respond["status"], str, f"{loc}/respond/status")
        statuses = provider(protocol).statuses  # what its renderer can send (else a 500)
        if statuses is not None and respond["status"] not in statuses:
            raise ctx.fail(
                f"{loc}/respond/status",
                f"a {protocol} respond.status is one of {', '.join(statuses)} (the mock serves no "
                "background-mode response: queued, in_progress and cancelled are not rendered)",
            )
    if "usage" in respond:
        usage = ctx.obj(respond["usage"], f"{loc}/respond/usage", _USAGE_KEYS)
        for key, value in usage.items():
            ctx.bounded(value, f"{loc}/respond/usage/{key}", 0, MAX_TOKENS)
    problem = check_chunking(respond.get("chunking", "whole"))
    if problem is not None:
        raise ctx.fail(f"{loc}/respond/chunking", problem)
    if respond.get("interleave", "sequential") not in ("sequential", "round_robin"):
        raise ctx.fail(f"{loc}/respond/interleave", "interleave is 'sequential' or 'round_robin'")
    if "disconnect_after" in respond:
        ctx.bounded(respond["disconnect_after"], f"{loc}/respond/disconnect_after", 0, 2**63)
    # Their meaning is checked by the fault layer when an app is created for the script.
    for key in ("fault", "pacing"):
        if key in respond:
            ctx.obj(respond[key], f"{loc}/respond/{key}")
    problem = wire.check_respond(respond)
    if problem is not None:
        raise ctx.fail(f"{loc}/respond", problem)
    return ScriptTurn(protocol=protocol, expect=expect, respond=respond, location=loc)


def _check_call(ctx: _Ctx, spec: Any, loc: str, protocol: str, stream: Any) -> bool:
    """Validate one call; True if it can only be streamed (raw text that is no object)."""
    ctx.obj(spec, loc, _CALL_KEYS)
    ctx.typed(spec.get("name"), str, f"{loc}/name")
    if "arguments" in spec and "raw" in spec:
        raise ctx.fail(loc, "give 'arguments' (an object) or 'raw' (exact text), not both")
    if "arguments" in spec:
        ctx.typed(spec["arguments"], dict, f"{loc}/arguments")
        try:
            canonical_bytes(spec["arguments"])
        except (CallgateError, ValueError) as exc:  # ValueError: ints too long for text
            raise ctx.fail(f"{loc}/arguments", f"not a JSON value: {exc}") from None
    stream_only = False
    if "raw" in spec:
        ctx.typed(spec["raw"], str, f"{loc}/raw")
        stream_only = provider(protocol).object_arguments and not _object_text(spec["raw"])
        if stream_only and stream is False:
            raise ctx.fail(
                f"{loc}/raw",
                "raw text that is not a JSON object can only be streamed: a non-streamed "
                f"{protocol} call carries its arguments as an object (expect.stream is false)",
            )
    if "id" in spec:
        ctx.typed(spec["id"], str, f"{loc}/id")
    return stream_only


def _object_text(text: str) -> bool:
    """Whether ``text`` is empty (rendered as ``{}``) or the JSON text of an object."""
    try:
        return not text or isinstance(loads_strict(text), dict)
    except CallgateError:
        return False
