"""The parts of a tool result (TextPart, MediaPart, Internal) and ToolResult's two
projections: validation on construction, the derived values, and the text-only API kept."""

from __future__ import annotations

import base64
import hashlib

import pytest

from callgate import Internal, MediaPart, TextPart, ToolResult, UsageError

PNG = b"\x89PNG\r\n\x1a\n\x00\x01\x02"


def test_a_media_part_keeps_its_bytes_and_derives_digest_and_sizes() -> None:
    part = MediaPart.image(PNG, "image/png", filename="shot.png")
    assert (part.kind, part.media_type, part.data, part.filename) == (
        "image",
        "image/png",
        PNG,
        "shot.png",
    )
    assert part.source == "data"
    assert part.digest == hashlib.sha256(PNG).hexdigest()
    assert part.size == len(PNG) == 11
    assert part.base64() == base64.b64encode(PNG).decode()
    assert part.base64_size == len(part.base64()) == 16
    for n in range(8):
        assert MediaPart.audio(b"x" * n or b"y", "audio/wav").base64_size == len(
            base64.b64encode(b"x" * n or b"y")
        )


def test_base64_text_is_decoded_strictly() -> None:
    text = base64.b64encode(PNG).decode()
    assert MediaPart.image(text, "image/png") == MediaPart.image(PNG, "image/png")
    for bad in ("iVBORw=", "iVBO Rw==", "iVBORw0K\n", "iVBO*w==", "ïVBORw==", "iVBORx=="):
        with pytest.raises(UsageError, match="base64"):
            MediaPart.image(bad, "image/png")
    assert MediaPart.image(bytearray(PNG), "image/png").data == PNG
    assert type(MediaPart.image(memoryview(PNG), "image/png").data) is bytes


def test_exactly_one_source_and_a_media_type_with_data() -> None:
    with pytest.raises(UsageError, match="exactly one source"):
        MediaPart("image")
    with pytest.raises(UsageError, match="exactly one source"):
        MediaPart("image", url="https://x/a.png", file_id="file_1")
    with pytest.raises(UsageError, match="exactly one source"):
        MediaPart("document", data=PNG, media_type="application/pdf", url="https://x/a.pdf")
    with pytest.raises(UsageError, match="media_type is required"):
        MediaPart("image", data=PNG)
    assert MediaPart.from_url("image", "https://x/a.png").media_type is None
    assert MediaPart.from_file_id("document", "file_1").source == "file_id"
    url = MediaPart.from_url("video", "https://x/v.mp4")
    assert (url.digest, url.size, url.base64_size) == (None, None, None)
    with pytest.raises(UsageError, match="no inline data"):
        url.base64()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "picture", "url": "u"},
        {"kind": 1, "url": "u"},
        {"kind": "image", "url": ""},
        {"kind": "image", "url": b"u"},
        {"kind": "image", "file_id": 3},
        {"kind": "image", "url": "u", "filename": ""},
        {"kind": "image", "data": PNG, "media_type": "png"},
        {"kind": "image", "data": PNG, "media_type": " image/png"},
        {"kind": "image", "data": 12, "media_type": "image/png"},
        {"kind": "image", "data": [1, 2], "media_type": "image/png"},
    ],
)
def test_bad_fields_are_usage_errors(kwargs: dict[str, object]) -> None:
    kind = kwargs.pop("kind")
    with pytest.raises(UsageError):
        MediaPart(kind, **kwargs)  # type: ignore[arg-type]


def test_repr_never_shows_the_bytes_or_an_internal_value() -> None:
    secret = b"SECRETBYTES" * 10
    text = repr(MediaPart.document(secret))
    assert "SECRET" not in text
    assert base64.b64encode(secret).decode()[:12] not in text
    assert "size=110" in text
    assert repr(Internal({"token": "hunter2"})) == "Internal(...)"


def test_parts_are_frozen_and_comparable() -> None:
    part = MediaPart.image(PNG, "image/png")
    with pytest.raises(AttributeError):
        part.data = b""  # type: ignore[misc]
    assert hash(part) == hash(MediaPart.image(PNG, "image/png"))
    assert part != MediaPart.image(PNG, "image/gif")
    assert TextPart("a") == TextPart("a")
    with pytest.raises(UsageError):
        TextPart(b"a")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="surrogate"):
        TextPart("\ud800")


def test_the_text_only_constructor_is_unchanged() -> None:
    result = ToolResult("c1", {"ok": True}, True)
    assert (result.call_id, result.output, result.is_error, result.audit) == (
        "c1",
        {"ok": True},
        True,
        None,
    )
    assert ToolResult("c1", "x").parts == (TextPart("x"),)
    assert ToolResult("c1", {"b": 1, "a": [1]}).parts == (TextPart('{"a":[1],"b":1}'),)
    assert not ToolResult("c1", "x").has_media
    with pytest.raises(UsageError):
        ToolResult("c1", {1: "x"})
    with pytest.raises(UsageError):
        ToolResult("c1", 3)


def test_a_tuple_output_holds_parts_only() -> None:
    image = MediaPart.image(PNG, "image/png")
    result = ToolResult("c1", (TextPart("see"), image))
    assert result.parts == (TextPart("see"), image)
    assert result.has_media
    assert not ToolResult("c1", (TextPart("only text"),)).has_media
    with pytest.raises(UsageError, match="empty tuple"):
        ToolResult("c1", ())
    with pytest.raises(UsageError, match="part #1 is a str"):
        ToolResult("c1", (TextPart("a"), "b"))
    with pytest.raises(UsageError, match="part #0 is a dict"):
        ToolResult("c1", ({"type": "text", "text": "a"},))


def test_audit_is_any_json_value_kept_beside_the_output() -> None:
    result = ToolResult("c1", "done", audit={"row_id": 7, "raw": [1, 2]})
    assert result.audit == {"row_id": 7, "raw": [1, 2]}
    assert result != ToolResult("c1", "done")
    assert hash(ToolResult("c1", "done", audit=[1])) == hash(ToolResult("c1", "done", audit=[2]))
    for bad in (object(), b"bytes", float("nan"), {"k": {1, 2}}):
        with pytest.raises(UsageError):
            ToolResult("c1", "done", audit=bad)
    with pytest.raises(UsageError, match="cannot hold Internal"):
        ToolResult("c1", "done", audit={"x": Internal(1)})


def test_internal_is_accepted_anywhere_in_an_output_and_projected_as_internal() -> None:
    marker = Internal("db-row-7")
    nested = ToolResult("c1", {"visible": 1, "rows": [marker]})
    assert nested.has_internal
    assert nested.parts == (Internal({"visible": 1, "rows": [marker]}),)
    whole = ToolResult("c1", marker)
    assert whole.has_internal
    assert whole.parts == (marker,)
    as_part = ToolResult("c1", (TextPart("a"), marker))
    assert as_part.has_internal
    assert as_part.parts[1] is marker
    assert not ToolResult("c1", {"a": [1]}).has_internal
    with pytest.raises(UsageError):
        ToolResult("c1", {"rows": [marker, object()]})  # the rest must still be JSON


def test_a_media_part_survives_replace_and_pickle() -> None:
    import dataclasses
    import pickle

    part = MediaPart.image(PNG, "image/png", filename="a.png")
    changed = dataclasses.replace(part, media_type="image/gif")
    assert changed.media_type == "image/gif"
    assert changed.digest == part.digest
    with pytest.raises(UsageError, match="exactly one source"):
        dataclasses.replace(part, url="https://example.com/a.png")
    again = pickle.loads(pickle.dumps(part))
    assert again == part
    assert again.digest == part.digest
