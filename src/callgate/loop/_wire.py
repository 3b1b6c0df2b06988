"""The model side's bytes: feeding a stream to a room's parser while watching for the event
that names the provider turn (R5), and re-parsing a stored snapshot on resume.

A snapshot is what the ledger stores for a turn (a JSON value): ``{"sse": text}`` (the raw
stream, re-fed byte for byte), ``{"events": [...]}`` (decoded events from a ``send``
seam, re-fed through ``feed_event``) or ``{"body": obj}`` (a turn fetched back with GET).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._errors import CallgateError, UsageError
from .._json import loads_strict
from ..sse import SSEDecoder

__all__ = ["StreamFeed", "TurnIdWatch", "feed_stream", "reparse"]


class TurnIdWatch:
    """Finds the provider turn id in the first event naming it, then stops looking."""

    def __init__(self, turn_id_of: Callable[[Mapping[str, Any]], Any]) -> None:
        self._turn_id_of = turn_id_of
        self._decoder: SSEDecoder | None = SSEDecoder()
        self.turn_id: str | None = None

    def bytes(self, chunk: bytes) -> bool:
        if self._decoder is None:
            return False
        for event in self._decoder.feed(chunk):
            try:
                obj = loads_strict(event.data)
            except CallgateError:
                continue  # the parser reports it
            if isinstance(obj, Mapping) and self.event(obj):
                return True
        return False

    def event(self, obj: Mapping[str, Any]) -> bool:
        if self.turn_id is not None:
            return False
        found = self._turn_id_of(obj)
        if type(found) is str and found:
            self.turn_id = found
            self._decoder = None
            return True
        return False


class StreamFeed:
    """Feeds SSE byte chunks or event objects to ``parser`` (the parser first, so hostile
    input fails there) and calls ``found(turn_id)`` once an event names the turn."""

    def __init__(self, parser: Any, watch: TurnIdWatch, found: Callable[[str], None]) -> None:
        self.parser = parser
        self.watch = watch
        self._found = found
        self._events: list[Any] = []
        self._raw = bytearray()

    def add(self, item: Any) -> None:
        if isinstance(item, bytes | bytearray | memoryview):
            chunk = bytes(item)
            self._raw += chunk
            self.parser.feed_bytes(chunk)
            named = self.watch.bytes(chunk)
        else:
            obj = event_dict(item)
            self.parser.feed_event(obj)
            self._events.append(obj)
            named = self.watch.event(obj)
        if named and self.watch.turn_id is not None:
            self._found(self.watch.turn_id)

    def snapshot(self) -> Any:
        if self._raw and self._events:
            raise UsageError("send() must yield either SSE bytes or event objects, not both")
        if self._events:
            return {"events": self._events}
        return {"sse": bytes(self._raw).decode("utf-8")}


def feed_stream(
    parser: Any, watch: TurnIdWatch, items: Iterable[Any], found: Callable[[str], None]
) -> Any:
    """Feed a whole stream through a :class:`StreamFeed`; return the snapshot."""
    feed = StreamFeed(parser, watch, found)
    for item in items:
        feed.add(item)
    return feed.snapshot()


def reparse(room: Any, snapshot: Any) -> Any:
    """The turn a stored snapshot holds, parsed again by the room (same digest)."""
    if "body" in snapshot:
        return room.parse_response(snapshot["body"])
    parser = room.Parser()
    if "sse" in snapshot:
        parser.feed_bytes(snapshot["sse"].encode("utf-8"))
    else:
        for event in snapshot["events"]:
            parser.feed_event(event)
    return parser.finish()


def event_dict(item: Any) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict):  # an official SDK's event model
        obj = to_dict(mode="json")
        if isinstance(obj, Mapping):
            return obj
    raise UsageError(f"send() yielded a {type(item).__name__}, not bytes or an event object")
