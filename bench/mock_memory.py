"""Mock server memory over a long run: RSS growth over 100k requests, with the defaults.

Run: ``.venv/bin/python bench/mock_memory.py`` (options: ``--requests``, ``--before SRC``).
The server is exactly what ``callgate serve`` runs (:func:`callgate.mock.serve_forever`,
its default bounds), one process on 127.0.0.1; this process drives it over real sockets.
Two workloads, each on a fresh server:

- ``fresh test id``: the throughput benchmark's streamed two-call OpenAI turn, every
  request with its own ``x-callgate-test-id`` (a new session each time: matched, rendered,
  stored, journaled, streamed);
- ``one test id``: every request in the same session, so after the first turn each one
  is a mismatch (journaled, counted).

The RSS of the server (``VmRSS``) is read after a 2,000-request warm-up and again after
``--requests`` more; the growth is the difference. At the end the whole journal is read
over HTTP once while another client keeps sending provider requests; the time that read
took and the other client's longest wait meanwhile are printed. ``--before SRC`` runs the same
workloads against another source tree too (e.g. an export of an older commit), in the
same run, for a ratio.

Requests are pipelined, 32 per batch on 4 keep-alive connections used in turn, and every
answer is checked for the expected status.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from server_throughput import REQUEST, free_port, script, wait_listening  # noqa: E402

BATCH = 32
CONNECTIONS = 4


def serve(port: int) -> None:
    from callgate.mock import serve_forever

    serve_forever(script(), host="127.0.0.1", port=port)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


@contextmanager
def server(src: Path) -> Iterator[tuple[int, int]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--serve", "--port", str(port)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        yield port, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def request_bytes(test_id: str) -> bytes:
    body = json.dumps(REQUEST).encode()
    head = (
        "POST /openai/v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "authorization: Bearer bench\r\ncontent-type: application/json\r\n"
        f"x-callgate-test-id: {test_id}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Connection:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = bytearray()

    def exchange(self, requests: list[bytes]) -> list[int]:
        self.sock.sendall(b"".join(requests))
        return [self._response() for _ in requests]

    def _response(self) -> int:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        end = self.buffer.index(b"\r\n\r\n")
        head = bytes(self.buffer[:end])
        del self.buffer[: end + 4]
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        length = int(fields["content-length"])  # the mock sends finite answers whole
        while len(self.buffer) < length:
            self._fill()
        del self.buffer[:length]
        return status

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise RuntimeError("server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def drive(port: int, count: int, start: int, fresh: bool, first_status: int) -> None:
    connections = [Connection(port) for _ in range(CONNECTIONS)]
    try:
        n = 0
        while n < count:
            batch = min(BATCH, count - n)
            ids = [f"t{start + n + i}" if fresh else "one" for i in range(batch)]
            statuses = connections[(n // BATCH) % CONNECTIONS].exchange(
                [request_bytes(i) for i in ids]
            )
            expected = 200 if fresh else 400
            bad = [
                s for s in statuses if s != expected and not (start + n == 0 and s == first_status)
            ]
            if bad:
                raise RuntimeError(f"unexpected statuses {sorted(set(bad))}")
            n += batch
    finally:
        for connection in connections:
            connection.close()


def measure(src: Path, fresh: bool, count: int) -> tuple[float, float, int, float]:
    """RSS growth (MiB) over ``count`` requests, journal read seconds, entries read, and
    the longest wait of a client served during that read."""
    with server(src) as (port, pid):
        drive(port, 2000, 0, fresh, 200)
        before = rss_kib(pid)
        drive(port, count, 2000, fresh, 200)
        after = rss_kib(pid)
        read_s, entries, stall_s = read_journal(port)
    return (after - before) / 1024, read_s, entries, stall_s


def read_journal(port: int) -> tuple[float, int, float]:
    """Read the whole journal once while another client keeps sending provider requests:
    (seconds the read took, entries read, the other client's longest wait)."""
    import httpx

    done = threading.Event()
    waits: list[float] = []

    def other_client() -> None:
        connection = Connection(port)
        try:
            while not done.is_set():
                started = time.perf_counter()
                connection.exchange([request_bytes("other")])
                waits.append(time.perf_counter() - started)
        finally:
            connection.close()

    thread = threading.Thread(target=other_client)
    thread.start()
    time.sleep(0.2)
    started = time.perf_counter()
    response = httpx.get(f"http://127.0.0.1:{port}/_callgate/journal", timeout=600)
    read_s = time.perf_counter() - started
    done.set()
    thread.join()
    if response.status_code != 200:
        raise RuntimeError(f"journal read answered {response.status_code}")
    return read_s, len(json.loads(response.content)), max(waits)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--before", type=Path, help="another source tree to measure too")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port)
        return
    trees = [("this tree", HERE.parent / "src")]
    if args.before is not None:
        trees.append(("before", args.before.resolve()))
    print(f"RSS growth over {args.requests:,} requests after a 2,000-request warm-up")
    print(
        "| server | workload | RSS growth | journal entries | whole-journal read "
        "| longest wait of another client meanwhile |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for label, src in trees:
        for fresh in (True, False):
            growth, read_s, entries, stall_s = measure(src, fresh, args.requests)
            workload = "fresh test id" if fresh else "one test id"
            print(
                f"| {label} | {workload} | {growth:.1f} MiB | {entries:,} | {read_s:.2f} s "
                f"| {stall_s:.3f} s |",
                flush=True,
            )


if __name__ == "__main__":
    main()
