"""Every size and count bound callgate enforces, declared once.

Bounds are checked *before* a buffer grows past them, so hostile input costs at most the
bound in memory. Names follow ``max_<thing>_<unit>``. ``DEFAULT_LIMITS`` is generous for
real provider traffic (a 64k-delta argument stream passes) and small enough that a
single stream cannot exhaust a host.
"""

from __future__ import annotations

import dataclasses

from ._errors import LimitExceededError, UsageError

__all__ = ["DEFAULT_LIMITS", "Limits", "room_for_one_more"]

_MiB = 1024 * 1024


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Bounds for one stream / document. All values are positive ints.

    - ``max_line_bytes``: one SSE line (without its line ending).
    - ``max_event_bytes``: one SSE event's accumulated ``data`` (all its lines).
    - ``max_events_per_stream``: dispatched events in one stream (pings included).
    - ``max_stream_bytes``: total bytes fed to one parser.
    - ``max_json_bytes``: one JSON document (UTF-8 bytes).
    - ``max_json_depth``: nesting of arrays/objects in one JSON document (top level is 1).
    - ``max_json_string_chars``: characters of one decoded JSON string.
    - ``max_json_int_digits``: digits of one JSON integer.
    - ``max_fragments_per_call``: argument/input delta fragments of one tool call.
    - ``max_argument_bytes``: accumulated argument text of one tool call.
    - ``max_calls_per_turn``: client tool calls in one turn.
    - ``max_items_per_turn``: output items / content blocks / steps in one turn.
    - ``max_text_chars``: accumulated text of one output text / thinking part.
    - ``max_media_part_bytes``: one inline media part of a tool result.
    - ``max_parts_per_result``: parts (text and media) of one tool result.
    - ``max_media_bytes_per_request``: all inline media parts of one continuation request.

    The three media bounds are checked by the continuation builders and count bytes the
    way the provider measures them: Anthropic Messages states its image limit on the
    **base64-encoded** string ("image exceeds 5 MB maximum: N bytes > 5242880 bytes"), so
    its builder counts base64 characters (4 per 3 raw bytes, padding included); OpenAI
    Responses, Gemini Interactions and Gemini generateContent count **raw** bytes
    (``MediaPart.size``). URL and file-id parts count as parts, not bytes.
    """

    max_line_bytes: int = 16 * _MiB
    max_event_bytes: int = 16 * _MiB
    max_events_per_stream: int = 1_000_000
    max_stream_bytes: int = 256 * _MiB
    max_json_bytes: int = 16 * _MiB
    max_json_depth: int = 64
    max_json_string_chars: int = 8 * _MiB
    max_json_int_digits: int = 1000
    max_fragments_per_call: int = 1_000_000
    max_argument_bytes: int = 8 * _MiB
    max_calls_per_turn: int = 256
    max_items_per_turn: int = 4096
    max_text_chars: int = 16 * _MiB
    max_media_part_bytes: int = 20 * _MiB
    max_parts_per_result: int = 100
    max_media_bytes_per_request: int = 50 * _MiB

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise UsageError(f"Limits.{field.name} must be a positive int, got {value!r}")
        if self.max_json_int_digits > 4300:
            # Python refuses int() conversion past 4300 digits by default; a bound above it
            # would turn a clean limit error into a bare ValueError.
            raise UsageError("Limits.max_json_int_digits cannot exceed 4300")
        if self.max_json_depth > 900:
            raise UsageError("Limits.max_json_depth cannot exceed 900 (C decoder recursion)")

    def replace(self, **changes: int) -> Limits:
        """A copy with some bounds changed (validated like the constructor)."""
        try:
            return dataclasses.replace(self, **changes)
        except TypeError as exc:
            raise UsageError(str(exc)) from None


DEFAULT_LIMITS = Limits()


def room_for_one_more(held: int, limits: Limits, what: str) -> None:
    """Raise :class:`LimitExceededError` (``too many <what>``) when a turn already holds
    ``max_items_per_turn`` of something and one more is about to be added."""
    if held >= limits.max_items_per_turn:
        raise LimitExceededError(
            f"too many {what}",
            limit="max_items_per_turn",
            bound=limits.max_items_per_turn,
            observed=held + 1,
        )
