"""Anthropic server tools in the mock: request checks, answered with the provider's 400.

- Declarations (``tools[]`` entries of a server tool family), per version: the fixed
  ``name``, the options that version has (anything else is "Extra inputs are not
  permitted"), ``allowed_domains`` xor ``blocked_domains``, an approximate
  ``user_location``, positive ``max_uses`` / ``max_content_tokens``, ``response_inclusion``
  only from ``web_search_20260318`` / ``web_fetch_20260318``, ``allowed_callers`` from the
  SDK's list. ``url_sources`` is refused: the mock does not model which sources it admits.
- Replay: every ``server_tool_use`` / ``*_tool_result`` block and every
  ``web_search_result_location`` citation in an assistant message must be one this session
  emitted, unchanged (``null`` fields aside, which the SDK drops), with the result blocks
  its call was emitted with; a final assistant message holding server blocks (the
  continuation of a ``pause_turn``) must be the paused content exactly.
- ``container``: an id this session's responses reported.

Facts: the contract's section 12 (anthropic 2.14.0 and 0.117.0 ``types/*tool*param.py``).
Message texts are the mock's own wording where the provider's is not pinned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from ...._errors import CallgateError
from ....anthropic_messages import Parser
from .._kit import Reply
from ._checks import anthropic_400

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore


__all__ = ["CHECKS", "checking", "indexing"]

DECLARED = "anthropic_server_tool_declaration"
UNCHANGED = "anthropic_server_blocks_unchanged"
CONTAINER = "anthropic_container_known"
CHECKS = (DECLARED, CONTAINER, UNCHANGED)

_KEY = "anthropic_messages/hosted"
_COMMON = frozenset({"type", "name", "allowed_callers", "cache_control", "defer_loading", "strict"})
_SEARCH = frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"})
_FETCH = frozenset({"max_uses", "allowed_domains", "blocked_domains", "citations",
                    "max_content_tokens", "url_sources"})  # fmt: skip
_INCLUSION = frozenset({"response_inclusion"})
# declaration type -> (fixed name, the options it takes besides the common ones)
DECLARATIONS: dict[str, tuple[str, frozenset[str]]] = {
    "web_search_20250305": ("web_search", _SEARCH),
    "web_search_20260209": ("web_search", _SEARCH),
    "web_search_20260318": ("web_search", _SEARCH | _INCLUSION),
    "web_fetch_20250910": ("web_fetch", _FETCH),
    "web_fetch_20260209": ("web_fetch", _FETCH),
    "web_fetch_20260309": ("web_fetch", _FETCH | {"use_cache"}),
    "web_fetch_20260318": ("web_fetch", _FETCH | {"use_cache"} | _INCLUSION),
    "code_execution_20250522": ("code_execution", frozenset()),
    "code_execution_20250825": ("code_execution", frozenset()),
    "code_execution_20260120": ("code_execution", frozenset()),
    "code_execution_20260521": ("code_execution", frozenset()),
}
_FAMILIES = ("web_search_", "web_fetch_", "code_execution_")
_CALLERS = frozenset({"direct", "code_execution_20250825", "code_execution_20260120",
                      "code_execution_20260521"})  # fmt: skip
_LOCATION = frozenset({"type", "city", "region", "country", "timezone"})
_SERVER_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                            "code_execution_tool_result", "bash_code_execution_tool_result",
                            "text_editor_code_execution_tool_result"})  # fmt: skip

_WEB_CITATION = "web_search_result_location"
# Bytes every stream that holds something this index keeps must contain.
_MARKERS = (b'"server_tool_use"', b'_tool_result"', b'"container"', b'"' + _WEB_CITATION.encode())


# -- declarations -------------------------------------------------------------------------


def _positive(value: Any) -> bool:
    return type(value) is int and value > 0


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(v) is str and v for v in value)


def _option_problem(key: str, value: Any) -> str | None:
    """Why one option's value is refused (``None``: fine)."""
    if key in ("max_uses", "max_content_tokens") and not _positive(value):
        return "must be a positive integer"
    if key in ("allowed_domains", "blocked_domains") and not _strings(value):
        return "must be a list of domain strings"
    if key == "user_location":
        if type(value) is not dict or value.get("type") != "approximate" or set(value) - _LOCATION:
            return "must be {type: 'approximate', city?, region?, country?, timezone?}"
        if any(type(value.get(k, "")) is not str for k in _LOCATION):
            return "fields must be strings"
        if len(value.get("country", "XX")) != 2:
            return "country must be an ISO 3166-1 alpha-2 code"
    if key == "response_inclusion" and value not in ("full", "excluded"):
        return "must be 'full' or 'excluded'"
    if key == "allowed_callers" and (
        type(value) is not list
        or not value
        or any(type(v) is not str or v not in _CALLERS for v in value)
    ):
        return f"must be a non-empty list of {', '.join(sorted(_CALLERS))}"
    if key == "citations" and (type(value) is not dict or type(value.get("enabled")) is not bool):
        return "must be {enabled: bool}"
    if key in ("use_cache", "defer_loading", "strict") and type(value) is not bool:
        return "must be a boolean"
    if key == "cache_control" and (
        type(value) is not dict
        or value.get("type") != "ephemeral"
        or set(value) - {"type", "ttl"}
        or value.get("ttl", "5m") not in ("5m", "1h")
    ):
        return "must be {type: 'ephemeral', ttl?: '5m' | '1h'}"
    if key == "url_sources":
        return "is not supported by the callgate mock (its source rules are not pinned)"
    return None


