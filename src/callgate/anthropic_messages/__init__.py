"""Anthropic Messages: strict stream parser, execution gate and full-history continuation.

``Parser`` / ``parse_stream`` / ``parse_response`` turn a Messages stream or body into a
:class:`Turn`; ``Turn.calls`` holds only the client ``tool_use`` calls that may execute,
``Turn.recovery_calls`` the ones that must be answered with an error instead.
``build_continuation`` replays the conversation with exact tool results.
"""

from ._continuation import (
    CARRY_CONTAINER,
    RECOVERY_ERROR_TEXT,
    SystemMessageCapability,
    build_continuation,
)
from ._parser import Parser, parse_response, parse_stream
from ._turn import RecoveryCall, ToolUse, Turn

__all__ = [
    "CARRY_CONTAINER",
    "RECOVERY_ERROR_TEXT",
    "Parser",
    "RecoveryCall",
    "SystemMessageCapability",
    "ToolUse",
    "Turn",
    "build_continuation",
    "parse_response",
    "parse_stream",
]
