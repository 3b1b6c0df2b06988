"""Gemini Interactions v1: everything the mock knows about this provider.

Auth (``x-goog-api-key`` or ``?key=``), the versioned create and stored-interaction routes
(``v1`` and ``v1beta``), the request view, rendering through the room's ``_render`` seam,
error bodies (the Interactions API's ``{"error": {"code": "<documented code>", "message"}}``,
:mod:`._errors`, with a retry hint in ``details``: Gemini sends no
rate-limit headers), the in-stream error event, truncation and the native checks
(:mod:`._checks`).

Stored interactions: an interaction is stored unless ``store: false``.
``GET /gemini/{v}/interactions/{id}`` returns it with its whole timeline: for every hop
of its ``previous_interaction_id`` chain, oldest first, the hop's input steps (a string
input becomes one ``user_input`` step) and then its model steps -- so the body starts with
``user_input`` and pairs every call with its result, which is what a GET snapshot must
hold to be replayed without supplementing
(``callgate.gemini_interactions.parse_interaction(source="get")``). ``?include_input=true``
also echoes the request's ``input``. ``?stream=true`` re-sends the interaction's complete
event stream, and with ``last_event_id=E`` only the events after ``E`` (event ids are
``<interaction id>:<n>``; an unknown ``E`` is a 400). ``POST .../{id}/cancel`` turns an
interaction waiting in ``requires_action`` into ``cancelled`` (its pending calls are
abandoned and it can no longer be continued); any other status is a 400
``FAILED_PRECONDITION``, since the mock never has one still running. ``DELETE`` answers
``{}`` and the id stops resolving (404 for GET, cancel and ``previous_interaction_id``).
"""

from __future__ import annotations

from ....gemini_interactions import _render
from .._kit import BaseUrl, Endpoint, Provider
from .._request_valid import media_first
from . import _errors as errors
from ._checks import check
from ._faults import error_event, fault_roles, truncate
from ._hosted import check_hosted
from ._media import media_problem
from ._rendering import _event_name, render
from ._request_spec import SWITCH, VALIDATE
from ._routes import _PROTOCOL, _VERSIONS, _unknown_version, state_routes
from ._view import view

__all__ = ["PROVIDER"]


CHECKS = (
    SWITCH,
    "gemini_previous_interaction_found",
    "gemini_previous_interaction_stored",
    "gemini_previous_interaction_active",
    "gemini_result_is_step",
    "gemini_result_has_call",
    "gemini_call_has_result",
    "gemini_hosted_tool_declaration",
)


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=("/gemini/",),
    endpoints=(
        Endpoint(
            "/gemini/{version:str}/interactions",
            errors.auth,
            tuple(f"/gemini/{v}/interactions" for v in _VERSIONS),
            refuse=_unknown_version,
        ),
    ),
    state_routes=state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=lambda status, message: errors.error_body(status, message),
    http_error=errors.http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"duplicate_different", "argument_deltas"}),
    fault_roles=fault_roles,
    object_arguments=True,
    previous_key="previous_interaction_id",
    checks=CHECKS,
    check=check,
    validate=media_first(media_problem, VALIDATE),
    validate_switch=SWITCH,
    respond_keys=frozenset({"hosted"}),
    check_respond=check_hosted,
    base_urls=(
        BaseUrl(
            "Gemini Interactions",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            "/gemini",
            "/v1beta/interactions",
        ),
        BaseUrl(
            "Gemini Interactions",
            "clients wanting the version segment (also .../gemini/v1)",
            "/gemini/v1beta",
            "/interactions",
        ),
    ),
    server_bases=(("gemini_base_url", "/gemini"),),
)
