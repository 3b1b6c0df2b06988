"""The providers' error bodies for broken references and broken continuations.

``_respond.error_body`` covers the common case; these add what it cannot say: OpenAI's
``param`` and ``code``, and Google statuses other than the one a status code implies.
Each message's source (provider documentation, widely reported wording, or callgate's
own) is listed in ``docs/deviations.md``.
"""

from __future__ import annotations

from ._respond import Reply, error_body

__all__ = ["anthropic_400", "gemini_error", "openai_error"]


def openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> Reply:
    """``{"error": {"message", "type": "invalid_request_error", "param", "code"}}``."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param,
                      "code": code}}  # fmt: skip
    return Reply(status, body)


def anthropic_400(message: str) -> Reply:
    """``{"type": "error", "error": {"type": "invalid_request_error", "message"}}``."""
    return Reply(400, error_body("anthropic_messages", 400, message))


def gemini_error(status: int, message: str, google_status: str) -> Reply:
    """``{"error": {"code", "message", "status"}}`` (google.rpc.Status as JSON)."""
    return Reply(status, {"error": {"code": status, "message": message, "status": google_status}})
