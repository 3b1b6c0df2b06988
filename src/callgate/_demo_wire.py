"""What every ``callgate demo`` scenario does on the wire: POST a request to the mock and
feed the streamed answer, byte for byte, to a room's parser."""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["stream_turn"]


def stream_turn(
    client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str], parser: Any
) -> Any:
    """The Turn ``parser`` makes of the stream answering ``body``; an HTTP error is a
    ``RuntimeError`` carrying the provider's body."""
    with client.stream("POST", url, json=body, headers=headers) as resp:
        if resp.status_code != 200:
            resp.read()
            raise RuntimeError(f"HTTP {resp.status_code}: {resp.text}")
        for chunk in resp.iter_raw():
            parser.feed_bytes(chunk)
    return parser.finish()
