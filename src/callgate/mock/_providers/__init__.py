"""Everything the mock knows about a provider, one module per wire protocol.

Each module (``openai_responses``, ``anthropic_messages``, ``gemini_interactions``) builds
one :class:`Provider`: a record of plain functions and constants the protocol-neutral
engine (app, script, state, store, faults, validation) calls instead of branching on a
protocol name. It is the only place in the mock that imports a room's ``_render`` seam.

A new provider is one new module here building its :class:`Provider`, and one line in
``_MODULES``; the engine does not change.
Modules are imported lazily, on first use, as :mod:`callgate._protocols` imports rooms.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..._protocols import PROTOCOLS as ROOM_PROTOCOLS

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.routing import Route

    from .._http import Rendered, Reply
    from .._requests import RequestView
    from .._script import ScriptTurn
    from .._store_state import Record, SessionStore

__all__ = [
    "PROTOCOLS",
    "Endpoint",
    "Event",
    "Ids",
    "Provider",
    "RenderedTurn",
    "protocol_of",
    "provider",
]

Event = dict[str, Any]
Ids = Callable[..., str]
"""``ids(prefix, kind, n=0, size=24)``: a deterministic id for one thing of a turn."""


@dataclasses.dataclass(frozen=True, slots=True)
class RenderedTurn:
    """A provider's rendering of one scripted turn, before the engine frames it."""

    response_id: str
    calls: tuple[tuple[str, str], ...]
    events: list[Event]
    body: dict[str, Any] | None


@dataclasses.dataclass(frozen=True, slots=True)
class Endpoint:
    """One create route: its Starlette path, its credential check, the exact paths the
    app dispatches straight to it, and a check of the path itself run before anything
    else when the router (not the fast path) reaches it."""

    path: str
    auth: Callable[[Request], Reply | None]
    fast: tuple[str, ...]
    refuse: Callable[[Request], Reply | None] | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """One provider, as the engine sees it (every field a constant or a plain function)."""

    protocol: str
    prefixes: tuple[str, ...]  # path prefixes of its routes
    endpoints: tuple[Endpoint, ...]
    state_routes: Callable[[], list[Route]]  # stored-object routes (GET, DELETE, ...)
    view: Callable[[Mapping[str, Any]], RequestView]  # what an ``expect`` block can check
    # (turn, ids, stream, model, stored, baseline) -> the turn on this wire
    render: Callable[[ScriptTurn, Ids, bool, str, bool, str], RenderedTurn]
    encode: Callable[[Sequence[Mapping[str, Any]]], bytes]  # wire events -> SSE bytes
    event_name: Callable[[Mapping[str, Any]], str]  # the SSE name of a wire event
    error_body: Callable[[int, str], dict[str, Any]]  # the provider's HTTP error body
    # (status, message, retry_after) -> the reply of a scripted http_error fault
    http_error: Callable[[int, str, int | None], Reply]
    error_event: Callable[[Sequence[Event], Mapping[str, Any]], Event]  # in-stream error
    truncate: Callable[[list[Event], Mapping[str, Any]], list[Event]]  # cut call arguments
    # Fault options only this provider has: "overloaded_529", "error_shape",
    # "duplicate_different", "argument_deltas" (calls stream their arguments in pieces).
    fault_options: frozenset[str] = frozenset()
    # What a wire event is to a fault point: (role, call key) pairs, role one of "start",
    # "delta" (an argument piece), "done", "whole" (a call sent in one piece), "terminal".
    fault_roles: Callable[[Mapping[str, Any]], tuple[tuple[str, Any], ...]] = lambda event: ()
    statuses: tuple[str, ...] | None = None  # the ``respond.status`` values it can render
    object_arguments: bool = False  # non-streamed call arguments are a JSON object
    previous_key: str | None = None  # the request field naming a stored object
    checks: tuple[str, ...] = ()  # its native request checks, in the order they run
    # The create body's check against the SDK-generated spec (the first check, run before
    # the body is adapted or matched), and the switch that turns it off.
    validate: Callable[[dict[str, Any]], Reply | None] | None = None
    validate_switch: str | None = None
    # (store, body, enabled checks) -> the provider's refusal, or None
    check: Callable[[SessionStore, dict[str, Any], Collection[str]], Reply | None] = (
        lambda store, body, on: None
    )
    index: Callable[[SessionStore, Record], None] = lambda store, record: None
    # The complete object a stream carried (OpenAI's terminal response), if any.
    final_from_stream: Callable[[Rendered], dict[str, Any] | None] = lambda rendered: None
    # The body as the engine matches, renders and stores it (generateContent: the model
    # and the stream flag are in the path, not the body), or the provider's refusal of a
    # request its headers make invalid (Anthropic: ``thread`` without the threads beta).
    request_body: Callable[[Request, dict[str, Any]], dict[str, Any] | Reply] | None = None
    # ``respond`` keys only this provider has, and why a respond block cannot be rendered.
    respond_keys: frozenset[str] = frozenset()
    check_respond: Callable[[Mapping[str, Any]], str | None] = lambda respond: None
    # Request options that change how a turn is rendered (OpenAI's ``include``), as a
    # hashable key, and the renderer that takes them (called only when they are not ``()``).
    render_options: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda body: ()
    render_with: (
        Callable[[ScriptTurn, Ids, bool, str, bool, str, tuple[str, ...]], RenderedTurn] | None
    ) = None
    # The API family whose auxiliary routes (models, token counts: callgate.mock._aux) it
    # serves, and those routes; the app puts them before the create routes.
    family: str = ""
    aux_routes: Callable[[], list[Route]] = list


# One module per served protocol; a room without a module here is not served yet.
_MODULES: Final = {
    "openai_responses": "openai_responses",
    "anthropic_messages": "anthropic_messages",
    "gemini_interactions": "gemini_interactions",
    "gemini_generate_content": "gemini_generate_content",
}
PROTOCOLS: Final[tuple[str, ...]] = tuple(p for p in ROOM_PROTOCOLS if p in _MODULES)
"""The protocols the mock serves, in :data:`callgate._protocols.PROTOCOLS` order."""

_LOADED: dict[str, Provider] = {}


def provider(protocol: str) -> Provider:
    """The :class:`Provider` of ``protocol`` (``KeyError`` for one the mock does not serve)."""
    found = _LOADED.get(protocol)
    if found is None:
        module = importlib.import_module(f"{__name__}.{_MODULES[protocol]}")
        found = _LOADED[protocol] = module.PROVIDER
    return found


def protocol_of(path: str) -> str | None:
    """The protocol whose routes ``path`` is under, if any (the longest matching prefix
    wins: generateContent's ``/gemini/v1/models/`` lies inside Interactions' ``/gemini/``)."""
    found, longest = None, 0
    for protocol in PROTOCOLS:
        for prefix in provider(protocol).prefixes:
            if len(prefix) > longest and path.startswith(prefix):
                found, longest = protocol, len(prefix)
    return found
