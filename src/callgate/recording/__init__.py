"""Capture real provider traffic safely, as ``recorded`` contracts fixtures.

``recording_transport(inner, Recorder(dir))`` plugs into an official SDK's ``http_client``
(httpx or httpx2, sync or async) and tees every exchange to disk without buffering or
changing the stream. Nothing is written unless redaction kept only allowlisted headers,
credential query parameters are gone, and the scanner found nothing credential-like.
``Recorder(dir, pseudonymize=True)`` also replaces provider ids, consistently across its
files. Replay the folder with ``callgate.mock.MockServer.from_recordings(dir)`` and check
it for drift with ``callgate check --drift dir``.
"""

from ._recorder import Capture, Recorder, protocol_of
from ._redact import KEPT_REQUEST_HEADERS, KEPT_RESPONSE_HEADERS, keep_headers, redact_url
from ._scan import SecretFoundError, SecretHit, check_no_secrets, scan
from ._transport import recording_transport

__all__ = [
    "KEPT_REQUEST_HEADERS",
    "KEPT_RESPONSE_HEADERS",
    "Capture",
    "Recorder",
    "SecretFoundError",
    "SecretHit",
    "check_no_secrets",
    "keep_headers",
    "protocol_of",
    "recording_transport",
    "redact_url",
    "scan",
]
