"""What the mock checks before a route runs, and the neutral error shape of its own routes.

Requests must name a loopback ``Host`` (or an allowed one): a web page that rebinds its
DNS name to 127.0.0.1 could otherwise read the journal. Bodies are read chunk by chunk
and never past the server's limit.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from ._http import own_error
from ._journal import BODY_PREFIX, JournalEntry
from ._providers import protocol_of, provider

__all__ = [
    "BodyTooLargeError",
    "HostCheck",
    "error",
    "host_is_loopback",
    "protocol_of",
    "read_body",
    "route_names",
]

_LOOPBACK_NAMES = frozenset({"localhost", "::1"})


def error(protocol: str | None, status: int, message: str) -> dict[str, Any]:
    """The error body of ``protocol``'s API, or callgate's own for the mock's routes."""
    if protocol is not None:
        return provider(protocol).error_body(status, message)
    return own_error(status, message)


def route_names(routes: Sequence[Route]) -> list[str]:
    return [f"{'|'.join(sorted((r.methods or set()) - {'HEAD'}))} {r.path}" for r in routes]


def _host_of(value: str) -> str:
    """The host name of a ``Host`` header value, lower-cased, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def host_is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, maybe with a port) is a loopback one."""
    return _loopback(_host_of(host))


def _loopback(name: str) -> bool:
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostCheck:
    """Which ``Host`` header values are served: loopback names and ``allowed`` ones."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self._names = frozenset(_host_of(h) for h in allowed)
        self._memo: dict[bytes, bool] = {}  # Host header value -> allowed

    def __call__(self, host: bytes) -> bool:
        found = self._memo.get(host)
        if found is None:
            name = _host_of(host.decode("latin-1"))
            found = name in self._names or _loopback(name)
            if len(self._memo) >= 64:
                self._memo.clear()  # Host values come from clients: keep the memo bounded
            self._memo[host] = found
        return found


class BodyTooLargeError(Exception):
    """The request body is over the server's limit (``entry`` holds a prefix and size)."""


async def read_body(request: Request, entry: JournalEntry, limit: int) -> bytes:
    """The request body, read chunk by chunk and never past ``limit`` bytes: over it,
    ``entry`` keeps a :data:`BODY_PREFIX`-character prefix and the size (the declared
    ``content-length``, else the bytes read so far) and :class:`BodyTooLargeError` is raised."""
    declared = entry.headers.get("content-length", "")
    too_big = declared.isdigit() and int(declared) > limit
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit or (too_big and size >= BODY_PREFIX):
            too_big = True
            break
    raw = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    entry.body_size = int(declared) if too_big and declared.isdigit() else size
    if too_big:
        entry.body = raw[:BODY_PREFIX].decode("utf-8", "replace")
        raise BodyTooLargeError
    return raw
