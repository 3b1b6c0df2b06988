"""Tool results with parts, an audit value or Internal markers, as the ledger stores them.

A result column holds JSON. A plain result (a ``str`` or JSON output, no audit value, no
:class:`~callgate.Internal` marker) keeps the original envelope
``{"output": ..., "is_error": ...}`` byte for byte. Anything else is written as::

    {"is_error": false, "parts": [{"type": "text", "text": "..."},
                                  {"type": "media", "kind": "image", "media_type": "image/png",
                                   "digest": "<sha256 hex>", "size": 5242880}],
     "audit": {...}}

or, for a JSON output that holds Internal markers, ``"output"`` with ``null`` where each
marker sat and ``"internal": [{"path": [...], "value": ...}]`` to put them back.

The bytes of an inline media part live once in ``ledger_blobs``, keyed by their SHA-256
digest, and are written in the same transaction as the result that references them: a
crash rolls both back, so no result ever names a missing blob, and the same image settled
by three attempts (or fenced into ``late_results``) is one row. Reading verifies the
digest: a row that does not hash to its key raises :class:`LedgerError`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .._digest import canonical_bytes
from .._errors import UsageError
from .._media import Internal, MediaPart, TextPart
from .._results import ToolResult, contains_internal
from ._model import LedgerError
from ._store import Tx

__all__ = ["as_output", "decode_result", "encode_result", "get_blob", "put_blob", "summary"]

_ENVELOPE_KEYS = frozenset({"output", "is_error"})


def _json(value: Any) -> Any:
    """``value`` if it is JSON (it is stored as such), else its ``repr``."""
    try:
        canonical_bytes(value)
    except UsageError:
        return repr(value)
    return value


def as_output(value: Any) -> tuple[Any, bool, Any] | None:
    """(output, is_error, audit) for what a tool returned when it is a :class:`ToolResult`
    (its ``call_id`` is not used: the effect knows its call), a tuple of parts, or a value
    holding an :class:`Internal` marker; None for a plain value (the text-only path)."""
    if isinstance(value, ToolResult):
        return value.output, value.is_error, value.audit
    if type(value) is tuple and value and all(_is_part(p) for p in value):
        return value, False, None
    if type(value) in (Internal, dict, list) and contains_internal(value):
        return value, False, None
    return None


def _is_part(value: Any) -> bool:
    return type(value) in (TextPart, MediaPart, Internal)


def put_blob(tx: Tx, digest: str, data: bytes) -> None:
    """Store ``data`` under its digest unless a row has it already (content-addressed)."""
    if tx.one("SELECT 1 FROM ledger_blobs WHERE digest = ?", (digest,)) is None:
        tx.run(
            "INSERT INTO ledger_blobs (digest, size, data, created_at) VALUES (?, ?, ?, {now}) "
            "ON CONFLICT (digest) DO NOTHING",
            (digest, len(data), data),
        )


def get_blob(tx: Tx, digest: str) -> bytes:
    row = tx.one("SELECT data FROM ledger_blobs WHERE digest = ?", (digest,))
    if row is None:
        raise LedgerError(f"the ledger has no blob {digest}: a result names missing media")
    data = bytes(row[0])
    if hashlib.sha256(data).hexdigest() != digest:
        raise LedgerError(f"blob {digest} does not hash to its digest: the row was altered")
    return data


def _encode_part(tx: Tx, part: Any) -> dict[str, Any]:
    if type(part) is TextPart:
        return {"type": "text", "text": part.text}
    if type(part) is Internal:
        return {"type": "internal", "value": _json(part.value)}
    out: dict[str, Any] = {"type": "media", "kind": part.kind}
    for name in ("media_type", "filename", "url", "file_id"):
        if getattr(part, name) is not None:
            out[name] = getattr(part, name)
    if part.data is not None:
        put_blob(tx, part.digest, part.data)
        out["digest"] = part.digest
        out["size"] = part.size
    return out


def _strip(value: Any, path: list[Any], found: list[dict[str, Any]]) -> Any:
    """``value`` with each Internal replaced by None; the markers go to ``found``."""
    if type(value) is Internal:
        found.append({"path": list(path), "value": _json(value.value)})
        return None
    if type(value) is dict:
        return {k: _strip(v, [*path, k], found) for k, v in value.items()}
    if type(value) is list:
        return [_strip(v, [*path, i], found) for i, v in enumerate(value)]
    return value


def encode_result(tx: Tx, output: Any, is_error: bool, audit: Any = None) -> str:
    """The result column's text; media bytes go to ``ledger_blobs`` in ``tx``. A plain
    result gives exactly the text the text-only ledger wrote (canonical JSON, sorted keys)."""
    envelope: dict[str, Any] = {"is_error": is_error}
    if type(output) is tuple:
        envelope["parts"] = [_encode_part(tx, part) for part in output]
    else:
        found: list[dict[str, Any]] = []
        envelope["output"] = _strip(output, [], found)
        if found:
            envelope["internal"] = found
    if audit is not None:
        envelope["audit"] = audit
    return canonical_bytes(envelope).decode("utf-8")


def _decode_part(tx: Tx, stored: dict[str, Any]) -> Any:
    if stored["type"] == "text":
        return TextPart(stored["text"])
    if stored["type"] == "internal":
        return Internal(stored["value"])
    data = get_blob(tx, stored["digest"]) if "digest" in stored else None
    return MediaPart(
        stored["kind"],
        media_type=stored.get("media_type"),
        data=data,
        url=stored.get("url"),
        file_id=stored.get("file_id"),
        filename=stored.get("filename"),
    )


def _restore(output: Any, internal: list[dict[str, Any]]) -> Any:
    for marker in internal:
        path = marker["path"]
        if not path:
            return Internal(marker["value"])
        holder = output
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = Internal(marker["value"])
    return output


def decode_result(tx: Tx | None, call_id: str, stored: dict[str, Any]) -> ToolResult:
    """The :class:`ToolResult` a result column holds (``stored`` is its parsed JSON)."""
    is_error = bool(stored["is_error"])
    if stored.keys() == _ENVELOPE_KEYS:
        return ToolResult(call_id, stored["output"], is_error)
    if "parts" in stored:
        if tx is None:
            raise LedgerError("a result with parts is read inside a transaction")
        output: Any = tuple(_decode_part(tx, part) for part in stored["parts"])
    else:
        output = _restore(stored["output"], stored.get("internal", []))
    return ToolResult(call_id, output, is_error, audit=stored.get("audit"))


def _part_summary(part: Any) -> dict[str, Any]:
    if type(part) is TextPart:
        return {"type": "text", "chars": len(part.text)}
    if type(part) is Internal:
        return {"type": "internal"}
    out: dict[str, Any] = {"type": part.kind, "media_type": part.media_type}
    if part.data is not None:
        out.update(size=part.size, digest=part.digest)
    elif part.url is not None:
        out["url"] = part.url
    else:
        out["file_id"] = part.file_id
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def summary(result: ToolResult) -> dict[str, Any]:
    """A JSON view of a result for operators: a text/JSON output as stored; for parts, each
    part's kind, media type, size and digest (never the bytes); the audit value if any."""
    out: dict[str, Any] = {"is_error": result.is_error}
    if type(result.output) is tuple:
        out["parts"] = [_part_summary(part) for part in result.output]
    elif contains_internal(result.output):
        out["output"] = _strip(result.output, [], [])
        out["internal"] = True
    else:
        out["output"] = result.output
    if result.audit is not None:
        out["audit"] = result.audit
    return out
