"""The secret scanner: nothing is written if anything in it looks like a credential.

Redaction decides what is kept; the scanner is the second, independent check over every
byte a recording would write (request body, response bytes, kept headers, metadata). It
looks for each provider's key shapes, bearer tokens, and long high-entropy values in
header-like places (``name: value`` or ``"name": "value"`` where the name says key, token,
secret, password, auth, cookie or credential). Protocol fields that are opaque by design
(``signature``, ``thoughtSignature``, ``encrypted_content``) are not credentials and are not
matched. A hit names the part, the offset and the rule, never the secret itself.

Inline media (a tool result's screenshot or PDF as a base64 data URL, or a ``"data"`` /
``"file_data"`` string of 256 or more base64 characters that decodes) are binary, not
text: a few hundred KB of image data carry a key-shaped run (``AIza`` + 35 characters,
``sk-`` + 20 in URL-safe base64) by chance. The recorder scans its request body and
metadata through :func:`mask_media`, which blanks those payloads only (same length, so
every other hit keeps its offset); anything shorter, or not base64, is scanned as before.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from .._errors import ContractError

__all__ = ["SecretFoundError", "SecretHit", "check_no_secrets", "mask_media", "scan"]

# (rule name, pattern). Lengths follow the providers' published key formats with slack.
_RULES: Final = (
    ("anthropic-key", re.compile(rb"sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(rb"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("google-api-key", re.compile(rb"AIza[0-9A-Za-z_\-]{35}")),
    ("google-oauth-token", re.compile(rb"ya29\.[0-9A-Za-z_\-]{20,}")),
    ("aws-access-key", re.compile(rb"(?:AKIA|ASIA)[0-9A-Z]{16}")),
    ("private-key", re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)
_BEARER: Final = re.compile(rb"bearer\s+[a-z0-9._~+/\-]{16,}=*")
# Header-like credentials are found from the credential word on, in a lowercased copy
# (same offsets): a case-insensitive regex with a leading name class backtracked at every
# byte and cost ~1 µs per scanned byte.
_CREDENTIAL_WORDS: Final = (
    b"key", b"token", b"secret", b"password", b"passwd", b"auth", b"cookie", b"credential",
)  # fmt: skip
_AFTER_WORD: Final = re.compile(
    rb"""[a-z0-9_\-]*["']?\s*[:=]\s*["']?(?P<value>[a-z0-9+/_=.\-]{24,})"""
)
# Large inputs are scanned in windows (bounded memory); a match may cross into the overlap.
_WINDOW: Final = 1 << 18
_OVERLAP: Final = 1 << 13
_MIN_ENTROPY_BITS: Final = 3.5  # per character; English words and ids sit well below
_DATA_URL: Final = re.compile(rb"data:[\w.+\-]+/[\w.+\-]+;base64,([A-Za-z0-9+/]{256,}={0,2})")
_KEYED_DATA: Final = re.compile(rb'"(?:data|file_data)"\s*:\s*"([A-Za-z0-9+/_\-]{256,}={0,2})"')


def _decodes(payload: bytes) -> bool:
    text = payload.replace(b"-", b"+").replace(b"_", b"/")
    try:
        base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def mask_media(data: bytes) -> bytes:
    """``data`` with each inline base64 media payload replaced by as many ``A`` (see the
    module docstring); ``data`` itself when it holds none."""
    spans = [
        m.span(1)
        for pattern in (_DATA_URL, _KEYED_DATA)
        for m in pattern.finditer(data)
        if _decodes(m.group(1))
    ]
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = b"A" * (end - start)
    return bytes(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretHit:
    """Where a secret-looking value was found: the part's name, its byte offset, the rule."""

    part: str
    offset: int
    rule: str

    def __str__(self) -> str:
        return f"{self.part} at byte {self.offset}: {self.rule}"


class SecretFoundError(ContractError):
    """A recording would contain something that looks like a credential; nothing was written.

    ``hits`` lists where (part, offset, rule); the values are never repeated.
    """

    def __init__(self, hits: tuple[SecretHit, ...]) -> None:
        shown = "; ".join(str(h) for h in hits[:5])
        more = f" (+{len(hits) - 5} more)" if len(hits) > 5 else ""
        super().__init__(f"refusing to write a recording with a secret in it: {shown}{more}")
        self.hits = hits


def _entropy(value: bytes) -> float:
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def scan(part: str, data: bytes) -> list[SecretHit]:
    """Every secret-looking span of ``data`` (bytes or an mmap), as hits naming ``part``."""
    size = len(data)
    if size <= _WINDOW + _OVERLAP:
        return sorted(set(_scan_block(part, bytes(data), 0)), key=_order)
    hits: set[SecretHit] = set()
    for start in range(0, size, _WINDOW):
        block = data[start : start + _WINDOW + _OVERLAP]
        last = start + _WINDOW >= size
        hits.update(
            h for h in _scan_block(part, block, start) if last or h.offset < start + _WINDOW
        )
    return sorted(hits, key=_order)


def _order(hit: SecretHit) -> tuple[str, int, str]:
    return (hit.part, hit.offset, hit.rule)


def _scan_block(part: str, data: bytes, base: int) -> list[SecretHit]:
    hits = [
        SecretHit(part=part, offset=base + m.start(), rule=rule)
        for rule, pattern in _RULES
        for m in pattern.finditer(data)
    ]
    low = data.lower()  # case-insensitive rules run on this copy (same offsets)
    hits += [
        SecretHit(part=part, offset=base + m.start(), rule="bearer-token")
        for m in _BEARER.finditer(low)
    ]
    for word in _CREDENTIAL_WORDS:
        at = low.find(word)
        while at != -1:
            m = _AFTER_WORD.match(low, at + len(word))
            if m is not None and _entropy(data[m.start("value") : m.end("value")]) >= (
                _MIN_ENTROPY_BITS
            ):
                hits.append(
                    SecretHit(
                        part=part, offset=base + m.start("value"), rule="high-entropy-credential"
                    )
                )
            at = low.find(word, at + 1)
    return hits


def check_no_secrets(parts: dict[str, bytes]) -> None:
    """Raise :class:`SecretFoundError` if any part holds a secret-looking value."""
    hits = tuple(hit for name, data in parts.items() for hit in scan(name, data))
    if hits:
        raise SecretFoundError(hits)
