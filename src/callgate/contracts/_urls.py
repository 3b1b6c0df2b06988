"""The source-URL allowlist for baselines and fixtures.

This is **metadata hygiene, not authenticity**: a URL that passes points where we claim (an
official documentation host or the provider's own SDK repository), spelled in one
unambiguous way. Nothing here fetches the URL or proves that the content behind it says what
a baseline or fixture claims.

Rules (each failure is a :class:`~callgate.ProvenanceError` whose ``reason`` names the rule):

- The whole URL is printable ASCII (``non-ascii``, ``control-or-whitespace``), has no raw
  backslash (``backslash``) and is at most 2048 characters (``too-long``).
- The scheme is exactly ``https://`` in lower case (``scheme``).
- The authority has no userinfo: no ``@`` at all (``userinfo``) and no explicit port, not
  even ``:443`` (``port``); the host is a plain DNS name, never an IP literal
  (``ip-literal``), with no trailing dot (``trailing-dot``), that equals one of the
  provider's hosts exactly, ASCII case-insensitively (``host``). Lookalike prefixes,
  suffixes, subdomains and punycode labels never equal an allowed host.
- ``github.com`` paths must start with the provider's ``/<owner>/<repo>`` exactly as
  GitHub spells it, compared case-sensitively on the raw segments (``repository``); no
  query (``query``); a fragment only as a line anchor ``#L10`` / ``#L10-L20``
  (``fragment``).
- Path hygiene applies on every host and is checked per segment *before* percent-decoding:
  no empty segment (``empty-segment``; a single trailing slash is allowed), no ``.`` or
  ``..`` (``dot-segment``), no ``%2e`` (``encoded-dot``), ``%2f`` (``encoded-separator``),
  ``%5c`` (``backslash``), ``%25`` (``nested-encoding``), encoded control characters or
  space (``encoded-control``), malformed escapes (``bad-percent-encoding``) or characters
  outside RFC 3986 ``pchar`` (``character``). Queries and fragments on documentation hosts
  get the same escape checks.

``allow_local_source_urls=True`` additionally accepts ``http`` or ``https`` URLs whose host
is loopback: ``localhost``, ``[::1]``, or ``127.x.y.z`` written as a canonical dotted quad;
any port is allowed there. Userinfo and path hygiene still apply, and non-loopback hosts
get no extra latitude. Without the flag a loopback host fails with ``loopback-not-allowed``.
"""

from __future__ import annotations

import re

from .._errors import ProvenanceError, UsageError

__all__ = ["PROVIDERS", "validate_source_url"]

_MAX_URL_CHARS = 2048

# provider -> (documentation hosts, (GitHub owner, GitHub repository))
_ALLOWLIST: dict[str, tuple[frozenset[str], tuple[str, str]]] = {
    "openai": (
        frozenset({"platform.openai.com", "developers.openai.com"}),
        ("openai", "openai-python"),
    ),
    "anthropic": (
        frozenset({"docs.anthropic.com", "docs.claude.com", "platform.claude.com"}),
        ("anthropics", "anthropic-sdk-python"),
    ),
    "google": (
        frozenset({"ai.google.dev", "cloud.google.com", "docs.cloud.google.com"}),
        ("googleapis", "python-genai"),
    ),
}
PROVIDERS: tuple[str, ...] = tuple(sorted(_ALLOWLIST))

_GITHUB = "github.com"
_DNS_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_LOOPBACK_V4 = re.compile(rf"127\.{_OCTET}\.{_OCTET}\.{_OCTET}")
_IPV4_LIKE = re.compile(r"[0-9.]+|0[xX][0-9A-Fa-f.]*")
_PORT = re.compile(r"[0-9]{1,5}")
# RFC 3986 pchar without pct-encoded (handled separately): unreserved, sub-delims, ":", "@".
_PCHAR = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@"
)
_QUERY_CHARS = _PCHAR | frozenset("/?")
_HEX = frozenset("0123456789abcdefABCDEF")
_GITHUB_FRAGMENT = re.compile(r"L[1-9][0-9]*(?:-L[1-9][0-9]*)?")


def _fail(url: str, reason: str, detail: str) -> ProvenanceError:
    return ProvenanceError(
        f"source URL rejected ({reason}): {detail}: {url!r}", url=url, reason=reason
    )


def _check_escapes(url: str, text: str, allowed: frozenset[str], where: str) -> None:
    """Check one path segment, query or fragment as written (before any decoding)."""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) != 2 or not set(pair) <= _HEX:
                raise _fail(url, "bad-percent-encoding", f"malformed escape in {where}")
            byte = int(pair, 16)
            if byte == 0x2E:
                raise _fail(url, "encoded-dot", f"encoded '.' in {where}")
            if byte == 0x2F:
                raise _fail(url, "encoded-separator", f"encoded '/' in {where}")
            if byte == 0x5C:
                raise _fail(url, "backslash", f"encoded backslash in {where}")
            if byte == 0x25:
                raise _fail(url, "nested-encoding", f"encoded '%' in {where}")
            if byte <= 0x20 or byte == 0x7F:
                raise _fail(url, "encoded-control", f"encoded control or space in {where}")
            i += 3
            continue
        if ch not in allowed:
            raise _fail(url, "character", f"character {ch!r} not allowed in {where}")
        i += 1


