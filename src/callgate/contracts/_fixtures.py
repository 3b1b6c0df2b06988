"""Contract fixtures: recorded or constructed wire samples with checked metadata.

A fixture is a pair of files sharing a stem: ``<case>.sse`` holds the bytes and
``<case>.json`` the metadata. The metadata names the protocol (``api_family``), contract
revision, provider, API version, SDK baseline, review date and official source URLs; each
is checked against the built-in :class:`~callgate.contracts.Baseline` for that protocol and
revision, and every source URL against the provider's allowlist.

Those provenance checks are **metadata hygiene, not authenticity**: they prove the fixture
claims a consistent baseline and points at official sources, not that its bytes were ever
sent by the provider.

Layers (``layer`` in the metadata) say what the ``.sse`` file holds:

- ``wire-sse``: raw SSE bytes; they must decode completely with :class:`callgate.sse.SSEDecoder`
  and every event's data must be a JSON object or the literal ``[DONE]``.
- ``event-dicts``: one JSON object per line (decoded wire events), ``\\n``-separated; no
  blank lines except the single newline that ends the file.
- ``json-body``: exactly one JSON object (a non-streaming response body).
- ``recorded``: the bytes a real exchange carried, exactly as received (a stream, possibly
  cut short, or a body), captured by :mod:`callgate.recording`. The metadata's
  ``recording`` object holds the redacted request, the response status, kept headers and
  chunk timing, the SDK that sent it and the model. ``api_version`` is what was observed
  (a header or a path segment), so it is not required to equal the baseline's; everything
  else is checked as for the other layers. The bytes are not decoded at load time (a
  truncated stream is a valid recording); :meth:`Fixture.events` / :meth:`Fixture.body`
  decode them on demand by ``recording.response.streamed``.

All JSON goes through :func:`callgate._json.loads_strict`. Any failure is a
:class:`~callgate.ContractError` naming the file (a bad source URL is its subclass
:class:`~callgate.ProvenanceError`), with the underlying error kept as ``__cause__``.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import os
import re
from pathlib import Path
from typing import Any

from .._errors import ContractError, UsageError
from .._limits import DEFAULT_LIMITS
from ._baselines import PROTOCOLS, REVISIONS, get_baseline
from ._layers import WireEvent, decode_body, decode_lines, decode_wire, json_object
from ._urls import validate_source_url

__all__ = ["LAYERS", "Fixture", "load_fixture", "load_fixtures"]

LAYERS: tuple[str, ...] = ("wire-sse", "event-dicts", "json-body", "recorded")
_REQUIRED = frozenset(
    {
        "provider",
        "api_family",
        "api_version",
        "contract_revision",
        "layer",
        "sdk_baseline",
        "review_date",
        "source_urls",
    }
)
_OPTIONAL = frozenset({"description", "expected", "recording"})
_RECORDING_KEYS = frozenset({"request", "response", "sdk", "model", "recorded_at", "schema_hash"})
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclasses.dataclass(frozen=True, slots=True)
class Fixture:
    """One loaded, validated fixture. Build it with :func:`load_fixture`.

    ``data`` is the ``.sse`` file's bytes. ``expected`` returns a deep copy of the metadata's
    ``expected`` object (or ``None``) on every access, so callers cannot mutate the fixture.
    ``events()`` / ``body()`` decode ``data`` afresh on each call.
    """

    name: str
    path_sse: Path
    path_json: Path
    provider: str
    api_family: str
    api_version: str
    contract_revision: str
    layer: str
    sdk_name: str
    sdk_version: str
    review_date: datetime.date
    source_urls: tuple[str, ...]
    description: str | None
    expected_raw: dict[str, Any] | None = dataclasses.field(repr=False, hash=False)
    data: bytes = dataclasses.field(repr=False)
    recording_raw: dict[str, Any] | None = dataclasses.field(default=None, repr=False, hash=False)

    @property
    def recording(self) -> dict[str, Any] | None:
        """For ``recorded``: a deep copy of the metadata's ``recording`` object."""
        return copy.deepcopy(self.recording_raw)

    @property
    def streamed(self) -> bool:
        """Whether the bytes are an event stream (``recorded``: as captured; else by layer)."""
        if self.recording_raw is not None:
            return bool(self.recording_raw["response"]["streamed"])
        return self.layer in ("wire-sse", "event-dicts")

    @property
    def expected(self) -> dict[str, Any] | None:
        """A deep copy of the metadata's ``expected`` object, or ``None``."""
        return copy.deepcopy(self.expected_raw)

    def wire_events(self) -> list[WireEvent]:
        """For ``wire-sse`` (and a streamed ``recorded``): ``(event name or None, JSON object
        or "[DONE]")`` per event."""
        if not (self.layer == "recorded" and self.streamed):
            self._require_layer("wire-sse")
        return decode_wire(self.data, self.path_sse)

    def event_dicts(self) -> list[dict[str, Any]]:
        """For ``event-dicts``: the JSON object of every line."""
        self._require_layer("event-dicts")
        return decode_lines(self.data, self.path_sse)

    def events(self) -> list[WireEvent] | list[dict[str, Any]]:
        """The decoded events: :meth:`wire_events` or :meth:`event_dicts` by layer."""
        if self.layer == "wire-sse" or (self.layer == "recorded" and self.streamed):
            return self.wire_events()
        if self.layer == "event-dicts":
            return self.event_dicts()
        raise UsageError(f"fixture {self.name!r} is a json-body fixture; use body()")

    def body(self) -> dict[str, Any]:
        """For ``json-body`` (and an unstreamed ``recorded``): the response body object."""
        if not (self.layer == "recorded" and not self.streamed):
            self._require_layer("json-body")
        return decode_body(self.data, self.path_sse)

    def _require_layer(self, layer: str) -> None:
        if self.layer != layer:
            raise UsageError(f"fixture {self.name!r} has layer {self.layer!r}, not {layer!r}")


