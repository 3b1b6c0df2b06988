"""Anthropic Messages in the mock: credentials, error bodies, paths and the stored-object routes."""

from __future__ import annotations

import datetime
from typing import Any

from starlette.requests import Request

from .._kit import Reply, bearer, header

PROTOCOL_NAME = "anthropic_messages"


def auth(request: Request) -> Reply | None:
    if not (header(request, b"x-api-key") or bearer(request)):
        return Reply(401, error_body(401, "x-api-key header is required"))
    if not header(request, b"anthropic-version"):
        return Reply(400, error_body(400, "anthropic-version: header is required"))
    return None


_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _TYPES.get(status, "api_error"), "message": message}}


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error; a 429 carries ``anthropic-ratelimit-*`` headers."""
    headers: dict[str, str] = {}
    if retry is not None:
        headers["retry-after"] = str(retry)
    if status == 429:
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        seconds = retry if retry is not None else 1
        reset = (now + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for kind, limit in (("requests", "50"), ("tokens", "100000"),
                            ("input-tokens", "80000"), ("output-tokens", "20000")):  # fmt: skip
            prefix = f"anthropic-ratelimit-{kind}"
            headers |= {f"{prefix}-limit": limit, f"{prefix}-remaining": "0",
                        f"{prefix}-reset": reset}  # fmt: skip
    return Reply(status, error_body(status, message), headers)
