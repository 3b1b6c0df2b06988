"""Strict Server-Sent Events: a sans-IO decoder, a canonical encoder, and the strict
``data:``-only framer of generateContent streams."""

from ._data import DataFramer
from ._decoder import SSEDecoder
from ._encoder import encode_event, encode_json_events
from ._event import ServerSentEvent

__all__ = ["DataFramer", "SSEDecoder", "ServerSentEvent", "encode_event", "encode_json_events"]
