"""A one-route local HTTP server answering every POST (and GET) with fixed bytes (SSE or
JSON), and recording each request's path and body, for driving the official SDKs."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""
    content_type = "text/event-stream"
    seen: list[tuple[str, Any]] = []  # noqa: RUF012 - replaced per server in serve()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.seen.append((self.path, json.loads(self.rfile.read(length) or b"null")))
        self.send_response(200)
        self.send_header("content-type", self.content_type)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def do_GET(self) -> None:
        """A GET (``interactions.get``) is answered and recorded the same way."""
        self.do_POST()

    def log_message(self, *args: Any) -> None:
        """Silence per-request logging."""


@contextmanager
def serve(
    body: bytes, *, content_type: str = "text/event-stream"
) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """Serve ``body`` on 127.0.0.1 (free port); yield (base URL, [(path, request JSON)])."""
    seen: list[tuple[str, Any]] = []
    attrs = {"body": body, "seen": seen, "content_type": content_type}
    handler = type("Handler", (_Handler,), attrs)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
