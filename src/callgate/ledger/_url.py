"""Ledger URLs: which store a URL names, and how to name it in an error without its secrets.

``sqlite:///relative.db`` and ``sqlite:////absolute.db`` (SQLAlchemy's spelling: the path is
everything after the third slash), ``postgresql://`` or ``postgres://`` (libpq's URI form).
Every error that names a database names it through :func:`redact`: a password, in the
user-info part or as a ``password=`` parameter, never reaches a log line.
"""

from __future__ import annotations

import re
import urllib.parse

from .._errors import UsageError

__all__ = ["redact", "scrub", "sqlite_path", "store_kind"]

_PASSWORD_PARAM = re.compile(r"(password\s*=\s*)('[^']*'|[^&\s]*)", re.IGNORECASE)


def _userinfo_end(rest: str) -> int:
    """Where the user-info of ``scheme://rest`` ends (its last ``@``), or -1. A password
    may hold characters a URL parser would split on if the user did not percent-encode
    them: the last ``@`` before the query wins, and any ``@`` when none is before it."""
    query = rest.find("?")
    at = rest.rfind("@", 0, query if query >= 0 else len(rest))
    return at if at >= 0 else rest.rfind("@")


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (``postgresql://user:***@host/db``)."""
    text = str(url)
    scheme, sep, rest = text.partition("://")
    if sep and scheme != "sqlite":  # a SQLite path holds no password, only a file name
        at = _userinfo_end(rest)
        if at >= 0:
            user, colon, _ = rest[:at].partition(":")
            rest = f"{user}{colon}{'***' if colon else ''}{rest[at:]}"
        text = f"{scheme}{sep}{rest}"
    return _PASSWORD_PARAM.sub(r"\1***", text)


def _secrets(url: str) -> list[str]:
    found: list[str] = []
    scheme, sep, rest = str(url).partition("://")
    at = _userinfo_end(rest) if sep and scheme != "sqlite" else -1
    if at >= 0:
        _, colon, password = rest[:at].partition(":")
        if colon and password:
            found += [password, urllib.parse.unquote(password)]
    for match in _PASSWORD_PARAM.finditer(str(url)):
        value = match.group(2).strip("'")
        if value:
            found += [value, urllib.parse.unquote(value)]
    return sorted(set(found), key=len, reverse=True)


def scrub(message: object, url: str) -> str:
    """A driver's error message as one line, with any password of ``url`` masked (libpq
    messages can quote the part of a connection string they could not parse)."""
    text = " ".join(str(message).split())
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text or "no reason given"


def store_kind(url: str) -> str:
    """``"sqlite"`` or ``"postgres"``; :class:`UsageError` for anything else."""
    if type(url) is not str:
        raise UsageError("the ledger URL must be a str")
    try:
        scheme = urllib.parse.urlsplit(url).scheme
    except ValueError as exc:
        raise UsageError(f"malformed ledger URL {redact(url)!r}: {scrub(exc, url)}") from None
    if scheme == "sqlite":
        return "sqlite"
    if scheme in ("postgresql", "postgres"):
        return "postgres"
    raise UsageError(
        f"unsupported ledger URL {redact(url)!r}: the scheme must be sqlite "
        "(sqlite:///relative.db, sqlite:////absolute.db) or postgresql (postgresql://...)"
    )


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:///`` URL names: relative after three slashes, absolute after four."""
    path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
    if not path or path.startswith("?"):
        raise UsageError(
            f"malformed SQLite ledger URL {redact(url)!r}: write sqlite:///relative.db "
            "or sqlite:////absolute/path.db"
        )
    return path
