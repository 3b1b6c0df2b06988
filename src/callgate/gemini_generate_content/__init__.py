"""Gemini generateContent / streamGenerateContent: strict parser, terminal gate and
continuation builder (google-genai 2.12.1 ``v1beta`` and 3.6.1 ``v1`` baselines).

Sans-IO: feed ``streamGenerateContent?alt=sse`` bytes or decoded chunk dicts to
:class:`Parser` (or call :func:`parse_stream`), and non-streaming bodies to
:func:`parse_response`. A :class:`Turn` releases :class:`FunctionCall` objects only when the
candidate ended with ``finishReason: STOP`` and the prompt was not blocked; every other
reason is a typed refusal naming it. :func:`build_continuation` replays the conversation
with the model turn exactly as received and one ``functionResponse`` per call. This is its
own protocol: never feed it to the Interactions parser.
"""

from ._body import parse_response
from ._continuation import build_continuation, same_signature
from ._parser import Parser, parse_stream
from ._state import State
from ._turn import LOCAL_ID_PREFIX, FunctionCall, Turn

__all__ = [
    "LOCAL_ID_PREFIX",
    "FunctionCall",
    "Parser",
    "State",
    "Turn",
    "build_continuation",
    "parse_response",
    "parse_stream",
    "same_signature",
]
