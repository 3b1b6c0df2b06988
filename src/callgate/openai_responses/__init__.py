"""OpenAI Responses: a strict stream parser with a terminal gate, and continuation builders.

Wire facts follow the official ``openai`` Python SDK of the chosen contract baseline (see
:mod:`callgate.contracts`); the package imports only callgate's kernel.
"""

from ._body import parse_response
from ._connection import Connection, ConnectionToken, parse_connection
from ._continuation import build_stateful_continuation, build_stateless_continuation
from ._media import IMAGE_TYPES
from ._parser import Parser, parse_stream
from ._state import State
from ._steering import Steer
from ._turn import FunctionCall, ProviderErrorInfo, Turn

__all__ = [
    "IMAGE_TYPES",
    "Connection",
    "ConnectionToken",
    "FunctionCall",
    "Parser",
    "ProviderErrorInfo",
    "State",
    "Steer",
    "Turn",
    "build_stateful_continuation",
    "build_stateless_continuation",
    "parse_connection",
    "parse_response",
    "parse_stream",
]
