"""The fixture loader: metadata checks, content checks per layer, directory loading."""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from callgate import ContractError, JSONError, ProvenanceError, UsageError
from callgate.contracts import Fixture, get_baseline, load_fixture, load_fixtures

OPENAI_SSE = (
    b"event: response.created\n"
    b'data: {"type":"response.created","sequence_number":0}\n'
    b"\n"
    b"event: response.completed\n"
    b'data: {"type":"response.completed","sequence_number":1}\n'
    b"\n"
)
EVENT_DICTS = b'{"type":"message_start"}\n{"type":"message_stop"}\n'
JSON_BODY = b'{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}'


def meta(
    protocol: str = "openai_responses", revision: str = "2026-11", **changes: Any
) -> dict[str, Any]:
    b = get_baseline(protocol, revision)
    m: dict[str, Any] = {
        "provider": b.provider,
        "api_family": protocol,
        "api_version": b.api_version,
        "contract_revision": revision,
        "layer": "wire-sse",
        "sdk_baseline": {"name": b.sdk_name, "version": b.sdk_version},
        "review_date": "2026-11-20",
        "source_urls": [b.source_urls[0]],
    }
    m.update(changes)
    return {k: v for k, v in m.items() if v is not _DROP}


_DROP = object()


def write(
    tmp_path: Path,
    metadata: dict[str, Any] | bytes,
    data: bytes | None = OPENAI_SSE,
    name: str = "case",
) -> Path:
    raw = metadata if isinstance(metadata, bytes) else json.dumps(metadata).encode()
    (tmp_path / f"{name}.json").write_bytes(raw)
    if data is not None:
        (tmp_path / f"{name}.sse").write_bytes(data)
    return tmp_path / name


# ---- positives ---------------------------------------------------------------------------


def test_wire_sse_fixture(tmp_path: Path) -> None:
    stem = write(tmp_path, meta(description="two events", expected={"calls": []}))
    fx = load_fixture(stem)
    assert isinstance(fx, Fixture)
    assert fx.name == "case"
    assert fx.path_sse == tmp_path / "case.sse"
    assert fx.path_json == tmp_path / "case.json"
    assert (fx.provider, fx.api_family, fx.api_version) == ("openai", "openai_responses", "v1")
    assert (fx.contract_revision, fx.layer) == ("2026-11", "wire-sse")
    assert (fx.sdk_name, fx.sdk_version) == ("openai", "3.57.0")
    assert fx.review_date == datetime.date(2026, 11, 20)
    assert fx.source_urls == (get_baseline("openai_responses").source_urls[0],)
    assert fx.description == "two events"
    assert fx.data == OPENAI_SSE
    assert fx.events() == [
        ("response.created", {"type": "response.created", "sequence_number": 0}),
        ("response.completed", {"type": "response.completed", "sequence_number": 1}),
    ]
    assert fx.wire_events() == fx.events()
    with pytest.raises(UsageError):
        fx.body()
    with pytest.raises(UsageError):
        fx.event_dicts()


@pytest.mark.parametrize("suffix", ["", ".sse", ".json"])
def test_any_of_the_three_paths_loads(tmp_path: Path, suffix: str) -> None:
    write(tmp_path, meta())
    assert load_fixture(str(tmp_path / f"case{suffix}")).name == "case"


def test_wire_sse_done_kept_as_string(tmp_path: Path) -> None:
    data = b'data: {"a":1}\n\ndata: [DONE]\n\n'
    m = meta("gemini_interactions", "2026-07-21", review_date="2026-07-21")
    fx = load_fixture(write(tmp_path, m, data))
    assert fx.events() == [(None, {"a": 1}), (None, "[DONE]")]
    assert fx.sdk_version == "2.12.1"


def test_event_dicts_fixture(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, meta("anthropic_messages", layer="event-dicts"), EVENT_DICTS))
    assert fx.api_version == "2026-10-21"
    assert fx.events() == [{"type": "message_start"}, {"type": "message_stop"}]
    assert fx.event_dicts() == fx.events()
    with pytest.raises(UsageError):
        fx.wire_events()