def _check_path(url: str, path: str) -> list[str]:
    """Validate the path per raw segment; return the segments (without the leading '/')."""
    if not path:
        return []
    segments = path[1:].split("/")
    for index, segment in enumerate(segments):
        if segment == "":
            if index == len(segments) - 1:
                continue  # one trailing slash (or the root path "/")
            raise _fail(url, "empty-segment", "empty path segment ('//')")
        if segment in (".", ".."):
            raise _fail(url, "dot-segment", f"dot segment {segment!r} in path")
        _check_escapes(url, segment, _PCHAR, "path")
    return segments


def _is_loopback(host: str) -> bool:
    return host.lower() == "localhost" or host == "[::1]" or bool(_LOOPBACK_V4.fullmatch(host))


def _split_authority(url: str, authority: str) -> tuple[str, str | None]:
    """Return (host, port-text or None). No userinfo; IPv6 only as a bracketed literal."""
    if "@" in authority:
        raise _fail(url, "userinfo", "userinfo ('@') in authority")
    if not authority:
        raise _fail(url, "host", "empty host")
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise _fail(url, "host", "unterminated IP literal")
        host, rest = authority[: close + 1], authority[close + 1 :]
        if rest and not rest.startswith(":"):
            raise _fail(url, "host", "garbage after IP literal")
        port = rest[1:] if rest else None
    else:
        host, sep, port_text = authority.partition(":")
        port = port_text if sep else None
    if port is not None and (not _PORT.fullmatch(port) or not 0 < int(port) < 65536):
        raise _fail(url, "port", f"malformed port {port!r}")
    return host, port


def validate_source_url(url: str, *, provider: str, allow_local_source_urls: bool = False) -> str:
    """Return ``url`` unchanged if it is on ``provider``'s allowlist, else raise
    :class:`~callgate.ProvenanceError` with a short machine ``reason``.

    This is metadata hygiene (the URL points where we claim), **not** authenticity of the
    content behind it. See the module docstring for the exact rules. ``provider`` is one
    of ``"openai"``, ``"anthropic"``, ``"google"``; anything else is a
    :class:`~callgate.UsageError`.
    """
    if type(provider) is not str or provider not in _ALLOWLIST:
        raise UsageError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
    if type(url) is not str:
        raise UsageError(f"source URL must be a str, got {type(url).__name__}")
    if type(allow_local_source_urls) is not bool:
        raise UsageError("allow_local_source_urls must be a bool")
    if len(url) > _MAX_URL_CHARS:
        raise _fail(url[:80], "too-long", f"longer than {_MAX_URL_CHARS} characters")
    if not url.isascii():
        raise _fail(url, "non-ascii", "non-ASCII character (IDN and lookalikes are refused)")
    if any(ch <= " " or ch == "\x7f" for ch in url):
        raise _fail(url, "control-or-whitespace", "control character or whitespace")
    if "\\" in url:
        raise _fail(url, "backslash", "backslash")

    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("https", "http"):
        raise _fail(url, "scheme", "only https:// URLs are allowed")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    host, port = _split_authority(url, authority)

    tail, hash_sign, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    segments = _check_path(url, path)
    if question:
        _check_escapes(url, query, _QUERY_CHARS, "query")
    if hash_sign:
        _check_escapes(url, fragment, _QUERY_CHARS, "fragment")

    if _is_loopback(host):
        if not allow_local_source_urls:
            raise _fail(url, "loopback-not-allowed", "loopback host without opt-in")
        return url

    if scheme != "https":
        raise _fail(url, "scheme", "only https:// URLs are allowed")
    if port is not None:
        raise _fail(url, "port", "explicit port (only the default port is allowed)")
    if host.startswith("[") or _IPV4_LIKE.fullmatch(host):
        raise _fail(url, "ip-literal", "IP literal host")
    if not _DNS_NAME.fullmatch(host):
        raise _fail(url, "host", "host is not a plain DNS name")
    if host.endswith("."):
        raise _fail(url, "trailing-dot", "trailing dot in host")

    hosts, (owner, repo) = _ALLOWLIST[provider]
    lowered = host.lower()
    if lowered == _GITHUB:
        if len(segments) < 2 or segments[0] != owner or segments[1] != repo:
            raise _fail(url, "repository", f"not under github.com/{owner}/{repo}")
        if question:
            raise _fail(url, "query", "query on a GitHub URL")
        if hash_sign and not _GITHUB_FRAGMENT.fullmatch(fragment):
            raise _fail(url, "fragment", "GitHub fragment must be a line anchor like #L10-L20")
        return url
    if lowered not in hosts:
        raise _fail(url, "host", f"host {host!r} is not an official {provider} host")
    return url