def _declaration_problem(i: int, tool: dict[str, Any]) -> str | None:
    kind = tool.get("type")
    if not isinstance(kind, str) or not kind.startswith(_FAMILIES):
        return None
    where = f"tools.{i}"
    spec = DECLARATIONS.get(kind)
    if spec is None:
        return f"{where}.type: unknown server tool version {kind!r}"
    name, options = spec
    if tool.get("name") != name:
        return f"{where}.name: a {kind} tool must be named {name!r}"
    extra = sorted(set(tool) - _COMMON - options)
    if extra:
        return f"{where}.{extra[0]}: Extra inputs are not permitted"
    if "allowed_domains" in tool and "blocked_domains" in tool:
        return f"{where}: allowed_domains cannot be used alongside blocked_domains"
    for key in sorted(set(tool) - {"type", "name"}):
        problem = _option_problem(key, tool[key])
        if problem is not None:
            return f"{where}.{key}: {problem}"
    return None


# -- what this session emitted ------------------------------------------------------------


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _key(block: Any) -> tuple[str, str] | None:
    if not isinstance(block, dict) or block.get("type") not in _SERVER_BLOCKS:
        return None
    ident = block.get("id") if block["type"] == "server_tool_use" else block.get("tool_use_id")
    return (str(block["type"]), str(ident))


@dataclasses.dataclass(slots=True)
class Emitted:
    """Server blocks, web citations, paused contents and containers this session sent."""

    blocks: dict[tuple[str, str], Any] = dataclasses.field(default_factory=dict)
    # server call id -> the result blocks emitted with it, in the same message
    results: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)
    indexes: set[str] = dataclasses.field(default_factory=set)
    paused: dict[str, Any] = dataclasses.field(default_factory=dict)  # call id -> content
    containers: set[str] = dataclasses.field(default_factory=set)


def _emitted(store: SessionStore) -> Emitted:
    found: Emitted | None = store.indexes.get(_KEY)
    if found is None:
        found = store.indexes[_KEY] = Emitted()
    return found


def _read(record: Record) -> tuple[list[Any], str | None, Any]:
    """(content, stop_reason, container) of what the client received."""
    received = record.received
    if received.body is not None:
        body = received.body
        return list(body.get("content", ())), body.get("stop_reason"), body.get("container")
    if not any(marker in received.sse for marker in _MARKERS):
        return [], None, None  # nothing of a server tool: skip the second parse
    parser = Parser()
    try:
        parser.feed_bytes(received.sse)
        turn = parser.finish()
    except CallgateError:
        return [], None, None  # a cut stream: nothing of it can be replayed as emitted
    return list(turn.content), turn.stop_reason, turn.message.get("container")


