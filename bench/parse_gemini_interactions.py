"""Benchmark: callgate.gemini_interactions.parse_stream against bare SSE + json.loads and the
official google-genai SDK's own stream iteration, on the same bytes, in one run.

The stream: interaction.created, 8 function_call steps each fed by one-character
``arguments_delta`` events (2,000 per call for the headline 16k figure), interaction.completed
with ``requires_action``, ``data: [DONE]``. Per-event time is also reported at 4k and 64k
deltas to show it stays flat.

google-genai has no transport hook for Interactions, so the SDK reads the bytes from a local
HTTP server on 127.0.0.1; the time to merely read the same body over that socket
(``http.client``, no parsing) is reported beside it, so the SDK's own cost can be told
apart from the socket's. callgate and the bare floor parse the bytes in memory.

Run: ``.venv/bin/python bench/parse_gemini_interactions.py`` (best of ``--repeat`` runs each).
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

from callgate.gemini_interactions import parse_stream

CALLS = 8
IID = "bench-interaction"


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def build_stream(deltas_per_call: int) -> tuple[bytes, int]:
    """The stream bytes and the number of arguments_delta events in it."""
    out = [
        _frame(
            {
                "event_type": "interaction.created",
                "event_id": "e0",
                "interaction": {"id": IID, "status": "in_progress"},
            }
        )
    ]
    eid = 1
    for index in range(CALLS):
        # {"q":"aaaa…"} cut into one-character fragments.
        body = '{"q":"' + "a" * (deltas_per_call - 8) + '"}'
        out.append(
            _frame(
                {
                    "event_type": "step.start",
                    "event_id": f"e{eid}",
                    "index": index,
                    "step": {
                        "type": "function_call",
                        "id": f"call-{index}",
                        "name": "lookup",
                        "arguments": {},
                    },
                }
            )
        )
        eid += 1
        for ch in body:
            out.append(
                _frame(
                    {
                        "event_type": "step.delta",
                        "event_id": f"e{eid}",
                        "index": index,
                        "delta": {"type": "arguments_delta", "arguments": ch},
                    }
                )
            )
            eid += 1
        out.append(_frame({"event_type": "step.stop", "event_id": f"e{eid}", "index": index}))
        eid += 1
    out.append(
        _frame(
            {
                "event_type": "interaction.completed",
                "event_id": f"e{eid}",
                "interaction": {
                    "id": IID,
                    "status": "requires_action",
                    "usage": {"total_tokens": 5000},
                },
            }
        )
    )
    out.append(b"data: [DONE]\n\n")
    return b"".join(out), CALLS * (deltas_per_call - 2)


def bare(data: bytes) -> None:
    """The floor: split frames, pick the data line, json.loads it. No checks at all."""
    loads = json.loads
    for frame in data.split(b"\n\n"):
        if frame.startswith(b"data: {"):
            loads(frame[6:])


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
        http_options={
            "base_url": f"http://127.0.0.1:{server.port}",
            "api_version": "v1",
            "retry_options": {"attempts": 1},
        },
    )

    def run(data: bytes) -> None:
        server.payload["data"] = data
        stream = client.interactions.create(model="bench-model", input="x", stream=True)
        count = sum(1 for _ in stream)
        if count < CALLS:
            raise SystemExit("SDK yielded too few events")

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
        f"{'deltas':>7} {'bare ev/s':>11} {'socket ms':>9} {'sdk ev/s':>10} "
        f"{'callgate ev/s':>14} {'us/ev':>6} {'x vs sdk':>8} {'x bare':>7}"
    )
    for per_call in (500, 2000, 8000):
        data, n = build_stream(per_call)
        t_bare = best(partial(bare, data), args.repeat)
        t_cg = best(partial(callgate_parse, data), args.repeat)
        t_sock = best(partial(server.read_only, data), args.repeat)
        sdk_repeat = max(1, args.repeat // 2) if per_call <= 2000 else 1
        t_sdk = best(partial(sdk, data), sdk_repeat) if sdk is not None else float("nan")
        print(
            f"{n:>7} {n / t_bare:>11,.0f} {t_sock * 1e3:>9.1f} {n / t_sdk:>10,.0f} "
            f"{n / t_cg:>14,.0f} {t_cg / n * 1e6:>6.2f} {t_sdk / t_cg:>8.1f} "
            f"{t_cg / t_bare:>7.2f}"
        )
    server.server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
