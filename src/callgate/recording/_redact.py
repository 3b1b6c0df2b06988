"""Redaction by allowlist: only named headers survive, credential query parameters never do.

A recording keeps what a replay or a drift check needs (content type, the provider's
version and beta headers, request ids, rate-limit state) and nothing else: a header that is
not on the list is dropped whole, so a new credential header (``x-goog-api-key`` today,
something else tomorrow) cannot leak by being unknown.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from typing import Final

__all__ = [
    "KEPT_REQUEST_HEADERS",
    "KEPT_RESPONSE_HEADERS",
    "keep_headers",
    "redact_url",
]

KEPT_REQUEST_HEADERS: Final = frozenset(
    {
        "accept",
        "anthropic-beta",
        "anthropic-version",
        "content-type",
        "openai-beta",
        "user-agent",
        "x-stainless-arch",
        "x-stainless-lang",
        "x-stainless-os",
        "x-stainless-package-version",
        "x-stainless-runtime",
        "x-stainless-runtime-version",
        "x-goog-api-client",
    }
)
KEPT_RESPONSE_HEADERS: Final = frozenset(
    {
        "content-type",
        "openai-processing-ms",
        "openai-version",
        "request-id",
        "retry-after",
        "x-request-id",
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-tokens-limit",
        "anthropic-ratelimit-tokens-remaining",
        "x-ratelimit-limit-requests",
        "x-ratelimit-limit-tokens",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-remaining-tokens",
    }
)
# Query parameters that carry credentials on some provider (Gemini takes ``?key=``).
_CREDENTIAL_PARAMS: Final = frozenset(
    {"key", "api_key", "apikey", "api-key", "access_token", "token", "sig", "signature"}
)


def keep_headers(headers: Iterable[tuple[str, str]], kept: frozenset[str]) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs whose lowercased name is in ``kept``, names lowercased,
    in their original order (repeated headers stay repeated)."""
    return [(name.lower(), value) for name, value in headers if name.lower() in kept]


def redact_url(url: str) -> str:
    """``url`` without userinfo and without credential query parameters.

    Parameter names are compared after percent-decoding and lowercasing, so ``%6Bey=`` is a
    ``key``; the kept parameters keep their original spelling and order.
    """
    parts = urllib.parse.urlsplit(url)
    netloc = parts.hostname or ""
    if ":" in netloc:  # an IPv6 literal
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    kept = [
        piece
        for piece in parts.query.split("&")
        if piece and _param_name(piece) not in _CREDENTIAL_PARAMS
    ]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), ""))


def _param_name(piece: str) -> str:
    name = piece.split("=", 1)[0]
    return urllib.parse.unquote_plus(name).strip().lower()
