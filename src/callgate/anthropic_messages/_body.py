"""``parse_response``: one non-streaming Message body -> :class:`Turn`.

The body is replayed through a :class:`Parser` as the events a stream of it would carry,
so a body and its stream are checked by the same rules and give the same turn.
"""

from __future__ import annotations

from typing import Any

from .._errors import STRAY_ERRORS, CallgateError, SchemaError, UsageError, at_boundary
from .._feed import wire_mapping
from .._json import loads_strict
from .._limits import DEFAULT_LIMITS, Limits
from ..contracts import CURRENT_REVISION
from . import _events as ev
from ._assembly import copy_event_value
from ._handlers import provider_error
from ._parser import Parser
from ._turn import Turn

__all__ = ["parse_response"]


def _body_of(obj: Any, limits: Limits) -> dict[str, Any]:
    """The body as a new plain dict (a copy: the caller's object never reaches the turn)."""
    if isinstance(obj, bytes | bytearray | memoryview | str):
        obj = loads_strict(obj, limits=limits)
        if type(obj) is not dict:
            raise SchemaError("a Message body must be a JSON object")
        return obj
    body: dict[str, Any] = copy_event_value(dict(wire_mapping(obj, "parse_response()")), limits)
    return body


def parse_response(
    obj: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    baseline: str = CURRENT_REVISION,
) -> Turn:
    """Parse a non-streaming Message body: the SDK's ``Message`` as it is (converted once,
    ``to_dict(mode="json")``), a mapping (a plain ``to_dict()`` keeps datetimes, which are
    refused), or its JSON bytes/text.

    Raises :class:`UsageError` for another type or a bad ``limits``/``baseline``;
    :class:`~callgate.JSONError` for text that is not strict JSON or a mapping holding a
    value that is not JSON; :class:`~callgate.ProviderError` for the API's error object
    (``{"type": "error", "error": {...}}``, as the stream's ``error`` event);
    :class:`~callgate.SchemaError` for a malformed body; and the stream errors otherwise.
    """
    parser = Parser(limits=limits, baseline=baseline)  # checks limits and baseline first
    try:
        body = _body_of(obj, limits)
        if body.get("type") == ev.ERROR:  # the API's error object, not a Message
            raise provider_error(body, "the API answered with an error object")
        content = body.pop("content", None)
        if type(content) is not list:
            raise SchemaError("Message.content is not a list")
    except UsageError:
        raise
    except (CallgateError, *STRAY_ERRORS) as exc:
        err = at_boundary(exc, provider=ev.PROVIDER)
        raise err from err.__cause__
    start = dict(body, content=[], stop_reason=None, stop_sequence=None)
    parser.feed_event({"type": ev.MESSAGE_START, "message": start})
    for index, block in enumerate(content):
        parser.feed_event({"type": ev.BLOCK_START, "index": index, "content_block": block})
        parser.feed_event({"type": ev.BLOCK_STOP, "index": index})
    delta = {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")}
    usage = body.get("usage")
    parser.feed_event({"type": ev.MESSAGE_DELTA, "delta": delta, "usage": usage})
    parser.feed_event({"type": ev.MESSAGE_STOP})
    return parser.finish()
