"""The parts of a multimodal tool result, and the marker for host-only data.

A tool result the model sees is either a plain value (``str`` or JSON, unchanged since the
text-only API) or a tuple of parts: :class:`TextPart` and :class:`MediaPart`. A media part
carries exactly one source: inline ``data`` (bytes, with a ``media_type``), a ``url`` or a
provider ``file_id``; each continuation builder renders it in its provider's native shape
or refuses it with the rule it breaks, never turning it into text.

:class:`Internal` wraps a value the host keeps but the model must never see. Finding one
anywhere in a model-visible output makes every builder refuse the result
(:class:`~callgate.ContinuationError`), so a value marked internal upstream cannot reach a
request by accident. Data meant only for the ledger goes in ``ToolResult(audit=...)``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
from typing import Any, Final, Literal

from ._errors import UsageError

__all__ = ["MEDIA_KINDS", "Internal", "MediaPart", "Part", "TextPart"]

MediaKind = Literal["image", "audio", "video", "document"]
MEDIA_KINDS: Final[tuple[str, ...]] = ("image", "audio", "video", "document")


@dataclasses.dataclass(frozen=True, slots=True)
class TextPart:
    """A text part of a tool result."""

    text: str

    def __post_init__(self) -> None:
        if type(self.text) is not str:
            raise UsageError(f"TextPart.text must be a str, not {type(self.text).__name__}")
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("TextPart.text holds a lone surrogate") from None


def _check_str(name: str, value: Any) -> None:
    if value is not None and (type(value) is not str or not value):
        raise UsageError(f"MediaPart.{name} must be a non-empty str or None")


def _decode_base64(text: str) -> bytes:
    """Strict standard-alphabet base64 (padding required, no whitespace) to bytes."""
    if not text.isascii():
        raise UsageError("MediaPart.data is a str but not base64 (non-ASCII characters)")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError("MediaPart.data is a str but not valid base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise UsageError("MediaPart.data is a str but not canonical base64")
    return raw


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False)
class MediaPart:
    """An image, audio, video or document part of a tool result.

    ``kind`` is one of :data:`MEDIA_KINDS`. Exactly one source is given: ``data`` (raw
    ``bytes``, or a ``str`` of strict standard-alphabet base64 with padding, decoded and
    checked here),
    ``url`` or ``file_id`` (both passed to the provider as given). ``media_type`` (an IANA
    type such as ``image/png``) is required with ``data`` and optional otherwise;
    ``filename`` is an optional display name. ``digest`` is the SHA-256 hex of ``data`` and
    ``size`` its length in raw bytes (both ``None`` for a URL or file id). Raises
    :class:`~callgate.UsageError` on a bad type, a missing or second source, bad base64.
    ``repr`` shows the size and digest, never the bytes.
    """

    kind: MediaKind
    media_type: str | None
    data: bytes | None
    url: str | None
    file_id: str | None
    filename: str | None
    _digest: str | None = dataclasses.field(init=False, repr=False, compare=False)

    def __init__(
        self,
        kind: MediaKind,
        *,
        media_type: str | None = None,
        data: bytes | bytearray | memoryview | str | None = None,
        url: str | None = None,
        file_id: str | None = None,
        filename: str | None = None,
    ) -> None:
        if not isinstance(kind, str) or kind not in MEDIA_KINDS:
            raise UsageError(f"MediaPart.kind must be one of {MEDIA_KINDS}, not {kind!r}")
        for name, value in (
            ("media_type", media_type),
            ("url", url),
            ("file_id", file_id),
            ("filename", filename),
        ):
            _check_str(name, value)
        if media_type is not None and (
            "/" not in media_type or media_type != media_type.strip() or not media_type.isascii()
        ):
            raise UsageError(f"MediaPart.media_type {media_type!r} is not a type/subtype")
        raw: bytes | None
        if data is None:
            raw = None
        elif type(data) is str:
            raw = _decode_base64(data)
        elif isinstance(data, bytes | bytearray | memoryview):
            raw = bytes(data)
        else:
            raise UsageError(f"MediaPart.data must be bytes or a base64 str, not {type(data)}")
        sources = sum(source is not None for source in (raw, url, file_id))
        if sources != 1:
            raise UsageError("a MediaPart needs exactly one source: data, url or file_id")
        if raw is not None and media_type is None:
            raise UsageError("MediaPart.media_type is required with data")
        setattr_ = object.__setattr__
        setattr_(self, "kind", kind)
        setattr_(self, "media_type", media_type)
        setattr_(self, "data", raw)
        setattr_(self, "url", url)
        setattr_(self, "file_id", file_id)
        setattr_(self, "filename", filename)
        setattr_(self, "_digest", None if raw is None else hashlib.sha256(raw).hexdigest())

    # -- convenience constructors ---------------------------------------------------------

    @classmethod
    def image(cls, data: bytes | str, media_type: str, *, filename: str | None = None) -> MediaPart:
        """An inline image (``data`` raw bytes or strict base64)."""
        return cls("image", data=data, media_type=media_type, filename=filename)

    @classmethod
    def document(
        cls, data: bytes | str, media_type: str = "application/pdf", *, filename: str | None = None
    ) -> MediaPart:
        """An inline document, a PDF unless ``media_type`` says otherwise."""
        return cls("document", data=data, media_type=media_type, filename=filename)

    @classmethod
    def audio(cls, data: bytes | str, media_type: str, *, filename: str | None = None) -> MediaPart:
        """An inline audio clip."""
        return cls("audio", data=data, media_type=media_type, filename=filename)

    @classmethod
    def video(cls, data: bytes | str, media_type: str, *, filename: str | None = None) -> MediaPart:
        """An inline video clip."""
        return cls("video", data=data, media_type=media_type, filename=filename)

    @classmethod
    def from_url(
        cls,
        kind: MediaKind,
        url: str,
        *,
        media_type: str | None = None,
        filename: str | None = None,
    ) -> MediaPart:
        """A part the provider fetches from ``url`` (sent as given)."""
        return cls(kind, url=url, media_type=media_type, filename=filename)

    @classmethod
    def from_file_id(
        cls,
        kind: MediaKind,
        file_id: str,
        *,
        media_type: str | None = None,
        filename: str | None = None,
    ) -> MediaPart:
        """A part already uploaded to the provider's Files API (id sent as given)."""
        return cls(kind, file_id=file_id, media_type=media_type, filename=filename)

    # -- derived values -------------------------------------------------------------------

    @property
    def source(self) -> Literal["data", "url", "file_id"]:
        """Which of the three sources this part uses."""
        if self.data is not None:
            return "data"
        return "url" if self.url is not None else "file_id"

    @property
    def digest(self) -> str | None:
        """SHA-256 hex of ``data`` (``None`` for a URL or file id part)."""
        return self._digest

    @property
    def size(self) -> int | None:
        """Length of ``data`` in raw bytes (``None`` for a URL or file id part)."""
        return None if self.data is None else len(self.data)

    @property
    def base64_size(self) -> int | None:
        """Length of ``data`` once base64-encoded (padding included), without encoding it."""
        return None if self.data is None else 4 * ((len(self.data) + 2) // 3)

    def base64(self) -> str:
        """``data`` as standard-alphabet base64 with padding; :class:`UsageError` if none."""
        if self.data is None:
            raise UsageError(f"this MediaPart has no inline data (source {self.source})")
        return base64.b64encode(self.data).decode("ascii")

    def __repr__(self) -> str:
        if self.data is not None:
            where = f"size={self.size}, digest={self._digest}"
        elif self.url is not None:
            where = f"url={self.url!r}"
        else:
            where = f"file_id={self.file_id!r}"
        return f"MediaPart({self.kind!r}, media_type={self.media_type!r}, {where})"


Part = TextPart | MediaPart


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Internal:
    """Host-only data. A builder that finds one in a model-visible output refuses it.

    ``Internal`` may sit anywhere a tool output value may (as the whole output, inside a
    dict or list, or as one part) so a tool can mark data for the host; it is never
    rendered, and its repr hides the value.
    """

    value: Any

    def __repr__(self) -> str:
        return "Internal(...)"
