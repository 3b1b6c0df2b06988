"""Gemini Interactions v1 (stable ``v1`` endpoint): strict stream parser, terminal gate and
continuation builders.

Sans-IO: feed SSE bytes or decoded event dicts to :class:`Parser`, or parse a whole stream
with :func:`parse_stream` and a non-streaming body with :func:`parse_interaction` (or
:func:`parse_response`, its name in every protocol package); the parser's
:class:`State` is ``State.FAILED`` after a protocol error. A
:class:`Turn` releases :class:`FunctionCall` objects only when the Interaction ended in
``requires_action`` and every call's arguments parsed as a strict JSON object. Continue with
:func:`build_stateful_continuation` (``previous_interaction_id``) or
:func:`build_stateless_continuation` (one canonical step array, ``store: false``).
"""

from ._body import parse_interaction, parse_response
from ._continuation import build_stateful_continuation, build_stateless_continuation
from ._media import MEDIA_TYPES
from ._parser import Parser, parse_stream
from ._state import State
from ._turn import FunctionCall, Turn

__all__ = [
    "MEDIA_TYPES",
    "FunctionCall",
    "Parser",
    "State",
    "Turn",
    "build_stateful_continuation",
    "build_stateless_continuation",
    "parse_interaction",
    "parse_response",
    "parse_stream",
]
