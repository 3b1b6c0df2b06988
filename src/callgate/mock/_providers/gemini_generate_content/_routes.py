"""Gemini generateContent in the mock:
credentials, error bodies, paths and the stored-object routes.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from .._gemini_common import VERSIONS, error_body
from .._kit import Host, Reply

_PROTOCOL = "gemini_generate_content"


_VERSIONS = VERSIONS


_METHODS = {"generateContent": False, "streamGenerateContent": True}


def _target(request: Request) -> tuple[str, bool] | None:
    """(model, stream) of a ``models/{model}:{method}`` path, or ``None``."""
    model, colon, method = request.path_params["target"].rpartition(":")
    if not colon or not model or method not in _METHODS:
        return None
    return model, _METHODS[method]


def refuse_path(request: Request) -> Reply | None:
    """An unknown API version or method is a 404; a stream without ``alt=sse`` a 400 (the
    mock serves the SSE framing only, which is what both SDK generations request)."""
    target = _target(request)
    if request.path_params["version"] not in _VERSIONS or target is None:
        return Reply(404, error_body(404, f"Method not found: {request.url.path}"))
    if target[1] and not _alt_sse(request):
        message = "callgate mock: streamGenerateContent is served with ?alt=sse only"
        return Reply(400, error_body(400, message))
    return None


def _alt_sse(request: Request) -> bool:
    """``?alt=sse`` (the query the SDKs send, read without parsing it), else as Starlette
    reads it: the last ``alt`` value counts."""
    query = request.scope["query_string"]
    return query == b"alt=sse" or request.query_params.get("alt") == "sse"


def request_body(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """The body as the engine reads it: the path's model and stream flag added."""
    target = _target(request)
    model, stream = target if target is not None else ("", False)
    return {**body, "model": model, "stream": stream}


def _no_state_routes(host: Host) -> list[Route]:
    return []