def test_event_dicts_without_final_newline(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, meta(layer="event-dicts"), b'{"a":1}\n{"b":2}'))
    assert fx.events() == [{"a": 1}, {"b": 2}]


def test_json_body_fixture(tmp_path: Path) -> None:
    m = meta("gemini_generate_content", layer="json-body")
    fx = load_fixture(write(tmp_path, m, JSON_BODY))
    assert fx.api_version == "v1"
    assert fx.body() == {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}
    with pytest.raises(UsageError):
        fx.events()


def test_old_revision_gemini_generate_content_is_v1beta(tmp_path: Path) -> None:
    m = meta("gemini_generate_content", "2026-07-21", layer="json-body")
    assert load_fixture(write(tmp_path, m, JSON_BODY)).api_version == "v1beta"


def test_expected_is_a_deep_copy(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, meta(expected={"calls": [{"name": "f"}]})))
    got = fx.expected
    assert got == {"calls": [{"name": "f"}]}
    assert got is not None
    got["calls"][0]["name"] = "mutated"
    assert fx.expected == {"calls": [{"name": "f"}]}


def test_optional_keys_absent(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, meta()))
    assert fx.description is None
    assert fx.expected is None


def test_fixture_is_frozen_and_slotted(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, meta()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fx.layer = "json-body"  # type: ignore[misc]
    assert not hasattr(fx, "__dict__")
    assert hash(fx) == hash(load_fixture(fx.path_json))
    assert fx == load_fixture(fx.path_sse)


# ---- metadata negatives ------------------------------------------------------------------


def test_bom_in_metadata(tmp_path: Path) -> None:
    stem = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(meta()).encode())
    with pytest.raises(ContractError, match=r"case\.json") as info:
        load_fixture(stem)
    assert isinstance(info.value.__cause__, JSONError)


def test_duplicate_key_in_metadata(tmp_path: Path) -> None:
    raw = json.dumps(meta())[:-1] + ', "layer": "json-body"}'
    with pytest.raises(ContractError, match=r"case\.json") as info:
        load_fixture(write(tmp_path, raw.encode()))
    assert isinstance(info.value.__cause__, JSONError)


def test_metadata_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="object"):
        load_fixture(write(tmp_path, b"[]"))


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        pytest.param({"contract_revision": "2026-12"}, "contract_revision", id="unknown-revision"),
        pytest.param({"api_family": "openai_chat"}, "api_family", id="unknown-api-family"),
        pytest.param({"api_version": "v2"}, "api_version", id="wrong-api-version"),
        pytest.param({"layer": "raw"}, "layer", id="wrong-layer"),
        pytest.param({"provider": "anthropic"}, "provider", id="provider-mismatch"),
        pytest.param({"provider": 1}, "provider", id="provider-not-str"),
        pytest.param(
            {"sdk_baseline": {"name": "openai", "version": "2.46.0"}},
            "sdk_baseline",
            id="sdk-version-of-other-revision",
        ),
        pytest.param(
            {"sdk_baseline": {"name": "anthropic", "version": "3.57.0"}},
            "sdk_baseline",
            id="sdk-name-mismatch",
        ),
        pytest.param(
            {"sdk_baseline": {"name": "openai", "version": "3.57.0", "x": 1}},
            "sdk_baseline",
            id="sdk-extra-key",
        ),
        pytest.param({"sdk_baseline": "openai==3.57.0"}, "sdk_baseline", id="sdk-not-object"),
        pytest.param({"review_date": "2026-13-01"}, "review_date", id="bad-date-month"),
        pytest.param({"review_date": "20261120"}, "review_date", id="bad-date-compact"),
        pytest.param({"review_date": "2026-11-20T00:00"}, "review_date", id="bad-date-datetime"),
        pytest.param({"review_date": 20261120}, "review_date", id="bad-date-int"),
        pytest.param({"notes": "x"}, "unknown metadata keys", id="unknown-key"),
        pytest.param({"layer": _DROP}, "missing metadata keys", id="missing-key"),
        pytest.param({"source_urls": []}, "source_urls", id="empty-source-urls"),
        pytest.param({"source_urls": "https://x"}, "source_urls", id="source-urls-not-list"),
        pytest.param({"description": 3}, "description", id="description-not-str"),
        pytest.param({"expected": [1]}, "expected", id="expected-not-object"),
    ],
)
def test_metadata_rejected(tmp_path: Path, changes: dict[str, Any], match: str) -> None:
    with pytest.raises(ContractError, match=match):
        load_fixture(write(tmp_path, meta(**changes)))


