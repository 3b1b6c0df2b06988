"""The provider registry: which protocols the mock serves, and each one's record.

A provider is one folder here (``openai_responses/``, ``anthropic_messages/``, ...) whose
``__init__`` builds one :class:`~._kit.Provider`: a record of plain functions and
constants the protocol-neutral engine (app, script, state, store, faults, validation)
calls instead of branching on a protocol name. Providers are a leaf layer: they import
the kit (:mod:`._kit`), the kernel and their room, never the engine; the folders are the
only place in the mock that imports a room's ``_render`` seam.

A new provider is one new folder building its :class:`Provider`, and one line in
``_MODULES``; the engine does not change. Folders are imported lazily, on first use, as
:mod:`callgate._protocols` imports rooms.
"""

from __future__ import annotations

import importlib
from typing import Final

from ..._protocols import PROTOCOLS as ROOM_PROTOCOLS
from ._kit import BaseUrl, Endpoint, Event, Ids, Provider, RenderedTurn

__all__ = [
    "PROTOCOLS",
    "BaseUrl",
    "Endpoint",
    "Event",
    "Ids",
    "Provider",
    "RenderedTurn",
    "protocol_of",
    "provider",
    "server_bases",
]

# One folder per served protocol; a room without a folder here is not served yet.
_MODULES: Final = {
    "openai_responses": "openai_responses",
    "openai_chat_completions": "openai_chat_completions",
    "anthropic_messages": "anthropic_messages",
    "gemini_interactions": "gemini_interactions",
    "gemini_generate_content": "gemini_generate_content",
}
PROTOCOLS: Final[tuple[str, ...]] = tuple(p for p in ROOM_PROTOCOLS if p in _MODULES)
"""The protocols the mock serves, in :data:`callgate._protocols.PROTOCOLS` order."""

_LOADED: dict[str, Provider] = {}


def provider(protocol: str) -> Provider:
    """The :class:`Provider` of ``protocol`` (``KeyError`` for one the mock does not serve)."""
    found = _LOADED.get(protocol)
    if found is None:
        module = importlib.import_module(f"{__name__}.{_MODULES[protocol]}")
        found = _LOADED[protocol] = module.PROVIDER
    return found


def protocol_of(path: str) -> str | None:
    """The protocol whose routes ``path`` is under, if any (the longest matching prefix
    wins: generateContent's ``/gemini/v1/models/`` lies inside Interactions' ``/gemini/``)."""
    found, longest = None, 0
    for protocol in PROTOCOLS:
        for prefix in provider(protocol).prefixes:
            if len(prefix) > longest and path.startswith(prefix):
                found, longest = protocol, len(prefix)
    return found


def server_bases() -> dict[str, str]:
    """Every ``MockServer`` base-URL attribute the providers name, and its path."""
    return {name: path for p in PROTOCOLS for name, path in provider(p).server_bases}
