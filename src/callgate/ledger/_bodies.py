"""Model request bodies in the ledger: long strings stored once per digest.

A stateless continuation replays the whole history, so a screenshot a tool returned in
turn 1 is in every later request body as base64; recorded as it is, a run of N turns would
store it N times (and a computer-use loop, one screenshot per turn, quadratically). A JSON
string of :data:`BLOB_CHARS` characters or more in a body is therefore written to
``ledger_blobs`` (its UTF-8 bytes, keyed by their SHA-256) and left empty in ``body``;
``body_blobs`` lists ``[path, digest]`` to put it back. Both are written in the request's
transaction, and :class:`RequestRecord` bodies read back equal to what was recorded (the
request digest the loop computed still holds).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from .._digest import canonical_bytes
from ._model import LedgerError
from ._parts import get_blob, put_blob
from ._store import Tx

__all__ = ["BLOB_CHARS", "join_body", "split_body"]

BLOB_CHARS: Final = 64 * 1024


def _strip(tx: Tx, value: Any, path: list[Any], refs: list[list[Any]]) -> Any:
    if type(value) is str:
        if len(value) < BLOB_CHARS:
            return value
        data = value.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        put_blob(tx, digest, data)
        refs.append([list(path), digest])
        return ""
    if type(value) is dict:
        return {k: _strip(tx, v, [*path, k], refs) for k, v in value.items()}
    if type(value) is list:
        return [_strip(tx, v, [*path, i], refs) for i, v in enumerate(value)]
    return value


def split_body(tx: Tx, body: Any, text: str) -> tuple[str, str | None]:
    """(``body`` column, ``body_blobs`` column) for a body whose canonical JSON is
    ``text``; long strings go to the blob table in ``tx``."""
    if len(text) < BLOB_CHARS:  # no string in it can be that long
        return text, None
    refs: list[list[Any]] = []
    stripped = _strip(tx, body, [], refs)
    if not refs:
        return text, None
    return canonical_bytes(stripped).decode("utf-8"), canonical_bytes(refs).decode("utf-8")


def join_body(tx: Tx | None, body: Any, refs_text: str | None) -> Any:
    """The recorded body, its long strings read back from the blob table."""
    if refs_text is None:
        return body
    if tx is None:
        raise LedgerError("a body with stored strings is read inside a transaction")
    for path, digest in json.loads(refs_text):
        text = get_blob(tx, digest).decode("utf-8")
        if not path:
            return text
        holder = body
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = text
    return body
