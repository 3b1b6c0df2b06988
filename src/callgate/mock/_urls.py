"""The base URL each client family expects, per protocol, for a mock at ``root``.

Client libraries disagree on where the base URL ends: the official SDKs append the API
version themselves for Anthropic (``/v1/messages``) and Gemini (``api_version``), while
others (the Vercel AI SDK's ``createAnthropic`` / ``createGoogleGenerativeAI``) take a base
that already holds the version segment. ``callgate serve`` prints this table; each row
comes from its provider's record (``Provider.base_urls``) and reaches the provider's
routes once its client appends its own path (``create``).
"""

from __future__ import annotations

from ._providers import PROTOCOLS, provider
from ._providers._kit import BaseUrl

__all__ = ["BaseUrl", "base_urls"]


def base_urls(root: str) -> tuple[BaseUrl, ...]:
    """Every row for a mock served at ``root`` (``http://host:port``, no trailing slash):
    each provider's rows (its record's ``base_urls``), in protocol order."""
    return tuple(
        BaseUrl(row.api, row.clients, root + row.url, row.create)
        for protocol in PROTOCOLS
        for row in provider(protocol).base_urls
    )
