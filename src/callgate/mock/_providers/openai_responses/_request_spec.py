"""OpenAI Responses in the mock: the create body's spec overlay and its 400 shape,
``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from typing import Final

from .._openai_common import render_problem
from .._reqspec import Overlay
from .._request_valid import validator

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "openai_request_valid"
_OPENAI_ROOT = "ResponseCreateParams"
OVERLAY: Final = Overlay(
    # "Missing required parameter: 'model'." unless a stored prompt names the model
    # (openai/openai-dotnet#947, a maintainer: model "is required in all scenarios
    # other than using a saved prompt").
    required_unless={(_OPENAI_ROOT, "model"): "prompt"},
    ranges={
        # SDK docstrings: "between 0 and 2"; "An integer between 0 and 20".
        (_OPENAI_ROOT, "temperature"): (0, 2),
        (_OPENAI_ROOT, "top_p"): (0, 1),
        (_OPENAI_ROOT, "top_logprobs"): (0, 20),
        # "Invalid 'max_output_tokens': integer below minimum value. Expected a
        # value >= 16, but got 10 instead." (reported from the API, see the docs).
        (_OPENAI_ROOT, "max_output_tokens"): (16, None),
    },
)


VALIDATE: Final = validator("openai_responses", OVERLAY, render_problem)