def _read(path: Path, limit: int) -> bytes:
    try:
        if not path.is_file():
            raise ContractError(f"{path}: missing fixture file")
        if path.stat().st_size > limit:
            raise ContractError(f"{path}: larger than {limit} bytes")
        return path.read_bytes()
    except OSError as exc:
        raise ContractError(f"{path}: cannot read: {exc}") from exc


def _str_field(meta: dict[str, Any], key: str, path: Path) -> str:
    value = meta[key]
    if type(value) is not str or not value:
        raise ContractError(f"{path}: {key!r} must be a non-empty string")
    return value


def _paths(path: str | os.PathLike[str]) -> tuple[str, Path, Path]:
    if not isinstance(path, str | os.PathLike):
        raise UsageError(f"fixture path must be str or os.PathLike, got {type(path).__name__}")
    given = Path(path)
    stem = given.name
    for suffix in (".sse", ".json"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    if not stem:
        raise UsageError(f"fixture path has no name: {given}")
    return stem, given.parent / f"{stem}.sse", given.parent / f"{stem}.json"


def load_fixture(path: str | os.PathLike[str], *, allow_local_source_urls: bool = False) -> Fixture:
    """Load and validate one fixture given its ``.sse`` path, ``.json`` path or stem.

    Raises :class:`~callgate.ContractError` for any invalid metadata or content, and
    :class:`~callgate.ProvenanceError` for a source URL off the allowlist (loopback URLs
    pass only with ``allow_local_source_urls=True``). Provenance checks are metadata
    hygiene, not authenticity.
    """
    name, path_sse, path_json = _paths(path)
    meta = json_object(_read(path_json, DEFAULT_LIMITS.max_json_bytes), path_json, "metadata")
    unknown = sorted(set(meta) - _REQUIRED - _OPTIONAL)
    if unknown:
        raise ContractError(f"{path_json}: unknown metadata keys {unknown}")
    missing = sorted(_REQUIRED - set(meta))
    if missing:
        raise ContractError(f"{path_json}: missing metadata keys {missing}")

    family = _str_field(meta, "api_family", path_json)
    if family not in PROTOCOLS:
        raise ContractError(f"{path_json}: api_family {family!r} is not one of {PROTOCOLS}")
    revision = _str_field(meta, "contract_revision", path_json)
    if revision not in REVISIONS:
        raise ContractError(f"{path_json}: contract_revision {revision!r} not in {REVISIONS}")
    baseline = get_baseline(family, revision)

    provider = _str_field(meta, "provider", path_json)
    if provider != baseline.provider:
        raise ContractError(
            f"{path_json}: provider {provider!r} does not match {family} ({baseline.provider!r})"
        )
    api_version = _str_field(meta, "api_version", path_json)
    layer = _str_field(meta, "layer", path_json)
    if layer not in LAYERS:
        raise ContractError(f"{path_json}: layer {layer!r} is not one of {LAYERS}")
    recording = _check_recording(meta, layer, path_json)
    if layer != "recorded" and api_version != baseline.api_version:
        raise ContractError(
            f"{path_json}: api_version {api_version!r} is wrong for {family} at revision "
            f"{revision} (expected {baseline.api_version!r})"
        )
    sdk = meta["sdk_baseline"]
    if type(sdk) is not dict or set(sdk) != {"name", "version"}:
        raise ContractError(f"{path_json}: sdk_baseline must be {{'name': ..., 'version': ...}}")
    if (sdk["name"], sdk["version"]) != (baseline.sdk_name, baseline.sdk_version):
        raise ContractError(
            f"{path_json}: sdk_baseline {sdk['name']!r} {sdk['version']!r} does not match "
            f"revision {revision} ({baseline.sdk_name} {baseline.sdk_version})"
        )

    date_text = _str_field(meta, "review_date", path_json)
    try:
        if not _ISO_DATE.fullmatch(date_text):
            raise ValueError(date_text)
        review_date = datetime.date.fromisoformat(date_text)
    except ValueError as exc:
        raise ContractError(f"{path_json}: review_date {date_text!r} is not YYYY-MM-DD") from exc

    urls = meta["source_urls"]
    if type(urls) is not list or not urls or any(type(u) is not str for u in urls):
        raise ContractError(f"{path_json}: source_urls must be a non-empty list of strings")
    for url in urls:
        validate_source_url(url, provider=provider, allow_local_source_urls=allow_local_source_urls)

    description = meta.get("description")
    if description is not None and type(description) is not str:
        raise ContractError(f"{path_json}: description must be a string")
    expected = meta.get("expected")
    if expected is not None and type(expected) is not dict:
        raise ContractError(f"{path_json}: expected must be a JSON object")

    data = _read(path_sse, DEFAULT_LIMITS.max_stream_bytes)
    if layer == "wire-sse":
        decode_wire(data, path_sse)
    elif layer == "event-dicts":
        decode_lines(data, path_sse)
    elif layer == "json-body":
        decode_body(data, path_sse)
    elif recording is not None:
        _check_chunk_total(recording, data, path_json)

    return Fixture(
        name=name,
        path_sse=path_sse,
        path_json=path_json,
        provider=provider,
        api_family=family,
        api_version=api_version,
        contract_revision=revision,
        layer=layer,
        sdk_name=baseline.sdk_name,
        sdk_version=baseline.sdk_version,
        review_date=review_date,
        source_urls=tuple(urls),
        description=description,
        expected_raw=expected,
        data=data,
        recording_raw=recording,
    )


def _check_recording(meta: dict[str, Any], layer: str, path: Path) -> dict[str, Any] | None:
    """The ``recording`` object: required for the ``recorded`` layer, refused elsewhere."""
    recording = meta.get("recording")
    if layer != "recorded":
        if recording is not None:
            raise ContractError(f"{path}: only a 'recorded' fixture has a 'recording' object")
        return None
    if type(recording) is not dict or not {"request", "response"} <= set(recording):
        raise ContractError(f"{path}: a recorded fixture needs recording.request and .response")
    unknown = sorted(set(recording) - _RECORDING_KEYS)
    if unknown:
        raise ContractError(f"{path}: unknown recording keys {unknown}")
    request, response = recording["request"], recording["response"]
    if type(request) is not dict or type(request.get("method")) is not str:
        raise ContractError(f"{path}: recording.request needs a string 'method'")
    if type(request.get("url")) is not str:
        raise ContractError(f"{path}: recording.request needs a string 'url'")
    if type(response) is not dict or type(response.get("status")) is not int:
        raise ContractError(f"{path}: recording.response needs an integer 'status'")
    if type(response.get("streamed")) is not bool:
        raise ContractError(f"{path}: recording.response needs a boolean 'streamed'")
    for part, where in ((request, "request"), (response, "response")):
        headers = part.get("headers", [])
        if type(headers) is not list or any(
            type(h) is not list or len(h) != 2 or any(type(x) is not str for x in h)
            for h in headers
        ):
            raise ContractError(f"{path}: recording.{where}.headers must be [name, value] pairs")
    chunks = response.get("chunks", [])
    if type(chunks) is not list or any(
        type(c) is not list
        or len(c) != 2
        or type(c[0]) is not int
        or c[0] < 0
        or type(c[1]) not in (int, float)
        or c[1] < 0
        for c in chunks
    ):
        raise ContractError(f"{path}: recording.response.chunks must be [bytes, ms] pairs")
    return recording


def _check_chunk_total(recording: dict[str, Any], data: bytes, path: Path) -> None:
    """The chunk sizes of a recording add up to its bytes (when it has timing at all)."""
    chunks = recording["response"].get("chunks", [])
    if chunks and sum(c[0] for c in chunks) != len(data):
        raise ContractError(
            f"{path}: recording.response.chunks add up to {sum(c[0] for c in chunks)} bytes, "
            f"the .sse file has {len(data)}"
        )


def load_fixtures(
    directory: str | os.PathLike[str], *, allow_local_source_urls: bool = False
) -> tuple[Fixture, ...]:
    """Load every fixture in ``directory`` (not recursive), sorted by name.

    Every ``*.json`` needs its ``.sse`` and every ``*.sse`` its ``.json``; a directory
    without fixtures is a :class:`~callgate.ContractError` (so a test cannot pass vacuously).
    """
    if not isinstance(directory, str | os.PathLike):
        raise UsageError("fixture directory must be str or os.PathLike")
    root = Path(directory)
    if not root.is_dir():
        raise ContractError(f"{root}: not a fixture directory")
    json_stems = {p.name[: -len(".json")] for p in root.glob("*.json") if p.is_file()}
    sse_stems = {p.name[: -len(".sse")] for p in root.glob("*.sse") if p.is_file()}
    orphans = sorted(sse_stems - json_stems)
    if orphans:
        raise ContractError(f"{root}: .sse files without metadata: {orphans}")
    if not json_stems:
        raise ContractError(f"{root}: no fixtures")
    return tuple(
        load_fixture(root / f"{stem}.json", allow_local_source_urls=allow_local_source_urls)
        for stem in sorted(json_stems)
    )
