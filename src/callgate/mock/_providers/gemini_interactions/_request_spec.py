"""Gemini Interactions in the mock: the create body's spec overlay and its 400 shape,
``{"error": {"message", "code": "invalid_request"}}``."""

from __future__ import annotations

from typing import Any, Final

from .._gemini_common import google_message
from .._reqspec import Overlay, Problem
from .._request_valid import validator

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "gemini_request_valid"
_MODEL = "interactions.createmodelinteraction.CreateModelInteractionParam"
_LEGACY = ("google_search", "code_execution", "url_context")
_AGENT = "interactions.createagentinteraction.CreateAgentInteractionParam"
OVERLAY: Final = Overlay(
    # The legacy {"google_search": {}} / {"code_execution": {}} / {"url_context": {}}
    # tool forms Google's docs show (docs/hosted-tools.md); the SDK types lack them.
    extend={
        (_MODEL, "tools"): {"ref": "legacy.Tool"},
        (_AGENT, "tools"): {"ref": "legacy.Tool"},
    },
    types={"legacy.Tool": {"fields": {name: {"map": "any"} for name in _LEGACY}, "required": []}},
)


def render(problem: Problem) -> dict[str, Any]:
    """The Interactions API's own shape, ``{"error": {"message", "code": "invalid_request"}}``
    (both SDK generations type ``error.code`` as a string; a real 400 reads so)."""
    return {"error": {"message": google_message("CreateInteractionRequest")(problem),
                      "code": "invalid_request"}}  # fmt: skip


VALIDATE: Final = validator("gemini_interactions", OVERLAY, render, proto=True)
