"""One non-streaming ``generateContent`` body -> Turn, under the stream's rules.

A body is a single ``GenerateContentResponse``: the same chunk the stream's last event
would be, so it goes through the same handlers and gate (``origin="body"``). A body
without ``finishReason`` is :class:`~callgate.TruncatedStreamError`, unless it is a 3.6.1
``CONTINUATION`` (then the token is on the turn and nothing is released).
"""

from __future__ import annotations

from typing import Any

from .._errors import CallgateError, SchemaError, at_boundary
from .._feed import wire_mapping
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from ._events import PROVIDER
from ._parser import SDK_ONLY, Parser
from ._turn import Turn

__all__ = ["parse_response"]


def parse_response(
    obj: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    candidate_index: int | None = None,
) -> Turn:
    """Parse a ``generateContent`` response body: a mapping, the SDK's
    ``GenerateContentResponse`` as it is (converted once, like :meth:`Parser.feed_event`),
    or its raw bytes/str.

    Raises what :meth:`Parser.finish` raises (refusals, ProviderError for an ``error``
    body, TruncatedStreamError without ``finishReason``), JSONError/SchemaError for a body
    that is not one JSON object, UsageError for an argument of the wrong type.
    """
    parser = Parser(limits=limits, baseline=baseline, candidate_index=candidate_index)
    parser._handlers.origin = "body"  # the room's own parser: the turn says it was a body
    if isinstance(obj, bytes | bytearray | memoryview | str):
        try:
            decoded = loads_strict(obj, limits=limits)
            if type(decoded) is not dict:
                raise SchemaError("a generateContent body must be a JSON object")
        except CallgateError as exc:
            raise at_boundary(exc, provider=PROVIDER) from None
        obj = decoded
    else:
        obj = wire_mapping(obj, "parse_response()", sdk_only=SDK_ONLY)
    parser.feed_event(obj)
    return parser.finish()
