"""A one-route local HTTP server that answers every POST with fixed SSE bytes.

google-genai has no transport hook for Interactions, so the SDK is pointed at this server
with ``http_options={"base_url": ..., "api_version": "v1"}``.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""
    paths: list[str] = []  # noqa: RUF012 - set per server in serve_sse

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        self.paths.append(self.path)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        """Silence per-request logging."""


@contextmanager
def serve_sse(body: bytes) -> Iterator[tuple[str, list[str]]]:
    """Serve ``body`` on 127.0.0.1 (free port); yield (base URL, list of requested paths)."""
    paths: list[str] = []
    handler = type("Handler", (_Handler,), {"body": body, "paths": paths})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", paths
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
