"""Consistent pseudonyms for provider ids, so a recording can be shared without them.

Opt in with ``Recorder(directory, pseudonymize=True)``. When a capture finishes, every
value of an id-bearing JSON key (``"id"``, ``"call_id"``, ``"tool_use_id"``,
``"previous_response_id"`` ...) in the request body and the response bytes, and the
``request-id`` headers, are learned; then every occurrence of a learned value, anywhere in
that capture's files, is replaced by its pseudonym. One recorder keeps one table, so the
same provider id gets the same pseudonym in every file it writes (a second turn's
``previous_response_id`` still names the first turn's response).

A pseudonym keeps the id's prefix (``resp_``, ``toolu_``, ``call_``) and its length, and
the rest is drawn from a keyed hash with a per-recorder random key: the stream's byte
offsets and chunk sizes stay valid, and the original cannot be recovered from the file.
Byte-exactness then holds for the pseudonymised bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
import threading
from collections.abc import Iterable
from typing import Final

from .._errors import ContractError

__all__ = ["Pseudonyms"]

_ID_KEYS: Final = (
    "id",
    "call_id",
    "tool_use_id",
    "item_id",
    "response_id",
    "interaction_id",
    "previous_response_id",
    "previous_interaction_id",
    "request_id",
)
_KEYED: Final = re.compile(
    rb'"(?:' + b"|".join(k.encode() for k in _ID_KEYS) + rb')"\s*:\s*"([A-Za-z0-9_\-]{8,200})"'
)
_TOKEN: Final = re.compile(rb"[A-Za-z0-9_\-]{8,200}")
_PREFIX: Final = re.compile(r"[A-Za-z0-9]{1,12}[_\-]")
_HEX: Final = frozenset(string.hexdigits.lower())
_ALNUM: Final = string.ascii_letters + string.digits


class Pseudonyms:
    """One recorder's table: provider id -> pseudonym, learned across its captures."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        self._table: dict[bytes, bytes] = {}
        self._used: set[bytes] = set()
        self._lock = threading.Lock()

    def learn(self, data: bytes) -> None:
        """Learn the id values that ``data`` carries under id-bearing keys."""
        self.learn_values(m.group(1) for m in _KEYED.finditer(data))

    def learn_values(self, values: Iterable[bytes]) -> None:
        with self._lock:
            for value in values:
                if len(value) >= 8 and value not in self._table and value not in self._used:
                    self._table[value] = self._pseudonym(value)

    def apply(self, data: bytes) -> bytes:
        """``data`` with every learned id (as a whole token) replaced by its pseudonym."""
        table = self._table
        return _TOKEN.sub(lambda m: table.get(m.group(0), m.group(0)), data)

    def __len__(self) -> int:
        return len(self._table)

    def _pseudonym(self, value: bytes) -> bytes:
        text = value.decode("ascii")
        match = _PREFIX.match(text)
        prefix = match.group(0) if match and len(match.group(0)) * 2 <= len(text) else ""
        rest = text[len(prefix) :]
        alphabet = "0123456789abcdef" if set(rest) <= _HEX else _ALNUM
        for attempt in range(1000):
            digest = hmac.new(self._key, value + bytes([attempt % 256]), hashlib.sha512).digest()
            drawn = "".join(alphabet[b % len(alphabet)] for b in (digest * 4)[: len(rest)])
            candidate = (prefix + drawn).encode()
            if candidate not in self._used and candidate not in self._table:
                self._used.add(candidate)
                return candidate
        raise ContractError("no free pseudonym after 1000 draws")  # pragma: no cover
