"""Anthropic Messages: strict stream parser, execution gate and full-history continuation.

``Parser`` / ``parse_stream`` / ``parse_response`` turn a Messages stream or body into a
:class:`Turn`; ``Turn.calls`` holds only the client ``tool_use`` calls that may execute,
``Turn.recovery_calls`` the ones that must be answered with an error instead.
``build_continuation`` replays the conversation with exact tool results;
``build_thread_continuation`` sends only the new turn to a server-held message thread.
``State`` is the parser's state (``Parser.state``); see ``_state.TRANSITIONS`` for the table.
"""

from ._body import parse_response

# CARRY_CONTAINER (the ``container=`` default) stays importable from the package but is not
# part of the shared room surface in ``__all__``.
from ._continuation import CARRY_CONTAINER as CARRY_CONTAINER
from ._continuation import build_continuation
from ._history import SystemMessageCapability
from ._media import IMAGE_BASE64_MAX, IMAGE_TYPES
from ._parser import Parser, parse_stream
from ._state import State
from ._threads import THREADS_BETA as THREADS_BETA
from ._threads import build_thread_continuation
from ._turn import RECOVERY_ERROR_TEXT, RecoveryCall, ToolUse, Turn

__all__ = [
    "IMAGE_BASE64_MAX",
    "IMAGE_TYPES",
    "RECOVERY_ERROR_TEXT",
    "Parser",
    "RecoveryCall",
    "State",
    "SystemMessageCapability",
    "ToolUse",
    "Turn",
    "build_continuation",
    "build_thread_continuation",
    "parse_response",
    "parse_stream",
]
