"""Write one captured exchange as a ``recorded`` contracts fixture, never holding it in memory.

A :class:`Recorder` owns a directory. Each exchange gets a :class:`Capture`: the response
bytes are appended to a ``.part`` file as they pass (so memory stays flat however long the
stream), and :meth:`Capture.finish` scans every part for secrets, then renames the bytes to
``<stem>.sse`` and writes ``<stem>.json`` (metadata with the ``recording`` object). A capture
with a scanner hit writes nothing and raises :class:`SecretFoundError`.
"""

from __future__ import annotations

import array
import datetime
import itertools
import json
import mmap
import os
import re
import threading
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from .._errors import ProtocolError, UsageError
from .._json import loads_strict
from ..contracts import CURRENT_REVISION, PROTOCOLS, REVISIONS, get_baseline
from ._pseudo import Pseudonyms
from ._redact import KEPT_REQUEST_HEADERS, KEPT_RESPONSE_HEADERS, keep_headers, redact_url
from ._scan import SecretFoundError, SecretHit, mask_media, scan
from ._shape import schema_hash

__all__ = ["Capture", "Recorder", "protocol_of"]

_SDK_AGENTS: Final = (
    ("openai", re.compile(r"OpenAI/Python ([0-9][0-9A-Za-z.+-]*)")),
    ("anthropic", re.compile(r"Anthropic/Python ([0-9][0-9A-Za-z.+-]*)")),
    ("google-genai", re.compile(r"google-genai-sdk/([0-9][0-9A-Za-z.+-]*)")),
)
_GEMINI_MODEL: Final = re.compile(r"/models/([^/:]+):")
_GEMINI_VERSION: Final = re.compile(r"/(v1(?:beta|alpha)?)/")
# Timing is kept per chunk up to this many entries, then coarsened pairwise.
# (Two flat arrays, not a list of pairs: ~16 bytes an entry.)
_MAX_TIMING_ENTRIES: Final = 1024


def protocol_of(path: str) -> str | None:
    """The protocol room a provider request path belongs to, or ``None``."""
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini_generate_content"
    if path.rstrip("/").endswith("/interactions") or "/interactions/" in path:
        return "gemini_interactions"
    if path.rstrip("/").endswith("/chat/completions"):
        return "openai_chat_completions"
    if path.rstrip("/").endswith("/messages"):
        return "anthropic_messages"
    if path.rstrip("/").endswith("/responses") or "/responses/" in path:
        return "openai_responses"
    return None


