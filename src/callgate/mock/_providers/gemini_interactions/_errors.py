"""Gemini Interactions: the error bodies its routes answer, in the API's own shape.

``{"error": {"code": "<code>", "message": "..."}}`` with ``code`` one of the Interactions
API's documented error codes (ai.google.dev/gemini-api/docs/api-errors: ``invalid_request``
400, ``authentication`` 401, ``permission_denied`` 403, ``not_found`` 404,
``rate_limit_exceeded`` 429, ``api_error`` 500, ``service_unavailable`` 503, ...). Both SDK
generations type it so (``_gaos`` ``types/interactions/error.py``: ``code: Optional[str]``,
``message: Optional[str]``) and parse a 4xx/5xx JSON body into it; a ``google.rpc.Status``
body (``code`` an int) fails that parse and reaches the caller only as the SDK's
``GenAiDefaultError("Error response body did not match expected schema")``.

A status without a documented code gets ``invalid_request`` (4xx) or ``api_error`` (5xx);
``retry_after`` adds the mock's retry hint as ``details`` (``RetryInfo``, and
``QuotaFailure`` on a 429), extra fields the SDK keeps (docs/deviations.md).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from .._kit import Reply, header

__all__ = ["auth", "error_body", "gemini_error", "http_error", "not_found"]

CODES = {
    400: "invalid_request",
    401: "authentication",
    402: "payment_required",
    403: "permission_denied",
    404: "not_found",
    416: "out_of_range",
    429: "rate_limit_exceeded",
    499: "cancelled",
    500: "api_error",
    503: "service_unavailable",
}


def _code(status: int) -> str:
    return CODES.get(status, "api_error" if status >= 500 else "invalid_request")


def error_body(
    status: int, message: str, *, code: str | None = None, retry_after: int | None = None
) -> dict[str, Any]:
    """The error object for HTTP ``status`` (``code`` overrides the status's own code)."""
    error: dict[str, Any] = {"code": code or _code(status), "message": message}
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


def gemini_error(status: int, message: str, code: str | None = None) -> Reply:
    """A refusal of an Interactions route (``code``: a documented code, e.g.
    ``failed_precondition``; the status's own code when ``None``)."""
    return Reply(status, error_body(status, message, code=code))


def not_found(interaction_id: Any) -> Reply:
    return gemini_error(404, f"Interaction {interaction_id!r} was not found.")


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error: the retry delay rides in the body, not in headers."""
    return Reply(status, error_body(status, message, retry_after=retry))


def auth(request: Request) -> Reply | None:
    if header(request, b"x-goog-api-key") or request.query_params.get("key"):
        return None
    return gemini_error(401, "Method doesn't allow unregistered callers. Please use an API key.")
