"""Gemini generateContent: everything the mock knows about this provider.

Routes ``POST /gemini/{v1,v1beta}/models/{model}:generateContent`` (a JSON body) and
``...:streamGenerateContent?alt=sse`` (``data:`` lines only, as the SDK reads them); the
model and the stream flag come from the path, so the engine sees them as the body's
``model`` and ``stream``. Auth, error bodies (``google.rpc.Status``, retry delay in its
``details``) and the missing-key answer are the Interactions provider's: one Google API.
Rendering goes through the room's ``_render`` seam; the native checks are in
:mod:`._checks`. Nothing is stored for later reference:
generateContent is stateless (the request replays the whole conversation).

A turn on this wire (the ``respond`` block): ``text`` (streamed in ``chunking`` pieces, one
part per piece), ``calls`` (whole, one part each, ``functionCall.id`` only when scripted),
``reasoning`` (``summary`` as thought parts; ``signature`` on the first call's part, or on a
trailing empty text part when there is no call: where Gemini 3 puts it),
``thought_signatures`` (whether a turn without a scripted signature is signed as a Gemini 3
model signs it; default: by the model name, :mod:`._signatures`),
``status`` (the ``finishReason``, default ``STOP``; ``CONTINUATION`` adds a ``continuationToken``),
``usage`` and ``chunk_plan``: how many parts each chunk carries (parallel calls in one chunk
or several; it must add up to the turn's parts). Default: one part per chunk, the finish
reason and usage on the last one. ``hosted``: scripted results of the server's own tools
(search, file search, code execution, URL context) and the citations of ``text``; see
:mod:`._hosted`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ....gemini_generate_content import _render
from .._gemini_common import auth, error_body, http_error
from .._kit import BaseUrl, Endpoint, Provider, Reply
from .._request_valid import media_first
from . import _aux as aux
from ._checks import CHECKS, check
from ._faults import error_event, fault_roles, truncate
from ._media import media_problem, model_problem
from ._rendering import STATUSES, check_respond, render
from ._request_spec import SWITCH, VALIDATE
from ._routes import _PROTOCOL, _VERSIONS, _no_state_routes, refuse_path, request_body
from ._view import view

__all__ = ["PROVIDER", "STATUSES"]


def _check(store: Any, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """A pre-Gemini-3 model refuses ``functionResponse.parts`` (under the request switch:
    only here is the path's model in the body), then the continuation checks."""
    if SWITCH in on:
        refused = model_problem(body)
        if refused is not None:
            return refused
    return check(store, body, on)


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=tuple(f"/gemini/{v}/models/" for v in _VERSIONS),
    endpoints=(
        Endpoint("/gemini/{version:str}/models/{target:str}", auth, (), refuse=refuse_path),
    ),
    state_routes=_no_state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=lambda event: "",  # the SDK reads data lines only
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    statuses=STATUSES,
    object_arguments=True,
    fault_roles=fault_roles,
    checks=(SWITCH, *CHECKS),
    check=_check,
    validate=media_first(media_problem, VALIDATE),
    validate_switch=SWITCH,
    request_body=request_body,
    respond_keys=frozenset({"chunk_plan", "hosted", "thought_signatures"}),
    check_respond=check_respond,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, error_body),
    base_urls=(
        BaseUrl(
            "Gemini generateContent",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            "/gemini",
            "/v1beta/models/{model}:generateContent",
        ),
        BaseUrl(
            "Gemini generateContent",
            "clients wanting the version segment (Vercel AI SDK createGoogleGenerativeAI "
            "baseURL; also .../gemini/v1)",
            "/gemini/v1beta",
            "/models/{model}:generateContent",
        ),
    ),
)