def test_api_version_of_other_protocol_rejected(tmp_path: Path) -> None:
    # "2026-10-21" is right for anthropic_messages, wrong for openai_responses.
    with pytest.raises(ContractError, match="api_version"):
        load_fixture(write(tmp_path, meta(api_version="2026-10-21")))


def test_anthropic_current_rejects_old_header_version(tmp_path: Path) -> None:
    m = meta("anthropic_messages", api_version="2023-06-01", layer="event-dicts")
    with pytest.raises(ContractError, match="api_version"):
        load_fixture(write(tmp_path, m, EVENT_DICTS))


def test_bad_source_url_is_provenance_error(tmp_path: Path) -> None:
    m = meta(source_urls=["https://platform.openai.com.evil.com/docs"])
    with pytest.raises(ProvenanceError) as info:
        load_fixture(write(tmp_path, m))
    assert info.value.reason == "host"


def test_cross_provider_source_url_rejected(tmp_path: Path) -> None:
    m = meta(source_urls=["https://github.com/anthropics/anthropic-sdk-python/"])
    with pytest.raises(ProvenanceError):
        load_fixture(write(tmp_path, m))


def test_local_url_only_with_opt_in(tmp_path: Path) -> None:
    stem = write(tmp_path, meta(source_urls=["http://127.0.0.1:8080/recorded/case"]))
    with pytest.raises(ProvenanceError) as info:
        load_fixture(stem)
    assert info.value.reason == "loopback-not-allowed"
    fx = load_fixture(stem, allow_local_source_urls=True)
    assert fx.source_urls == ("http://127.0.0.1:8080/recorded/case",)


