"""Capture real provider traffic safely: allowlist redaction and a secret scanner.

Nothing is written unless redaction kept only allowlisted headers, credential query
parameters are gone, and the scanner found nothing credential-like in any part.
"""

from ._redact import KEPT_REQUEST_HEADERS, KEPT_RESPONSE_HEADERS, keep_headers, redact_url
from ._scan import SecretFoundError, SecretHit, check_no_secrets, scan

__all__ = [
    "KEPT_REQUEST_HEADERS",
    "KEPT_RESPONSE_HEADERS",
    "SecretFoundError",
    "SecretHit",
    "check_no_secrets",
    "keep_headers",
    "redact_url",
    "scan",
]
