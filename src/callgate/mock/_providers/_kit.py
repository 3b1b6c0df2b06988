"""The provider kit: everything a provider module builds on, and nothing of the engine.

A provider (``mock/_providers/<protocol>/``) imports this kit, the kernel and its room's
public package and ``_render`` seam -- never an engine module (``tests/test_layering.py``
checks it). What the engine lends a provider's own routes (the journal, the session, the
stored objects) is passed in as a :class:`Host` when the app builds them.

Here: the :class:`Provider` record and its parts, the values every route answers with
(:class:`Reply`, :class:`Rendered`), header helpers, a scripted call's arguments and
usage, the cut of streamed arguments, and the requests of the auxiliary and stored-object
routes; the request view ``expect`` blocks check is in :mod:`._request_view`, re-exported.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._errors import CallgateError
from ..._json import loads_strict
from ._chunking import make_splitter
from ._request_view import FunctionResult, RequestView, last_text, list_of, texts, tool_names

if TYPE_CHECKING:  # types only: the engine's script turn and store, Starlette's request
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from .._store_state import Record, SessionStore

__all__ = [
    "Answer",
    "Auth",
    "AuxRequest",
    "BaseUrl",
    "Endpoint",
    "EndpointFn",
    "ErrorBody",
    "Event",
    "FunctionResult",
    "Host",
    "Ids",
    "ModelEntry",
    "Provider",
    "Rendered",
    "RenderedTurn",
    "Reply",
    "RequestView",
    "ScriptTurn",
    "Socket",
    "SocketMessage",
    "Stored",
    "StoredAnswer",
    "arguments",
    "bearer",
    "cut",
    "cut_deltas",
    "header",
    "is_stored",
    "last_text",
    "list_of",
    "texts",
    "tool_names",
    "usage",
]


# -- what routes answer -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    """A complete non-success answer: status, JSON body and extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Rendered:
    """What the server sent for one turn: its id, its calls, and the wire payload."""

    response_id: str
    calls: tuple[tuple[str, str], ...]  # (call id, function name)
    events: tuple[dict[str, Any], ...]  # stream events (empty for a JSON body)
    body: dict[str, Any] | None  # non-streaming body
    sse: bytes  # the encoded stream (b"" for a JSON body)
    frames: tuple[bytes, ...]  # one SSE frame per event, in order


def header(request: Request, name: bytes) -> bytes:
    """The first ``name`` header's raw value (``b""`` when absent), as
    ``request.headers.get`` finds it, without building Starlette's ``Headers``;
    ``name`` is lower-case, as ASGI header names are."""
    for key, raw in request.scope["headers"]:
        if key == name:
            return bytes(raw)
    return b""


def bearer(request: Request) -> bool:
    """Whether the request carries ``Authorization: Bearer <something>`` (the first one)."""
    raw = header(request, b"authorization")
    return raw.startswith(b"Bearer ") and len(raw) > len(b"Bearer ")


@dataclasses.dataclass(frozen=True, slots=True)
class BaseUrl:
    """One row of the base-URL table: the API, who takes this URL as its base, the URL
    (a path under the mock's root in a :class:`Provider`), and the path such a client
    appends to it for a create request (``{model}`` where the model goes)."""

    api: str
    clients: str
    url: str
    create: str


# -- what a provider renders from ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ScriptTurn:
    """One validated turn; ``expect`` and ``respond`` are kept as plain validated dicts."""

    protocol: str
    expect: Mapping[str, Any]
    respond: Mapping[str, Any]
    location: str

    def splitter(self) -> Callable[[str], list[str]]:
        """The chunk plan of this turn as a text -> pieces function."""
        return make_splitter(self.respond.get("chunking", "whole"))


# -- what the engine lends a provider's own routes --------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ModelEntry:
    """One model a script lists: its id, the family it belongs to (``None``: every family)
    and wire fields that replace the provider's defaults in its model object."""

    id: str
    provider: str | None = None
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class AuxRequest:
    """What an auxiliary answer reads: the request, the JSON body (``None`` for a GET),
    the models a family serves for the session's script (``served_models(family,
    defaults, protocols)``) and its token count of a body (``count_tokens(body)``)."""

    request: Request
    body: Any
    served_models: Callable[[str, Sequence[str], Collection[str]], list[ModelEntry]]
    count_tokens: Callable[[Any], int]


Answer = Callable[[AuxRequest], Reply]


@dataclasses.dataclass(frozen=True, slots=True)
class Stored:
    """What a stored-object answer reads, under the session's lock: the request, the
    session's store, and a record's complete object and complete stream (cached)."""

    request: Request
    store: Any  # the session's SessionStore
    final_object: Callable[[Any], dict[str, Any]]
    full_stream: Callable[[Any], Rendered]


StoredAnswer = Callable[[Stored], Reply | bytes]
Auth = Callable[["Request"], "Reply | None"]
ErrorBody = Callable[[int, str], dict[str, Any]]
EndpointFn = Callable[["Request"], Awaitable["Response"]]


@dataclasses.dataclass(frozen=True, slots=True)
class Host:
    """The engine's endpoint makers, passed to a provider's ``aux_routes`` and
    ``state_routes``. Each endpoint journals the request, runs ``auth`` first (its reply is
    the refusal) and sends the answer: ``aux(protocol, auth, answer, error_body)`` also
    reads a POST's body as strict JSON; ``stored(protocol, auth, answer, outcome)`` runs
    ``answer`` under the session's lock and sends bytes as a finished event stream
    (``protocol`` ``None``: a control route, journaled under no protocol)."""

    aux: Callable[[str, Auth, Answer, ErrorBody], EndpointFn]
    stored: Callable[[str | None, Auth | None, StoredAnswer, str], EndpointFn]


