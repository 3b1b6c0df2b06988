"""OpenAI Responses (plain and Azure): everything the mock knows about this provider.

Auth (``Authorization: Bearer``; Azure also ``api-key``), the create and stored-response
routes, the request view, rendering through the room's ``_render`` seam, error bodies,
``x-ratelimit-*`` headers, the in-stream error event, truncation, the native checks
(:mod:`._checks`) and the index of emitted output items.

Stored responses: a response is stored unless its request said ``store: false``.
``GET /openai/v1/responses/{id}`` (and the Azure route) returns the Response object a
non-streaming create returned (for a streamed turn: the terminal event's ``response``);
streaming retrieval (``?stream=true``) is refused with a 400. ``DELETE`` answers
``{"id", "object": "response", "deleted": true}`` and the id stops resolving. Nothing is
inherited through ``previous_response_id``: a script's ``expect`` sees only what the
request itself sent.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from ....openai_responses import _render
from .._kit import BaseUrl, Endpoint, Provider, Reply
from .._request_valid import media_first
from . import _aux as aux
from . import _hosted as hosted
from . import _tools as tools
from ._checks import check as continuation_check
from ._faults import error_event, fault_roles, truncate
from ._media import media_problem
from ._rendering import (
    STATUSES,
    _event_name,
    final_from_stream,
    index,
    render,
    render_options,
    render_with,
)
from ._request_spec import SWITCH, VALIDATE
from ._routes import _PROTOCOL, auth, auth_azure, error_body, http_error, state_routes
from ._socket import SOCKET, steer_spec_problem
from ._view import view

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["PROVIDER"]


CHECKS = (
    SWITCH,
    "openai_previous_response_found",
    "openai_item_reference_found",
    "openai_output_has_call",
    "openai_call_has_output",
    "openai_reasoning_has_next_item",
    "openai_replay_matches_emitted",
    tools.CHECK,
)


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The hosted declarations and ``include`` first, then the continuation rules."""
    if tools.CHECK in on:
        problem = tools.tools_problem(body)
        if problem is not None:
            return problem
    return continuation_check(store, body, on)


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """The WebSocket ``steer`` spec, then the hosted steps."""
    if "steer" in respond:
        problem = steer_spec_problem(respond["steer"])
        if problem is not None:
            return f"steer: {problem}"
    return hosted.check_respond(respond)


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=("/openai/", "/azure-openai/"),
    endpoints=(
        Endpoint("/openai/v1/responses", auth, ("/openai/v1/responses",)),
        Endpoint(
            "/azure-openai/openai/v1/responses",
            auth_azure,
            ("/azure-openai/openai/v1/responses",),
        ),
    ),
    state_routes=state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"error_shape", "argument_deltas"}),
    fault_roles=fault_roles,
    statuses=STATUSES,
    previous_key="previous_response_id",
    checks=CHECKS,
    check=check,
    validate=media_first(media_problem, VALIDATE),
    validate_switch=SWITCH,
    index=index,
    final_from_stream=final_from_stream,
    respond_keys=hosted.RESPOND_KEYS | {"steer"},
    check_respond=check_respond,
    render_options=render_options,
    render_with=render_with,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, auth_azure, error_body),
    socket=SOCKET,
    base_urls=(
        BaseUrl(
            "OpenAI Responses",
            "openai SDKs OpenAI(base_url=...), OpenAI-compatible clients",
            "/openai/v1",
            "/responses",
        ),
        BaseUrl(
            "Azure OpenAI v1",
            "openai SDKs OpenAI(base_url=...), as Azure's v1 API is used",
            "/azure-openai/openai/v1",
            "/responses",
        ),
    ),
    server_bases=(
        ("openai_base_url", "/openai/v1"),
        ("azure_openai_base_url", "/azure-openai/openai/v1"),
    ),
)
