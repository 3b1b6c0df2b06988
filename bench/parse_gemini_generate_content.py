"""Benchmark: callgate.gemini_generate_content.parse_stream against bare SSE + json.loads and
the official google-genai SDK's own ``models.generate_content_stream`` iteration, on the
same bytes, in one run.

The stream: N chunks as the Developer API streams text (one ``{"text": "a"}`` delta per
chunk, each chunk repeating ``usageMetadata``, ``modelVersion`` and ``responseId``), then
one chunk with 8 parallel ``functionCall`` parts (the first signed) and
``finishReason: STOP``. Per-chunk time is reported at 1k, 4k, 16k and 64k chunks to show it
stays flat (text deltas are joined once; nothing is re-scanned).

google-genai is pointed at a local HTTP server on 127.0.0.1; the time to merely read the
same body over that socket (``http.client``, no parsing) is reported beside it, so the SDK's
own cost can be told apart from the socket's. callgate and the bare floor parse the bytes
in memory.

Run: ``.venv/bin/python bench/parse_gemini_generate_content.py`` (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from timing import best

from callgate import loads_strict
from callgate.gemini_generate_content import parse_stream

CALLS = 8
MODEL = "gemini-3-flash-preview"


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _chunk(parts: list[dict[str, Any]], tokens: int, finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": 12, "candidatesTokenCount": tokens, "totalTokenCount": 12 + tokens}
    return _frame(
        {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": MODEL,
            "responseId": "bench-response",
        }
    )


def build_stream(chunks: int) -> bytes:
    out = [_chunk([{"text": "a"}], i + 1) for i in range(chunks - 1)]
    calls: list[dict[str, Any]] = [
        {"functionCall": {"id": f"c-{i}", "name": "lookup", "args": {"q": i}}} for i in range(CALLS)
    ]
    calls[0]["thoughtSignature"] = "c2lnbmF0dXJl"
    out.append(_chunk(calls, chunks, "STOP"))
    return b"".join(out)


def bare(data: bytes) -> None:
    """The floor: split frames, strip the data prefix, json.loads it. No checks at all."""
    loads = json.loads
    for frame in data.split(b"\n\n"):
        if frame.startswith(b"data: "):
            loads(frame[6:])


def strict_floor(data: bytes) -> None:
    """The bare split with callgate's strict JSON decoder instead of json.loads: what the
    kernel's strict decoding alone costs, before any protocol work."""
    for frame in data.split(b"\n\n"):
        if frame.startswith(b"data: "):
            loads_strict(frame[6:])


def callgate_parse(data: bytes) -> None:
    turn = parse_stream(data)
    if len(turn.calls) != CALLS:
        raise SystemExit("callgate released the wrong number of calls")


class _Server:
    """Serves the current payload to every request (POST for the SDK, GET for a raw read)."""

    def __init__(self) -> None:
        payload: dict[str, bytes] = {"data": b""}
        self.payload = payload

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self) -> None:
                body = payload["data"]
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self._send()

            def do_GET(self) -> None:
                self._send()

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def read_only(self, data: bytes) -> None:
        self.payload["data"] = data
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        conn.request("GET", "/raw")
        body = conn.getresponse().read()
        conn.close()
        if len(body) != len(data):
            raise SystemExit("short read")


def make_sdk(server: _Server) -> Callable[[bytes], None] | None:
    try:
        from google import genai
    except ImportError:
        return None
    client = genai.Client(
        api_key="bench",
        http_options={"base_url": f"http://127.0.0.1:{server.port}", "api_version": "v1"},
    )

    def run(data: bytes) -> None:
        server.payload["data"] = data
        stream = client.models.generate_content_stream(model=MODEL, contents="x")
        calls = sum(len(chunk.function_calls or ()) for chunk in stream)
        if calls != CALLS:
            raise SystemExit("SDK saw the wrong number of calls")

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-sdk", action="store_true", help="skip the SDK (slow)")
    args = parser.parse_args()
    server = _Server()
    sdk = None if args.no_sdk else make_sdk(server)
    print(f"python {sys.version.split()[0]}; best of {args.repeat}")
    print(
        f"{'chunks':>7} {'bare ch/s':>11} {'strict ch/s':>11} {'socket ms':>9} {'sdk ch/s':>10} "
        f"{'callgate ch/s':>14} {'us/ch':>6} {'x vs sdk':>8} {'x bare':>7} {'x strict':>8}"
    )
    for n in (1000, 4000, 16000, 64000):
        data = build_stream(n)
        t_bare = best(partial(bare, data), args.repeat)
        t_strict = best(partial(strict_floor, data), args.repeat)
        t_cg = best(partial(callgate_parse, data), args.repeat)
        t_sock = best(partial(server.read_only, data), args.repeat)
        sdk_repeat = max(1, args.repeat // 2) if n <= 4000 else 1
        t_sdk = (
            best(partial(sdk, data), sdk_repeat) if sdk is not None and n <= 16000 else float("nan")
        )
        print(
            f"{n:>7} {n / t_bare:>11,.0f} {n / t_strict:>11,.0f} {t_sock * 1e3:>9.1f} "
            f"{n / t_sdk:>10,.0f} {n / t_cg:>14,.0f} {t_cg / n * 1e6:>6.2f} "
            f"{t_sdk / t_cg:>8.1f} {t_cg / t_bare:>7.2f} {t_cg / t_strict:>8.2f}"
        )
    server.server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
