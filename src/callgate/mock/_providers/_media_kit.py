"""Media in request bodies, for the mock: found in every protocol's shape, summarized
(shared by the providers' media checks, the matcher and the journal).

:func:`media_in` walks a JSON value (a tool result's output, a whole body) and yields each
inline media payload it carries, in order, in any provider's shape:

- OpenAI Responses ``input_image.image_url`` and ``input_file.file_data`` (a data URL,
  or plain base64), Chat Completions ``image_url.url`` data URLs;
- Anthropic ``{"type": "image" | "document", "source": {"type": "base64", ...}}``;
- Gemini Interactions ``{"type": "image" | "audio" | "video" | "document", "data",
  "mime_type"}``;
- Gemini generateContent ``inline_data`` / ``inlineData`` ``{mime_type | mimeType, data}``.

A script's ``expect`` compares a result's media by kind, media type, size and SHA-256
digest of the decoded bytes (the same ``digest`` and ``size`` a ``MediaPart`` has), and
the journal keeps ``<media sha256=... size=...>`` instead of a payload's base64
(:func:`elide_media`), so a 5 MiB screenshot does not sit in memory once per request.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
from collections.abc import Iterator
from typing import Any

__all__ = [
    "Found",
    "check_media_spec",
    "decode_base64",
    "elide_media",
    "media_in",
    "parse_data_url",
]

_KINDS = ("image", "audio", "video", "document")
_SPEC_KEYS = {"kind", "media_type", "size", "digest"}
ELIDE_AT = 256  # base64 characters from which the journal keeps a digest instead


@dataclasses.dataclass(frozen=True, slots=True)
class Found:
    """One inline payload: its kind, media type, the base64 text, and where it sat
    (``holder[key]`` is the string; for a data URL the string is the whole URL)."""

    kind: str
    media_type: str | None
    data: str
    holder: dict[str, Any]
    key: str
    data_url: bool = False

    def raw(self, *, urlsafe: bool = False) -> bytes | None:
        """The decoded bytes, or None when ``data`` is not base64."""
        return decode_base64(self.data, urlsafe=urlsafe)

    def summary(self, *, urlsafe: bool = False) -> dict[str, Any]:
        raw = self.raw(urlsafe=urlsafe)
        out: dict[str, Any] = {"kind": self.kind, "media_type": self.media_type}
        if raw is not None:
            out.update(size=len(raw), digest=hashlib.sha256(raw).hexdigest())
        return out


def decode_base64(text: str, *, urlsafe: bool = False) -> bytes | None:
    """Strict base64 (``urlsafe``: either alphabet, padding optional, as Google's JSON
    parser takes bytes); None when it is not."""
    if not text.isascii():
        return None
    if urlsafe:
        text = text.replace("-", "+").replace("_", "/")
        text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 payload) of a ``data:<type>;base64,<payload>`` URL."""
    if not url.startswith("data:"):
        return None
    head, comma, payload = url[5:].partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    return head[: -len(";base64")], payload


def _kind_of(media_type: Any) -> str:
    if isinstance(media_type, str):
        top = media_type.partition("/")[0]
        if top in _KINDS[:3]:
            return top
    return "document"


def _from_url(kind: str, holder: dict[str, Any], key: str) -> Found | None:
    value = holder.get(key)
    parsed = parse_data_url(value) if isinstance(value, str) else None
    if parsed is None:
        return None
    return Found(kind, parsed[0], parsed[1], holder, key, data_url=True)


def _here(node: dict[str, Any]) -> Found | None:
    kind = node.get("type")
    if kind == "input_image":
        return _from_url("image", node, "image_url")
    if kind == "input_file" and isinstance(node.get("file_data"), str):
        return _from_url("document", node, "file_data") or Found(
            "document", None, node["file_data"], node, "file_data"
        )
    if kind == "image_url" and isinstance(node.get("image_url"), dict):
        return _from_url("image", node["image_url"], "url")
    source = node.get("source")
    if (
        kind in _KINDS
        and isinstance(source, dict)
        and source.get("type") == "base64"
        and isinstance(source.get("data"), str)
    ):
        return Found(kind, source.get("media_type"), source["data"], source, "data")
    if kind in _KINDS and isinstance(node.get("data"), str):
        return Found(kind, node.get("mime_type"), node["data"], node, "data")
    for key in ("inline_data", "inlineData"):
        inline = node.get(key)
        if isinstance(inline, dict) and isinstance(inline.get("data"), str):
            mime = inline.get("mime_type", inline.get("mimeType"))
            return Found(_kind_of(mime), mime, inline["data"], inline, "data")
    return None


def media_in(value: Any) -> Iterator[Found]:
    """Every inline media payload in ``value``, depth first, in document order."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found = _here(node)
            if found is not None:
                yield found
                continue
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def _token(found: Found) -> str:
    raw = found.raw(urlsafe=True)
    if raw is None:
        return f"<media not base64, {len(found.data)} chars>"
    return f"<media sha256={hashlib.sha256(raw).hexdigest()} size={len(raw)}>"


def _copy(value: Any, targets: dict[int, tuple[str, str]]) -> Any:
    """``value`` with each payload string ``targets`` names replaced (copied on the path
    to it only)."""
    if isinstance(value, dict):
        marked = targets.get(id(value))
        out = {k: _copy(v, targets) for k, v in value.items()}
        if marked is not None:
            out[marked[0]] = marked[1]
        return out
    if isinstance(value, list):
        return [_copy(v, targets) for v in value]
    return value


def elide_media(body: Any) -> Any:
    """``body`` with every inline payload of ``ELIDE_AT`` characters or more replaced by
    ``<media sha256=<hex of the decoded bytes> size=<bytes>>`` (inside a data URL, the
    payload after ``base64,``). ``body`` itself is never changed; a body without such a
    payload is returned as it is."""
    targets: dict[int, tuple[str, str]] = {}
    for found in media_in(body):
        if len(found.data) < ELIDE_AT:
            continue
        token = _token(found)
        if found.data_url:
            token = f"data:{found.media_type};base64,{token}"
        targets[id(found.holder)] = (found.key, token)
    return _copy(body, targets) if targets else body


def check_media_spec(ctx: Any, value: Any, loc: str) -> None:
    """A script's ``expect.function_results[].media`` (``ctx``: the script reader's)."""
    for i, spec in enumerate(ctx.typed(value, list, loc)):
        ctx.obj(spec, f"{loc}/{i}", _SPEC_KEYS)
        for key in ("kind", "media_type", "digest"):
            if key in spec:
                ctx.typed(spec[key], str, f"{loc}/{i}/{key}")
        if "size" in spec:
            ctx.bounded(spec["size"], f"{loc}/{i}/size", 0, 2**53)
