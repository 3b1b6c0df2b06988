"""Auxiliary read-only routes: the model list, one model, and token counts.

Clients call these beside the create routes (llama-index's ``GoogleGenAI`` reads its model
in its constructor, CrewAI counts tokens before each Anthropic call). Each provider that
serves them names its API family (``Provider.family``) and builds its routes from
:func:`route`; this module holds what they share: the script's ``models`` and
``token_count`` (parsed by :func:`parse_aux`), which models a family serves
(:func:`served_models`), the counting rule (:func:`count_tokens`), and the request's way
through the mock (journal, credentials, body, the session's script), as on every route.

Which models a family serves: the script's ``models`` entries for it (``provider`` the
family, or none: every family), in script order; with no such entry, the provider's
defaults, then every model the script's turns and fixtures of that family name in
``expect.model`` / ``match.model``. A model outside that list gets the provider's 404.

The count, unless the script sets ``token_count``: the UTF-8 bytes of every string value
in the request body (object keys and the ``model`` field left out), divided by four and
rounded up, and at least 1: a fixed function of the request's text, not a tokenizer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from .._errors import CallgateError
from .._json import loads_strict
from ._guard import BodyTooLargeError, read_body
from ._http import Reply, begin_entry, reply_response, session_of
from ._providers import PROTOCOLS, provider
from ._providers._kit import Answer, AuxRequest, ModelEntry

if TYPE_CHECKING:
    from ._script import Script

__all__ = [
    "AUX_KEYS",
    "Answer",
    "Aux",
    "AuxRequest",
    "ModelEntry",
    "count_tokens",
    "families",
    "parse_aux",
    "route",
    "served_models",
]

AUX_KEYS = frozenset({"models", "token_count"})  # top-level script keys this module reads
_ENTRY_KEYS = {"id", "provider", "fields"}
MAX_COUNT = 2**53
MAX_BODY_BYTES = 32 * 1024 * 1024  # a count request is read up to this size (the app's default)


@dataclasses.dataclass(frozen=True, slots=True)
class Aux:
    """The script's answers for the auxiliary routes."""

    models: tuple[ModelEntry, ...] = ()
    token_count: int | None = None


def families() -> tuple[str, ...]:
    """The API families whose auxiliary routes the mock serves, in protocol order."""
    found = [provider(p).family for p in PROTOCOLS if provider(p).family]
    return tuple(dict.fromkeys(found))


def parse_aux(ctx: Any, top: Mapping[str, Any]) -> Aux:
    """The script's ``models`` and ``token_count``; raises ``ScriptError`` (through ``ctx``)
    at their location."""
    entries = []
    raw = ctx.typed(top.get("models", []), list, "/models")
    known = families()
    for n, spec in enumerate(raw):
        where = f"/models/{n}"
        ctx.obj(spec, where, _ENTRY_KEYS)
        model_id = ctx.typed(spec.get("id"), str, f"{where}/id")
        if not model_id or "/" in model_id:
            raise ctx.fail(f"{where}/id", "a model id is a non-empty str without '/'")
        family = spec.get("provider")
        if family is not None and family not in known:
            raise ctx.fail(f"{where}/provider", f"provider is one of {', '.join(known)}")
        fields = ctx.obj(spec.get("fields", {}), f"{where}/fields")
        entries.append(ModelEntry(model_id, family, dict(fields)))
    count = top.get("token_count")
    if count is not None:
        count = ctx.bounded(count, "/token_count", 0, MAX_COUNT)
    return Aux(tuple(entries), count)


def _named(script: Script, protocols: Collection[str]) -> list[str]:
    """The models the script's turns and fixtures on ``protocols`` name, in script order."""
    turns = [turn for conversation in script.conversations.values() for turn in conversation]
    for fixture in (*script.fixtures, *([script.fallback] if script.fallback else [])):
        turns += [t for p, t in fixture.turns.items() if p in protocols]
    found = [t.expect.get("model") for t in turns if t.protocol in protocols]
    return [m for m in found if isinstance(m, str) and m and "/" not in m]


def served_models(
    script: Script, family: str, defaults: Sequence[str], protocols: Collection[str]
) -> list[ModelEntry]:
    """The models ``family`` serves for ``script`` (module docstring), no id twice."""
    listed = [e for e in script.aux.models if e.provider in (None, family)]
    if not listed:
        names = [*defaults, *_named(script, protocols)]
        listed = [ModelEntry(name, family) for name in dict.fromkeys(names)]
    seen: dict[str, ModelEntry] = {}
    for entry in listed:
        seen.setdefault(entry.id, entry)
    return list(seen.values())


def _text_bytes(value: Any, depth: int = 0) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "replace"))
    if depth > 64:
        return 0
    if isinstance(value, dict):
        return sum(_text_bytes(v, depth + 1) for k, v in value.items() if k != "model")
    if isinstance(value, list):
        return sum(_text_bytes(v, depth + 1) for v in value)
    return 0


def count_tokens(script: Script, body: Any) -> int:
    """The count every count route answers: the script's ``token_count``, else the rule of
    the module docstring."""
    if script.aux.token_count is not None:
        return script.aux.token_count
    return max(1, -(-_text_bytes(body) // 4))


def route(
    protocol: str,
    auth: Callable[[Request], Reply | None],
    answer: Answer,
    error_body: Callable[[int, str], dict[str, Any]],
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint: journaled under ``protocol``, ``auth`` first, then a POST's
    body read as strict JSON (the provider's 400 otherwise), then ``answer``."""

    async def endpoint(request: Request) -> Response:
        state, session = session_of(request)
        entry = begin_entry(request, state, protocol)
        refused = auth(request)
        if refused is not None:
            return reply_response(entry, refused, "rejected")
        body = None
        if request.method == "POST":
            try:
                raw = await read_body(request, entry, MAX_BODY_BYTES)
            except BodyTooLargeError:
                message = f"Request payload size exceeds the limit: {MAX_BODY_BYTES} bytes."
                return reply_response(entry, Reply(413, error_body(413, message)), "rejected")
            try:
                body = loads_strict(raw)
            except CallgateError as exc:
                entry.body = raw.decode("utf-8", "replace")
                reply = Reply(400, error_body(400, f"request body is not valid JSON: {exc}"))
                return reply_response(entry, reply, "rejected")
            entry.body = body
            if not isinstance(body, dict):
                reply = Reply(400, error_body(400, "body must be a JSON object"))
                return reply_response(entry, reply, "rejected")
        script = session.script
        call = AuxRequest(
            request,
            body,
            lambda family, defaults, protocols: served_models(script, family, defaults, protocols),
            lambda counted: count_tokens(script, counted),
        )
        return reply_response(entry, answer(call), "aux")

    return endpoint
