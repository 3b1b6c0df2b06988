"""One non-streamed ``chat.completion`` body -> Turn, under the stream's rules.

A body is the complete object: the same checks and the same gate as a stream's chunks
(``origin="body"``), with the message's whole ``tool_calls`` entries keyed by their
position. ``finish_reason`` is required (the gate's decision); an ``{"error": {...}}``
body is the :class:`~callgate.ProviderError` it reports.
"""

from __future__ import annotations

from typing import Any

from .._errors import SchemaError, at_boundary
from .._feed import CAUGHT, copy_event, wire_mapping
from .._fields import check_limits_and_baseline
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION, REVISIONS
from ._events import PROVIDER
from ._handlers import Handlers
from ._parser import check_choice_index, forced_function
from ._profiles import Profile, get_profile
from ._turn import Turn

__all__ = ["parse_response"]


def parse_response(
    obj: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
    choice_index: int | None = None,
    tool_choice: Any = None,
    profile: str | Profile | None = None,
) -> Turn:
    """Parse a ``chat.completion`` body: a mapping, the SDK's ``ChatCompletion`` as it is
    (converted once, ``to_dict(mode="json")``), or its raw bytes/str. The keyword
    arguments are :class:`Parser`'s. Raises the gate's refusals, ProviderError for an
    error body, JSONError/SchemaError for a body that is not one JSON object, UsageError
    for an argument of the wrong type."""
    check_limits_and_baseline(limits, baseline, REVISIONS)
    check_choice_index(choice_index)
    handlers = Handlers(
        limits, baseline, choice_index, forced_function(tool_choice), get_profile(profile)
    )
    if not isinstance(obj, bytes | bytearray | memoryview | str):
        obj = wire_mapping(obj, "parse_response()")
    try:
        if isinstance(obj, bytes | bytearray | memoryview | str):
            body = loads_strict(obj, limits=limits)
        else:
            body = copy_event(obj, limits, "the body")[0]
        if type(body) is not dict:
            raise SchemaError("a chat.completion body must be a JSON object")
        handlers.take_body(body)
        return handlers.final_turn()
    except CAUGHT as exc:
        err = at_boundary(
            exc, provider=PROVIDER, wire_type="chat.completion", partial_turn=handlers.partial_turn
        )
        raise err from err.__cause__
