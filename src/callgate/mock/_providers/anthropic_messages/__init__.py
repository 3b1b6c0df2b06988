"""Anthropic Messages: everything the mock knows about this provider.

Auth (``x-api-key`` or a bearer token, and ``anthropic-version``), the create route, the
request view, rendering through the room's ``_render`` seam, error bodies,
``anthropic-ratelimit-*`` headers, the in-stream error event, truncation, the native
checks (:mod:`._checks`) and the index of emitted thinking blocks,
read back from the bytes the client received by the room's own parser. Message threads
(beta ``message-threads-2026-08-12``, :mod:`._threads`): a ``thread``
request needs the beta header and is resolved before the checks; the only route besides
the create is the mock's own thread-expiry control route.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from ....anthropic_messages import _render
from .._kit import BaseUrl, Endpoint, Host, Provider, Reply
from .._request_valid import media_first
from . import _aux as aux
from . import _hosted as hosted
from . import _hosted_checks as hosted_checks
from ._checks import check
from ._faults import error_event, fault_roles, truncate
from ._media import media_problem
from ._rendering import _event_name, emitted_blocks, index, render
from ._request_spec import SWITCH, VALIDATE
from ._routes import auth, error_body, http_error
from ._threads import expire_route, require_beta, resolve_thread
from ._view import view

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["PROVIDER"]


CHECKS = (
    SWITCH,
    "anthropic_tool_use_has_result",
    "anthropic_tool_result_first",
    "anthropic_tool_result_has_tool_use",
    "anthropic_thinking_signature",
    "anthropic_thinking_kept",
    *hosted_checks.CHECKS,
)


def _check(store: SessionStore, body: dict[str, Any], on: Any) -> Reply | None:
    return resolve_thread(store, body, error_body, emitted_blocks) or check(store, body, on)


def _request_body(request: Request, body: dict[str, Any]) -> dict[str, Any] | Reply:
    return require_beta(request, body, error_body) or body


def _state_routes(host: Host) -> list[Route]:
    return [expire_route(host, error_body)]


PROVIDER = Provider(
    protocol="anthropic_messages",
    prefixes=("/anthropic/",),
    endpoints=(Endpoint("/anthropic/v1/messages", auth, ("/anthropic/v1/messages",)),),
    state_routes=_state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"overloaded_529", "argument_deltas"}),
    fault_roles=fault_roles,
    object_arguments=True,
    checks=CHECKS,
    check=hosted_checks.checking(_check),
    validate=media_first(media_problem, VALIDATE),
    validate_switch=SWITCH,
    index=hosted_checks.indexing(index),
    respond_keys=frozenset({"hosted"}),
    check_respond=hosted.check_respond,
    request_body=_request_body,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, error_body),
    base_urls=(
        BaseUrl(
            "Anthropic Messages",
            "anthropic SDKs Anthropic(base_url=...)",
            "/anthropic",
            "/v1/messages",
        ),
        BaseUrl(
            "Anthropic Messages",
            "clients wanting the version segment (Vercel AI SDK createAnthropic baseURL)",
            "/anthropic/v1",
            "/messages",
        ),
    ),
    server_bases=(("anthropic_base_url", "/anthropic"),),
)
