"""OpenAI Chat Completions: strict parser, terminal gate, continuation builder and named
compatibility profiles for OpenAI-compatible servers (openai 2.46.0 and 3.57.0 baselines).

Sans-IO: feed ``stream: true`` SSE bytes or decoded ``chat.completion.chunk`` dicts to
:class:`Parser` (or call :func:`parse_stream`), and ``chat.completion`` bodies to
:func:`parse_response`. A :class:`Turn` releases :class:`ToolCall` objects only from a
choice whose ``finish_reason`` is ``tool_calls`` and only after ``data: [DONE]`` (or the
one call a named ``tool_choice`` forced, which OpenAI ends with ``stop``); every other
ending is a typed refusal. :func:`build_continuation` replays the conversation with the
assistant message exactly as received and one ``tool`` message per call. A ``profile``
(:data:`PROFILES`) relaxes only the named rules an OpenAI-compatible server needs.
"""

from ._body import parse_response
from ._continuation import build_continuation
from ._parser import Parser, parse_stream
from ._profiles import PROFILES, Profile
from ._state import State
from ._turn import ToolCall, Turn

__all__ = [
    "PROFILES",
    "Parser",
    "Profile",
    "State",
    "ToolCall",
    "Turn",
    "build_continuation",
    "parse_response",
    "parse_stream",
]
