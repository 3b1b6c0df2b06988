"""Gemini generateContent in the mock: the create body's spec overlay and its 400 shape,
``google.rpc.Status`` with a ``BadRequest`` detail."""

from __future__ import annotations

from typing import Any, Final

from .._gemini_common import google_message, google_path
from .._reqspec import Overlay, Problem
from .._request_valid import validator

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "gemini_gc_request_valid"
OVERLAY: Final = Overlay(
    # "Please use a valid role: user, model." (the API; the type is a plain string)
    enums={("mldev.Content", "role"): ("user", "model")},
)


def render(problem: Problem) -> dict[str, Any]:
    """``google.rpc.Status`` with a ``BadRequest`` detail naming the field."""
    message = google_message("GenerateContentRequest")(problem)
    field = google_path(problem.path)
    violation = {"field": field, "description": message} if field else {"description": message}
    details = [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [violation]}]  # fmt: skip
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                      "details": details}}  # fmt: skip


VALIDATE: Final = validator("gemini_generate_content", OVERLAY, render, proto=True)