def _index(store: SessionStore, record: Record) -> None:
    content, stop, container = _read(record)
    found = _emitted(store)
    if isinstance(container, dict) and isinstance(container.get("id"), str):
        found.containers.add(container["id"])
    normal = _drop_none(content)
    keys = [k for k in map(_key, normal) if k is not None]
    for block in normal:
        key = _key(block)
        if key is not None:
            found.blocks[key] = block
            if key[0] == "server_tool_use":
                # The results emitted with this call, in the same message.
                found.results[key[1]] = [k for k in keys if k[0] != key[0] and k[1] == key[1]]
                if stop == "pause_turn":
                    found.paused[key[1]] = normal
        for citation in block.get("citations", ()) if block.get("type") == "text" else ():
            if citation.get("type") == "web_search_result_location":
                found.indexes.add(str(citation.get("encrypted_index")))


def indexing(
    index: Callable[[SessionStore, Record], None],
) -> Callable[[SessionStore, Record], None]:
    """The provider's ``index`` followed by the server-tool index."""

    def both(store: SessionStore, record: Record) -> None:
        index(store, record)
        _index(store, record)

    return both


# -- replay -------------------------------------------------------------------------------

_UNCHANGED = "must be passed back exactly as the API returned it"


def _message_problem(i: int, blocks: list[Any], found: Emitted) -> str | None:
    keys = {_key(b) for b in blocks} - {None}
    for k, block in enumerate(blocks):
        key = _key(block)
        if key is not None and found.blocks.get(key) != _drop_none(block):
            return f"messages.{i}.content.{k}: `{key[0]}` block {key[1]!r} {_UNCHANGED}"
        if key is not None and key[0] == "server_tool_use":
            missing = [r for r in found.results.get(key[1], ()) if r not in keys]
            if missing:
                return (f"messages.{i}: the `{missing[0][0]}` block of server tool use "
                        f"{key[1]!r} is missing; server tool blocks {_UNCHANGED}")  # fmt: skip
        cites = block.get("citations") if isinstance(block, dict) else None
        for citation in cites if isinstance(cites, list) else ():
            web = isinstance(citation, dict) and citation.get("type") == _WEB_CITATION
            if web and citation.get("encrypted_index") not in found.indexes:
                return f"messages.{i}.content.{k}.citations: `encrypted_index` {_UNCHANGED}"
    return None


def _paused_problem(i: int, blocks: list[Any], found: Emitted) -> str | None:
    ids = [
        b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "server_tool_use"
    ]
    paused = next((found.paused[c] for c in ids if c in found.paused), None)
    if paused is not None and _drop_none(blocks) != paused:
        return f"messages.{i}: a paused turn's content {_UNCHANGED}, as the last message"
    return None


def _replay_problem(store: SessionStore, body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    found: Emitted | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        blocks = message.get("content")
        if not isinstance(blocks, list) or not any(
            _key(b) is not None or (isinstance(b, dict) and b.get("citations")) for b in blocks
        ):
            continue
        if found is None:
            store.index()
            found = _emitted(store)
        problem = _message_problem(i, blocks, found)
        if problem is None and i == len(messages) - 1:
            problem = _paused_problem(i, blocks, found)
        if problem is not None:
            return problem
    return None


def _container_problem(store: SessionStore, body: dict[str, Any]) -> str | None:
    container = body.get("container")
    if container is None:
        return None
    given = container.get("id") if isinstance(container, dict) else container
    if not isinstance(given, str) or not given:
        return "container: must be a container id or {id, skills}"
    store.index()
    if given not in _emitted(store).containers:
        return f"container: container {given!r} not found"
    return None


def hosted_problem(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> str | None:
    """The first server-tool problem of a request the enabled checks find, or ``None``."""
    tools = body.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) and DECLARED in on else ()):
        if isinstance(tool, dict):
            problem = _declaration_problem(i, tool)
            if problem is not None:
                return problem
    problem = _container_problem(store, body) if CONTAINER in on else None
    if problem is None and UNCHANGED in on:
        problem = _replay_problem(store, body)
    return problem


def checking(
    check: Callable[[SessionStore, dict[str, Any], Collection[str]], Reply | None],
) -> Callable[[SessionStore, dict[str, Any], Collection[str]], Reply | None]:
    """The provider's ``check`` followed by the server-tool checks."""

    def both(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
        reply = check(store, body, on)
        if reply is not None:
            return reply
        problem = hosted_problem(store, body, on)
        return anthropic_400(problem) if problem is not None else None

    return both
