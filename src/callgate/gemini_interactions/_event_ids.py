"""Event-id dedup of one Interactions stream (:class:`EventIds`).

``event_id`` is a resume token (``GET ...?last_event_id=``), so a client that resumes may
see an event twice. The same id with an equal decoded payload (key order and spacing
ignored) is skipped; with another payload it is a :class:`~callgate.SequenceError`.
Each seen id keeps the 16-byte BLAKE2b digest of its event's canonical JSON (the bytes of
:func:`callgate.canonical_bytes`), never the text; an id longer than
:data:`MAX_KEPT_ID_CHARS` is keyed by its own digest, so memory per id is constant. A
digest collision cannot release anything the stream did not carry: a false "same payload"
drops an event (which the sender could simply not have sent), a false "another payload"
fails closed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from hashlib import blake2b
from typing import Any

from .._errors import SchemaError, SequenceError

__all__ = ["MAX_KEPT_ID_CHARS", "EventIds"]

MAX_KEPT_ID_CHARS = 64
_DIGEST_BYTES = 16
# The canonical encoder's settings (callgate._digest). A decoded event is already strict
# JSON (loads_strict checked its keys, numbers, strings and depth), so the canonical
# validation walk, most of canonical_bytes' cost on a small event, is not repeated.
_CANONICAL = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
)


def _unencodable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _make_encode() -> Callable[[Any], str]:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return _CANONICAL.encode
    # The accelerator JSONEncoder.encode builds on every call, made once (about a third
    # of the time of an encode of a small event). The same arguments as _CANONICAL's.
    chunks = make(
        None, _unencodable, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    join = "".join
    return lambda value: join(chunks(value, 0))


_encode = _make_encode()
_quote = json.encoder.encode_basestring  # the canonical encoder's string writer


def _canonical_text(obj: dict[str, Any]) -> str:
    """``_encode(obj)``; the hot shape (exactly ``event_type``, ``event_id``, ``index`` and a
    two-string ``delta``) as one f-string, which costs half the C encoder's per-call setup
    and key sort. Any other shape, extra keys included, goes through the encoder."""
    if len(obj) == 4:
        delta, index = obj.get("delta"), obj.get("index")
        event_type, event_id = obj.get("event_type"), obj.get("event_id")
        if (
            type(delta) is dict
            and len(delta) == 2
            and type(index) is int
            and type(event_type) is str
            and type(event_id) is str
        ):
            (k1, v1), (k2, v2) = delta.items()
            if type(k1) is str and type(k2) is str and type(v1) is str and type(v2) is str:
                if k2 < k1:
                    k1, v1, k2, v2 = k2, v2, k1, v1
                return (
                    f'{{"delta":{{{_quote(k1)}:{_quote(v1)},{_quote(k2)}:{_quote(v2)}}},'
                    f'"event_id":{_quote(event_id)},"event_type":{_quote(event_type)},'
                    f'"index":{int.__repr__(index)}}}'
                )
    return _encode(obj)


def _digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=_DIGEST_BYTES).digest()


class EventIds:
    """The ids seen in one stream, each with the digest of its event's payload."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str | bytes, bytes] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def is_replay(self, event_id: str, obj: dict[str, Any], canonical: bytes | None) -> bool:
        """Record ``event_id`` for the event ``obj``; True when it is a re-delivery.

        ``canonical`` is the event's canonical JSON when the caller already has it (decoded
        events), else ``None`` and it is computed here. Raises :class:`SequenceError` when
        the id was seen with another payload.
        """
        if canonical is None:
            try:
                canonical = _canonical_text(obj).encode("utf-8")
            except (
                TypeError,
                ValueError,
                RecursionError,
            ) as exc:  # only past the interpreter's bounds
                raise SchemaError(f"event cannot be canonicalised: {exc}") from None
        digest = _digest(canonical)
        key: str | bytes = event_id
        if len(event_id) > MAX_KEPT_ID_CHARS:
            # str keys and bytes keys never compare equal, so the two kinds cannot clash.
            key = _digest(event_id.encode("utf-8", "surrogatepass"))
        seen = self._seen.setdefault(key, digest)
        if seen is digest:
            return False
        if seen == digest:
            return True
        raise SequenceError(f"event_id {event_id[:100]!r} replayed with another payload")