# -- the provider record ----------------------------------------------------------------------


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


@dataclasses.dataclass(frozen=True, slots=True)
class SocketMessage:
    """A client's WebSocket message as its provider reads it: a ``create`` (the HTTP
    ``body`` the pipeline serves, its ``lane``), a ``steer`` (``target`` response id and
    ``input``) or an ``error`` (the event that refuses it)."""

    kind: str
    body: dict[str, Any] | None = None
    lane: str | None = None
    target: Any = None
    input: Any = None
    error: Event | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Socket:
    """A provider's WebSocket wire, pure functions of dicts; ``mock._ws`` drives the
    connection (see ``openai_responses._socket`` for each function)."""

    read: Callable[[Any], SocketMessage]
    event: Callable[[Event, str | None], Event]
    http_error: Callable[[int, Any, Mapping[str, str], str | None], Event]
    steer_problem: Callable[[Any], str | None]
    steer_input: Callable[[Any], list[Any]]
    accepted: Callable[[str, str, int], Event]
    failed: Callable[[Mapping[str, Any], str, str, int], Event]
    pending: Callable[[str, str, Sequence[tuple[str, str]], int], Event]
    steered: Callable[[Sequence[Event], int], Event | None]
    successor: Callable[[Mapping[str, Any], str, list[Any]], dict[str, Any]]
    response_id: Callable[[Sequence[Event]], str | None]
    terminals: frozenset[str]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """One provider, as the engine sees it (every field a constant or a plain function)."""

    protocol: str
    prefixes: tuple[str, ...]  # path prefixes of its routes
    endpoints: tuple[Endpoint, ...]
    # stored-object routes (GET, DELETE, ...), their endpoints made by the engine's ``Host``
    state_routes: Callable[[Host], list[Route]]
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
    # Whether a create is stored unless it says ``store: false`` (Responses, Gemini), or
    # only when it says ``store: true`` (Chat Completions).
    stored_by_default: bool = True
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
    # Why a scripted turn cannot answer this request beyond its ``expect`` (Chat
    # Completions: ``respond.choices`` answers only a request with that many ``n``).
    turn_problems: Callable[[ScriptTurn, Mapping[str, Any]], list[str]] = lambda turn, body: []
    render_with: (
        Callable[[ScriptTurn, Ids, bool, str, bool, str, tuple[str, ...]], RenderedTurn] | None
    ) = None
    # The API family whose auxiliary routes (models, token counts: callgate.mock._aux) it
    # serves, and those routes; the app puts them before the create routes.
    family: str = ""
    aux_routes: Callable[[Host], list[Route]] = lambda host: []
    socket: Socket | None = None  # its WebSocket wire, served on its endpoints' paths
    # The base URLs its clients take (``callgate serve`` prints them), and the
    # ``MockServer`` attributes naming them (``openai_base_url`` -> ``/openai/v1``).
    base_urls: tuple[BaseUrl, ...] = ()
    server_bases: tuple[tuple[str, str], ...] = ()


def is_stored(wire: Provider, body: Mapping[str, Any]) -> bool:
    """Whether a create ``body`` is stored on ``wire`` (its ``store`` field and default)."""
    store = body.get("store")
    return store is not False if wire.stored_by_default else store is True


# -- what a provider renders --------------------------------------------------------------------


def arguments(spec: Mapping[str, Any], *, as_object: bool = False) -> str:
    """A scripted call's arguments as the exact text to send. ``as_object``: the wire
    needs an object (a non-streamed Anthropic/Gemini call), so ``raw`` text that is no
    JSON object gives ``{}`` -- the script loader allows such text on streamed turns
    only, so this is a stored snapshot (GET, cancel) of a streamed turn."""
    if "raw" in spec:
        raw = str(spec["raw"])
        if as_object and raw:
            try:
                parsed = loads_strict(raw)
            except CallgateError:
                parsed = None
            return raw if isinstance(parsed, dict) else ""
        return raw
    return json.dumps(spec.get("arguments", {}), separators=(",", ":"), ensure_ascii=False)


def usage(given: Mapping[str, int] | None, inp: str, out: str) -> dict[str, int]:
    """A turn's scripted usage under the wire's two names (12 and 34 by default)."""
    counts = dict(given or {})
    return {inp: counts.get("input_tokens", 12), out: counts.get("output_tokens", 34)}


def cut(pieces: Sequence[str], keep: int) -> tuple[int, str]:
    """How many whole pieces fit in ``keep`` chars, and the partial piece after them (for
    a provider's truncation of streamed call arguments)."""
    used = 0
    for n, piece in enumerate(pieces):
        if used + len(piece) >= keep:
            return n, piece[: keep - used]
        used += len(piece)
    return len(pieces), ""


def cut_deltas(
    events: Sequence[Event],
    is_delta: Callable[[Event], bool],
    text_of: Callable[[Event], str],
    with_text: Callable[[Event, str], Event],
    keep: int | None = None,
) -> list[Event]:
    """``events`` up to one call's argument deltas (``is_delta``), cut after ``keep`` chars
    (default: half of them); the cut delta carries what is kept of its text."""
    pieces = [text_of(e) for e in events if is_delta(e)]
    whole, partial = cut(pieces, len("".join(pieces)) // 2 if keep is None else keep)
    out: list[Event] = []
    seen = 0
    for event in events:
        if is_delta(event):
            if seen == whole:
                if partial:
                    out.append(with_text(event, partial))
                break
            seen += 1
        out.append(event)
    return out
