"""Event-id dedup in fixed-size memory per seen id.

``event_id`` is a resume token (``GET .../interactions/{id}?last_event_id=``): a client that
resumes may see an event twice. The same id with the same payload is a re-delivery and is
skipped; the same id with another payload is a :class:`~callgate.SequenceError`.

"The same payload" is equality of the decoded JSON values, so a re-delivery serialised
with another key order or spacing is still recognised: each seen id keeps the 16-byte
BLAKE2b digest of its event's canonical JSON (the bytes of :func:`callgate.canonical_bytes`),
never the event text. An id of at most :data:`MAX_KEPT_ID_CHARS` characters is its own
key (no larger than a digest object); a longer one is keyed by its own digest, so a stream
of huge ids cannot make the table grow faster than by a constant per event.

A digest collision cannot release anything the stream did not carry: a false "same
payload" drops an event (which the sender could simply not have sent), and a false
"another payload" fails closed.
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
                canonical = _encode(obj).encode("utf-8")
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
