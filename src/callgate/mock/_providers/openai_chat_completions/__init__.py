"""OpenAI Chat Completions (plain and Azure's v1 API): what the mock knows about it.

``POST /openai/v1/chat/completions`` (and ``/azure-openai/openai/v1/chat/completions``,
which also takes ``api-key``), streamed (``data:`` chunks, ``data: [DONE]``, the usage
chunk under ``stream_options.include_usage``) and not; the request checked against both
openai SDK generations' ``CompletionCreateParams``; the native 400s of a broken tool
history (:mod:`._checks`); faults: the in-stream ``{"error": ...}`` chunk, truncated
arguments finished with ``length``, and every fault point (a call's first delta, its
argument fragments, the finish chunk). The API keeps nothing between requests: every
request replays the whole history, and ``expect.function_results`` sees the tool
messages after the last assistant message. Stored completions: a completion created with
``store: true`` (only then) is ``GET`` / ``DELETE /chat/completions/{id}`` (the
``chat.completion`` a non-streamed create returns; ``chat.completion.deleted``) and
``GET .../{id}/messages`` (the request's messages, one page). ``n > 1``: one choice per
``n``, the turn repeated or ``respond.choices`` (:mod:`._choices`); ``respond.profile``
serves a compatibility profile's quirks (:mod:`._quirks`).
"""

from __future__ import annotations

from .._kit import BaseUrl, Endpoint, Provider
from .._request_valid import media_first
from ._checks import CALL_HAS_RESULT, RESULT_HAS_CALL, check
from ._choices import turn_problems
from ._faults import error_event, fault_roles, truncate
from ._media import media_problem
from ._rendering import STATUSES, encode, event_name, render, render_options, render_with
from ._request_spec import SWITCH, VALIDATE
from ._routes import (
    AZURE_PATH,
    PATH,
    PROTOCOL,
    RESPOND_KEYS,
    auth,
    auth_azure,
    check_respond,
    error_body,
    http_error,
    state_routes,
)
from ._view import view

__all__ = ["PROVIDER"]


PROVIDER = Provider(
    protocol=PROTOCOL,
    prefixes=("/openai/v1/chat/", "/azure-openai/openai/v1/chat/"),
    endpoints=(
        Endpoint(PATH, auth, (PATH,)),
        Endpoint(AZURE_PATH, auth_azure, (AZURE_PATH,)),
    ),
    state_routes=state_routes,
    stored_by_default=False,
    view=view,
    render=render,
    encode=encode,
    event_name=event_name,
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"argument_deltas"}),
    fault_roles=fault_roles,
    statuses=STATUSES,
    checks=(SWITCH, RESULT_HAS_CALL, CALL_HAS_RESULT),
    check=check,
    validate=media_first(media_problem, VALIDATE),
    validate_switch=SWITCH,
    respond_keys=RESPOND_KEYS,
    check_respond=check_respond,
    render_options=render_options,
    render_with=render_with,
    turn_problems=turn_problems,
    base_urls=(
        BaseUrl(
            "OpenAI Chat Completions",
            "openai SDKs OpenAI(base_url=...), OpenAI-compatible clients",
            "/openai/v1",
            "/chat/completions",
        ),
        BaseUrl(
            "Azure OpenAI v1 (Chat Completions)",
            "openai SDKs OpenAI(base_url=...), as Azure's v1 API is used",
            "/azure-openai/openai/v1",
            "/chat/completions",
        ),
    ),
)
