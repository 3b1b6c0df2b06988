"""Strict Server-Sent Events: a sans-IO decoder and a canonical encoder."""

from ._decoder import ServerSentEvent, SSEDecoder
from ._encoder import encode_event, encode_json_events

__all__ = ["SSEDecoder", "ServerSentEvent", "encode_event", "encode_json_events"]
