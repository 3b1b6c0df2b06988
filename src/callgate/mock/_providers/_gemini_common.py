"""What both Gemini protocols share: the API versions, the API key check and the
``google.rpc.Status`` error body (generateContent's shape, and what Google's front end
answers for an unknown version on either). Interactions' own routes answer in their own
shape (``gemini_interactions/_errors.py``). Neither Gemini folder imports the other.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ._kit import Reply, header

__all__ = ["VERSIONS", "auth", "error_body", "http_error"]

VERSIONS = ("v1", "v1beta")


def auth(request: Request) -> Reply | None:
    if header(request, b"x-goog-api-key") or request.query_params.get("key"):
        return None
    message = "Method doesn't allow unregistered callers. Please use an API key."
    return Reply(401, error_body(401, message))


_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",  # Google's status for a payload too big
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error_body(status: int, message: str, *, retry_after: int | None = None) -> dict[str, Any]:
    """``google.rpc.Status`` as JSON; ``retry_after`` (seconds) adds a ``RetryInfo`` (and a
    429 a ``QuotaFailure``) to its ``details``."""
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": _STATUS.get(status, "UNKNOWN"),
    }
    details: list[dict[str, Any]] = []
    if status == 429:
        violation = {"quotaMetric": "callgate-mock/requests", "quotaId": "callgate-mock"}
        details.append(
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
        )
    if retry_after is not None:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"}
        )
    if details:
        error["details"] = details
    return {"error": error}


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error: the retry delay rides in the body, not in headers."""
    return Reply(status, error_body(status, message, retry_after=retry))
