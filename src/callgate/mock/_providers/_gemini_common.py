"""What both Gemini protocols share: the API versions, the API key check, the
``google.rpc.Status`` error body (generateContent's shape, and what Google's front end
answers for an unknown version on either) and the text of a request-validation problem.
Interactions' own routes answer in their own shape (``gemini_interactions/_errors.py``).
Neither Gemini folder imports the other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from starlette.requests import Request

from ._kit import Reply, header
from ._reqspec import Key, Problem, Tag
from ._request_valid import show_number

__all__ = ["VERSIONS", "auth", "error_body", "google_message", "google_path", "http_error"]

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


# -- request validation: google.rpc.Status with a BadRequest's field violations ----------

_PROTO_TYPE: Final = {"str": "TYPE_STRING", "int": "TYPE_INT32", "float": "TYPE_FLOAT",
                      "bool": "TYPE_BOOL", "list": "TYPE_MESSAGE", "dict": "TYPE_MESSAGE",
                      "null": "TYPE_MESSAGE"}  # fmt: skip


def google_path(path: Sequence[Any]) -> str:
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif isinstance(segment, Key):  # a proto map is a list of entries
            out += f"[{segment.position}].value"
        elif isinstance(segment, Tag):
            continue
        else:
            out += f".{segment}" if out else segment
    return out


def google_message(root: str) -> Callable[[Problem], str]:
    def render(problem: Problem) -> str:
        path = problem.path
        field = google_path(path)
        kind = problem.kind
        if kind == "unknown":
            at = f" at '{field}'" if field else ""
            message = (
                f'Invalid JSON payload received. Unknown name "{problem.value}"{at}: '
                "Cannot find field."
            )
        elif kind == "missing":
            message = f"* {root}.{field}: {path[-1]} is not specified"
        elif kind in ("enum", "tag") and path and path[-1] == "role":
            message = "Please use a valid role: " + ", ".join(map(str, problem.allowed)) + "."
        elif kind in ("below", "above"):
            relation = "at least" if kind == "below" else "at most"
            message = f"* {root}.{field}: must be {relation} {show_number(problem.bound)}"
        else:
            wanted = "TYPE_ENUM" if kind in ("enum", "tag") else _PROTO_TYPE[problem.expected[0]]
            shown = json.dumps(problem.value, ensure_ascii=False)
            message = f"Invalid value at '{field}' ({wanted}), {shown}"
        return message

    return render