class Recorder:
    """Captures exchanges into ``directory`` as ``recorded`` fixtures, numbered in order.

    ``pseudonymize=True`` replaces provider ids consistently across every file this
    recorder writes (see :mod:`callgate.recording._pseudo`); the recording is then
    byte-exact for the pseudonymised bytes.
    """

    def __init__(self, directory: str | os.PathLike[str], *, pseudonymize: bool = False) -> None:
        if not isinstance(directory, str | os.PathLike):
            raise UsageError("Recorder directory must be str or os.PathLike")
        self.directory = Path(directory)
        self.pseudonyms = Pseudonyms() if pseudonymize else None
        self.skipped = 0  # requests to paths that belong to no protocol room
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        existing = [p.name.split("-", 1)[0] for p in self.directory.glob("*.json")]
        start = max((int(n) for n in existing if n.isdigit()), default=0) + 1
        self._numbers = itertools.count(start)
        self.written: list[Path] = []

    def begin(
        self, method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> Capture | None:
        """Start capturing one exchange (the request as it is sent), or ``None`` when its
        path belongs to no protocol room (a model list, a file upload): those pass through
        unrecorded and are counted in :attr:`skipped`."""
        if not self.wants(url):
            return None
        with self._lock:
            number = next(self._numbers)
        return Capture(self, number, method, url, list(headers), bytes(body))

    def wants(self, url: str) -> bool:
        """Whether a request to ``url`` is recorded (its path belongs to a protocol room);
        a ``False`` answer is counted in :attr:`skipped`."""
        if protocol_of(_url_path(url)) in PROTOCOLS:
            return True
        with self._lock:
            self.skipped += 1
        return False

    def _written(self, path: Path) -> None:
        with self._lock:
            self.written.append(path)


class Capture:
    """One exchange in flight. Feed it the response status, then chunks; then finish it."""

    def __init__(
        self,
        recorder: Recorder,
        number: int,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        self._recorder = recorder
        self._number = number
        self._method = method
        self._url = url
        self._headers = headers
        self._body = body
        self._started = time.monotonic()
        self._status = 0
        self._response_headers: list[tuple[str, str]] = []
        self._sizes = array.array("q")
        self._times = array.array("d")
        self._size = 0
        self._part = recorder.directory / f".{number:04d}.part"
        self._file = self._part.open("wb")
        self._done = False
        self._decoder: Any = None
        self._encoding = ""

    def response(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """The response status and headers. A gzip or deflate body is recorded decoded
        (what the client's library hands the SDK); any other content coding is recorded as
        sent and its ``content-encoding`` header kept."""
        self._status = status
        self._response_headers = list(headers)
        codings = [
            c.strip().lower()
            for k, v in self._response_headers
            if k.lower() == "content-encoding"
            for c in v.split(",")
        ]
        codings = [c for c in codings if c and c != "identity"]
        if codings and set(codings) <= {"gzip", "x-gzip", "deflate"} and len(codings) == 1:
            self._decoder = zlib.decompressobj(wbits=47)  # gzip or zlib, by header
        elif codings:
            self._encoding = ", ".join(codings)

    def chunk(self, data: bytes) -> None:
        """Append response bytes as they pass (nothing is buffered in memory)."""
        if data and self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
            except zlib.error:
                self._decoder = None
                self._encoding = "undecodable"
        if data:
            self._file.write(data)
            self._size += len(data)
            elapsed = round((time.monotonic() - self._started) * 1000, 3)
            self._sizes.append(len(data))
            self._times.append(elapsed)
            if len(self._sizes) > _MAX_TIMING_ENTRIES:
                self._sizes, self._times = _coarsen(self._sizes, self._times)

    def finish(self, *, complete: bool = True) -> Path | None:
        """Scan and write the fixture; returns the ``.json`` path (``None`` if nothing came).

        Raises :class:`SecretFoundError` (and writes nothing) when any part holds a
        secret-looking value. Idempotent.
        """
        if self._done:
            return None
        self._done = True
        if self._decoder is not None:
            self.chunk(self._decoder.flush())
        self._file.close()
        try:
            if self._size == 0:
                return None
            return self._write(complete)
        finally:
            self._part.unlink(missing_ok=True)

    def abort(self) -> None:
        """Drop the capture (the client went away before anything worth keeping)."""
        self._done = True
        self._file.close()
        self._part.unlink(missing_ok=True)

    # -- writing -----------------------------------------------------------------------

    def _write(self, complete: bool) -> Path:
        url = redact_url(self._url)
        path = _url_path(url)
        protocol = protocol_of(path) or "unknown"
        pseudonyms = self._recorder.pseudonyms
        if pseudonyms is not None:
            self._pseudonymize(pseudonyms)
        meta = self._metadata(url, path, protocol, complete)
        meta_bytes = _dump_meta(meta)
        if pseudonyms is not None:
            meta_bytes = pseudonyms.apply(meta_bytes)
        hits = self._scan(meta_bytes)
        if hits:
            raise SecretFoundError(tuple(hits))
        stem = f"{self._number:04d}-{protocol}"
        directory = self._recorder.directory
        os.replace(self._part, directory / f"{stem}.sse")
        target = directory / f"{stem}.json"
        tmp = directory / f".{stem}.json.part"
        tmp.write_bytes(meta_bytes)
        os.replace(tmp, target)
        self._recorder._written(target)
        return target

    def _pseudonymize(self, pseudonyms: Pseudonyms) -> None:
        """Learn this exchange's ids, then rewrite the request body and the response bytes
        (line by line, so memory stays flat; a pseudonym has its id's length)."""
        pseudonyms.learn(self._body)
        pseudonyms.learn_values(
            v.encode("ascii", "replace")
            for k, v in self._response_headers
            if k.lower() in ("request-id", "x-request-id")
        )
        with self._part.open("rb") as f:
            for line in f:
                pseudonyms.learn(line)
        rewritten = self._part.with_suffix(".pseudo")
        with self._part.open("rb") as src, rewritten.open("wb") as dst:
            for line in src:
                dst.write(pseudonyms.apply(line))
        os.replace(rewritten, self._part)
        self._body = pseudonyms.apply(self._body)

    def _scan(self, meta_bytes: bytes) -> list[SecretHit]:
        # Inline media payloads are binary, not text: blanked for the scan only (_scan.py).
        hits = scan("request body", mask_media(self._body)) + scan(
            "metadata", mask_media(meta_bytes)
        )
        with self._part.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            hits += scan("response bytes", m)  # type: ignore[arg-type]
        return hits

    def _metadata(self, url: str, path: str, protocol: str, complete: bool) -> dict[str, Any]:
        kept_request = keep_headers(self._headers, KEPT_REQUEST_HEADERS)
        kept_response = keep_headers(self._response_headers, KEPT_RESPONSE_HEADERS)
        if self._encoding:
            kept_response.append(("content-encoding", self._encoding))
        request_body = _json_or_none(self._body)
        sdk = _sdk_of(self._headers)
        content_type = dict(kept_response).get("content-type", "")
        revision = _revision_for(protocol, sdk)
        recording = {
            "request": {
                "method": self._method,
                "url": url,
                "headers": [list(h) for h in kept_request],
                "body": request_body,
            },
            "response": {
                "status": self._status,
                "headers": [list(h) for h in kept_response],
                "streamed": "text/event-stream" in content_type,
                "complete": complete,
                "bytes": self._size,
                "chunks": [[n, t] for n, t in zip(self._sizes, self._times, strict=True)],
            },
            "sdk": sdk,
            "model": _model_of(path, request_body),
            "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "schema_hash": self._schema_hash(),
        }
        return _fixture_meta(protocol, revision, path, kept_request, recording)

    def _schema_hash(self) -> str:
        # The shape of what came back (keys and JSON types, not values): two recordings
        # with the same hash exercise the same fields, whatever the ids and texts.
        streamed = "text/event-stream" in dict(
            keep_headers(self._response_headers, frozenset({"content-type"}))
        ).get("content-type", "")
        with self._part.open("rb") as f:
            return schema_hash(f, streamed=streamed)


_CHUNKS_SLOT: Final = "\u0000callgate-chunks\u0000"


def _dump_meta(meta: dict[str, Any]) -> bytes:
    """The metadata, indented, with the (long) chunk timing list on one line: ``indent``
    makes ``json`` use its pure-Python encoder, which cost more than the rest of finish."""
    response = meta["recording"]["response"]
    chunks, response["chunks"] = response["chunks"], _CHUNKS_SLOT
    text = json.dumps(meta, indent=2, ensure_ascii=False)
    compact = json.dumps(chunks, separators=(",", ":"))
    response["chunks"] = chunks
    return text.replace(json.dumps(_CHUNKS_SLOT), compact, 1).encode() + b"\n"


def _coarsen(
    sizes: array.array[int], times: array.array[float]
) -> tuple[array.array[int], array.array[float]]:
    """Merge neighbouring timing entries pairwise (sizes add, the later time is kept), so
    the timing stays bounded however many chunks a stream has."""
    odd = len(sizes) % 2
    merged = array.array("q", (a + b for a, b in zip(sizes[::2], sizes[1::2], strict=False)))
    later = array.array("d", times[1::2])
    if odd:
        merged.append(sizes[-1])
        later.append(times[-1])
    return merged, later


def _fixture_meta(
    protocol: str,
    revision: str,
    path: str,
    headers: list[tuple[str, str]],
    recording: dict[str, Any],
) -> dict[str, Any]:
    if protocol == "unknown":
        raise UsageError(f"cannot tell which protocol the request path {path!r} belongs to")
    baseline = get_baseline(protocol, revision)
    return {
        "provider": baseline.provider,
        "api_family": protocol,
        "api_version": _observed_api_version(protocol, path, headers, baseline.api_version),
        "contract_revision": revision,
        "layer": "recorded",
        "sdk_baseline": {"name": baseline.sdk_name, "version": baseline.sdk_version},
        "review_date": recording["recorded_at"][:10],
        "source_urls": [baseline.source_urls[0]],
        "description": f"recorded {recording['request']['method']} {path}",
        "recording": recording,
    }


def _observed_api_version(
    protocol: str, path: str, headers: list[tuple[str, str]], default: str
) -> str:
    if protocol == "anthropic_messages":
        return dict(headers).get("anthropic-version", default)
    match = _GEMINI_VERSION.search(path)
    if protocol.startswith("gemini") and match:
        return match.group(1)
    return default


def _revision_for(protocol: str, sdk: dict[str, str] | None) -> str:
    """The baseline whose pinned SDK sent this, else the current one."""
    if sdk is not None and protocol != "unknown":
        for revision in REVISIONS:
            baseline = get_baseline(protocol, revision)
            if (baseline.sdk_name, baseline.sdk_version) == (sdk["name"], sdk["version"]):
                return revision
    return CURRENT_REVISION


def _sdk_of(headers: list[tuple[str, str]]) -> dict[str, str] | None:
    text = " ".join(v for k, v in headers if k.lower() in ("user-agent", "x-goog-api-client"))
    for name, pattern in _SDK_AGENTS:
        match = pattern.search(text)
        if match:
            return {"name": name, "version": match.group(1)}
    return None


def _model_of(path: str, body: Any) -> str | None:
    if type(body) is dict and type(body.get("model")) is str:
        return str(body["model"])
    match = _GEMINI_MODEL.search(path)
    return match.group(1) if match else None


def _url_path(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _json_or_none(body: bytes) -> Any:
    if not body:
        return None
    try:
        return loads_strict(body)
    except ProtocolError:
        return {"callgate_unparsed_body_bytes": len(body)}