# ---- content negatives -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layer", "data", "match"),
    [
        pytest.param("wire-sse", b"", "empty stream", id="empty-stream-sse"),
        pytest.param("event-dicts", b"", "empty stream", id="empty-stream-dicts"),
        pytest.param("json-body", b"", "empty stream", id="empty-stream-body"),
        pytest.param("wire-sse", b": just a comment\n\n", "no events", id="sse-only-comments"),
        pytest.param("wire-sse", b"data:\n\n", "empty event", id="empty-event"),
        pytest.param("wire-sse", b"data:  \n\n", "empty event", id="whitespace-event"),
        pytest.param(
            "wire-sse", b"event: x\n\ndata: {}\n\n", "empty event", id="event-without-data"
        ),
        pytest.param("wire-sse", b'data: {"a":1}\n', "SSE does not decode", id="truncated-sse"),
        pytest.param("wire-sse", b'data: {"a":1}', "SSE does not decode", id="no-line-ending"),
        pytest.param("wire-sse", b"data: \xff\n\n", "UTF-8", id="invalid-utf8-sse"),
        pytest.param("event-dicts", b'{"a":"\xc3"}\n', "UTF-8", id="invalid-utf8-dicts"),
        pytest.param("json-body", b'{"a":"\xed\xa0\x80"}', "UTF-8", id="surrogate-utf8-body"),
        pytest.param("wire-sse", b"\xef\xbb\xbfdata: {}\n\n", "byte order mark", id="sse-bom"),
        pytest.param("wire-sse", b"data: {bad\n\n", "invalid JSON", id="sse-bad-json"),
        pytest.param("wire-sse", b"data: [1]\n\n", "JSON object", id="sse-data-not-object"),
        pytest.param("wire-sse", b'data: {"a":1,"a":2}\n\n', "invalid JSON", id="sse-dup-key"),
        pytest.param("event-dicts", b'{"a":1}\n\n{"b":2}\n', "blank line", id="dicts-blank"),
        pytest.param("event-dicts", b'{"a":1}\n\n', "blank line", id="dicts-two-newlines"),
        pytest.param("event-dicts", b'{"a":1}\n  \n', "blank line", id="dicts-space-line"),
        pytest.param("event-dicts", b'{"a":1}\n"x"\n', "JSON object", id="dicts-not-object"),
        pytest.param("event-dicts", b'{"a":NaN}\n', "invalid JSON", id="dicts-nan"),
        pytest.param("json-body", b'{"a":1}{"b":2}', "invalid JSON", id="body-two-documents"),
        pytest.param("json-body", b'{"a":1}\n{"b":2}\n', "invalid JSON", id="body-two-lines"),
        pytest.param("json-body", b"[]", "JSON object", id="body-not-object"),
    ],
)
def test_content_rejected(tmp_path: Path, layer: str, data: bytes, match: str) -> None:
    with pytest.raises(ContractError, match=match) as info:
        load_fixture(write(tmp_path, meta(layer=layer), data))
    assert "case.sse" in str(info.value)


def test_truncated_sse_keeps_cause(tmp_path: Path) -> None:
    from callgate import TruncatedStreamError

    with pytest.raises(ContractError) as info:
        load_fixture(write(tmp_path, meta(), OPENAI_SSE[:-1]))
    assert isinstance(info.value.__cause__, TruncatedStreamError)


def test_missing_sse_file(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="missing"):
        load_fixture(write(tmp_path, meta(), data=None))


def test_missing_json_file(tmp_path: Path) -> None:
    (tmp_path / "case.sse").write_bytes(OPENAI_SSE)
    with pytest.raises(ContractError, match="missing"):
        load_fixture(tmp_path / "case.sse")


def test_bad_path_type(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_fixture(b"case")  # type: ignore[arg-type]


# ---- directories -------------------------------------------------------------------------


def test_load_fixtures_sorted(tmp_path: Path) -> None:
    write(tmp_path, meta(), name="b_case")
    write(tmp_path, meta(layer="json-body"), JSON_BODY, name="a_case")
    (tmp_path / "README.md").write_text("not a fixture")
    fixtures = load_fixtures(tmp_path)
    assert [f.name for f in fixtures] == ["a_case", "b_case"]
    assert [f.layer for f in fixtures] == ["json-body", "wire-sse"]


def test_load_fixtures_json_without_sse(tmp_path: Path) -> None:
    write(tmp_path, meta(), name="a")
    write(tmp_path, meta(), data=None, name="b")
    with pytest.raises(ContractError, match="missing"):
        load_fixtures(tmp_path)


def test_load_fixtures_sse_without_json(tmp_path: Path) -> None:
    write(tmp_path, meta(), name="a")
    (tmp_path / "orphan.sse").write_bytes(OPENAI_SSE)
    with pytest.raises(ContractError, match="orphan"):
        load_fixtures(tmp_path)


def test_load_fixtures_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no fixtures"):
        load_fixtures(tmp_path)


def test_load_fixtures_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="not a fixture directory"):
        load_fixtures(tmp_path / "nope")


def test_load_fixtures_local_flag_passed_through(tmp_path: Path) -> None:
    write(tmp_path, meta(source_urls=["http://localhost:9000/x"]))
    with pytest.raises(ProvenanceError):
        load_fixtures(tmp_path)
    assert len(load_fixtures(tmp_path, allow_local_source_urls=True)) == 1
