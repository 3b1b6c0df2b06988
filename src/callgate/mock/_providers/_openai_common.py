"""What both OpenAI protocols (Responses, Chat Completions) share in the mock.

Credentials (``Authorization: Bearer``; Azure's v1 API also ``api-key``), the error body
``{"error": {"message", "type", "param", "code"}}``, a scripted HTTP error with the
``x-ratelimit-*`` headers a 429 carries, and the 400 a request-spec problem renders as.
Both provider folders import this module; neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ._kit import Reply, bearer, header
from ._reqspec import Key, Problem, Tag
from ._request_valid import quoted, show_number, value_kind

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = [
    "auth",
    "auth_azure",
    "error_body",
    "http_error",
    "openai_error",
    "render_problem",
]


def auth(request: Request) -> Reply | None:
    if bearer(request):
        return None
    message = "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
    return Reply(401, error_body(401, message))


def auth_azure(request: Request) -> Reply | None:
    if header(request, b"api-key") or bearer(request):
        return None
    message = "Access denied due to missing subscription key or Bearer token."
    return Reply(401, error_body(401, message))


_TYPES = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}


_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}


def error_body(status: int, message: str, *, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> Reply:
    """``{"error": {"message", "type": "invalid_request_error", "param", "code"}}``."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param,
                      "code": code}}  # fmt: skip
    return Reply(status, body)


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error; a 429 carries ``x-ratelimit-*`` headers."""
    headers: dict[str, str] = {}
    if retry is not None:
        headers["retry-after"] = str(retry)
    if status == 429:
        reset = f"{retry if retry is not None else 1}s"
        headers |= {
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": reset,
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": reset,
        }
    return Reply(status, error_body(status, message, code=_CODES.get(status)), headers)


# -- a request-spec problem as OpenAI's 400 ---------------------------------------------------

_A: Final = {"str": "a string", "int": "an integer", "float": "a decimal", "bool": "a boolean",
             "list": "an array", "dict": "an object", "null": "null"}  # fmt: skip


def _openai_path(path: Sequence[Any]) -> str:
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif isinstance(segment, Tag):
            continue
        else:
            name = segment.name if isinstance(segment, Key) else segment
            out += f".{name}" if out else str(name)
    return out


def render_problem(problem: Problem) -> dict[str, Any]:
    path = problem.path
    param = _openai_path(path)
    kind = problem.kind
    if kind == "missing":
        message, code = f"Missing required parameter: '{param}'.", "missing_required_parameter"
    elif kind == "unknown":
        param = _openai_path([*path, problem.value])
        message, code = f"Unknown parameter: '{param}'.", "unknown_parameter"
    elif kind in ("enum", "tag"):
        if kind == "tag":  # the API names the object, not its discriminator
            param = _openai_path(path[:-1])
        supported = quoted(problem.allowed, "and")
        message = f"Invalid value: '{problem.value}'. Supported values are: {supported}."
        code = "invalid_value"
    elif kind in ("below", "above"):
        number = "integer" if problem.expected[:1] == ("int",) else "decimal"
        where, sign = ("below minimum", ">=") if kind == "below" else ("above maximum", "<=")
        message = (
            f"Invalid '{param}': {number} {where} value. Expected a value {sign} "
            f"{show_number(problem.bound)}, but got {problem.value} instead."
        )
        code = f"{number}_{kind}_{'min' if kind == 'below' else 'max'}_value"
    else:
        expected = [_A.get(k, k) for k in problem.expected if k != "null"] or ["null"]
        wanted = expected[0] if len(expected) == 1 else "one of " + " or ".join(expected)
        got = _A.get(value_kind(problem.value), "a value")
        message = f"Invalid type for '{param}': expected {wanted}, but got {got} instead."
        code = "invalid_type"
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return {"error": error}
