"""OpenAI Chat Completions in the mock: the create body's spec overlay (its 400 shape is
OpenAI's, shared with Responses in :mod:`.._openai_common`)."""

from __future__ import annotations

from typing import Final

from .._openai_common import render_problem
from .._reqspec import Overlay
from .._request_valid import validator

__all__ = ["SWITCH", "VALIDATE"]

SWITCH: Final = "openai_chat_request_valid"
_ROOT = "CompletionCreateParams"
OVERLAY: Final = Overlay(
    ranges={
        # SDK docstrings (completion_create_params.py, both generations): "between 0 and
        # 2"; "An integer between 0 and 20"; "Number between -2.0 and 2.0".
        (_ROOT, "temperature"): (0, 2),
        (_ROOT, "top_p"): (0, 1),
        (_ROOT, "top_logprobs"): (0, 20),
        (_ROOT, "frequency_penalty"): (-2, 2),
        (_ROOT, "presence_penalty"): (-2, 2),
        # The API reference (chat/create, ``n``): "minimum 1, maximum 128".
        (_ROOT, "n"): (1, 128),
    },
)

VALIDATE: Final = validator("openai_chat_completions", OVERLAY, render_problem)
