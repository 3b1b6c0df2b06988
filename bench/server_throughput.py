"""Server throughput: streamed two-call tool turns per second through one server process.

Run: ``.venv/bin/python bench/server_throughput.py`` (options: ``--duration``, ``--repeat``,
``--connections``, ``--servers``, ``--aimock-dir``, ``--compare-src``, ``--protocol``).
Prints, per server and connection count, turns/s, wrk's p50 and p99 latency and the
server process's CPU time per turn, each as the median (min–max) over the rounds, and
then every server's ratio to aimock, computed round by round. Servers (``--servers``,
default ``mock,aimock``):

- ``mock``: :class:`callgate.mock` serving a scripted turn with two function calls,
  streamed, on ``--protocol`` (default ``openai_responses``: ``POST /openai/v1/responses``,
  ``stream: true``; also ``anthropic_messages``, ``gemini_generate_content``,
  ``gemini_interactions``, ``openai_chat_completions``: ``throughput_wire.py`` has each
  request), exactly as
  ``callgate serve`` runs it; every request carries its own ``x-callgate-test-id``, so
  each is a fresh session matched, rendered, journaled and streamed as in a test;
- ``per-event``: the same, the script asking for ``pacing: {flush: per_event}`` (no
  delay): one chunk per SSE frame, through the streaming path;
- ``uvicorn-protocol``: the mock on uvicorn's own httptools protocol instead of the
  mock's HTTP/1.1 connection (``mock._http1``);
- ``verdicts-off``: the mock with its verdicts switched off (``state.verdicts.enabled =
  False``: no judge, no facts); with ``mock`` in the same run, a table of the server CPU
  per turn on/off, round by round (docs/verdicts.md: at most 1.05);
- ``bare``: a bare Starlette endpoint sending the very same bytes one SSE frame per ASGI
  body message (``starlette frames``), and in one body message (``starlette whole``);
- ``aimock``: aimock 1.43.0 (``@copilotkit/aimock``, Node) serving the same two-call turn
  on the same protocol's streaming route from a fixture, arguments in one delta per call
  (``--chunk-size 1000``), log level ``silent``; skipped with a note when not installed
  (``npm install @copilotkit/aimock@1.43.0`` in ``--aimock-dir``, default /tmp/aimock).

``--compare-src DIR`` adds the mock served from another tree's ``src/`` (e.g. a checkout
of the commit before a change), in the same rounds.

Every server is one process on 127.0.0.1 and stays up for the whole run; the Python ones
run one uvicorn worker with ``log_level="warning"`` and no access log, on uvloop when it
can be imported (the header line says which). Load comes from ``wrk`` (Debian package,
``apt-get install wrk``), one thread, keep-alive connections, POST bodies from a Lua
script, ``--latency``. After a one-second warm-up per server, the cells are interleaved:
each round runs every connection count against every server back to back, so a ratio
compares cells measured seconds apart (the machine may be shared: read the spread). A
cell is void if any response was not 2xx or a socket error occurred. Before measuring,
one response from each server is decoded to check it really is the two-call turn. Server
CPU time comes from ``/proc/<pid>/stat`` (user + system) over the cell, divided by the
turns served: steadier than turns/s when other jobs take CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from throughput_wire import CALLS, MODEL, WIRES, Wire, calls_of

AIMOCK_VERSION = "1.43.0"


def script(protocol: str = "openai_responses", **respond: Any) -> Any:
    from callgate.mock import ScriptBuilder

    expect = {"model": MODEL, "stream": True, "tools": [c["name"] for c in CALLS]}
    builder = ScriptBuilder(seed=1)
    return builder.turn(protocol, expect=expect, calls=list(CALLS), **respond).build()


def turn_bytes(protocol: str) -> list[bytes]:
    """The frames the mock sends for the benchmark turn (for the bare endpoints)."""
    from callgate.mock._render_turn import render

    turn = script(protocol).conversations["default"][0]
    rendered = render(turn, seed=1, conversation="default", turn_number=0, stream=True, model=MODEL)
    return list(rendered.frames)


# -- the server processes (this file re-run with --serve) ------------------------------------


def serve(kind: str, port: int, protocol: str) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    app: Any
    if kind in ("mock", "per-event", "uvicorn-protocol", "verdicts-off"):
        # Exactly what `callgate serve` runs, with the turn's frames one body message each
        # (``pacing: {flush: per_event}``, no delay) or on uvicorn's own HTTP protocol.
        from callgate.mock import _server, serve_forever

        if kind == "uvicorn-protocol":
            _server.PROTOCOL = "httptools"
        paced = {"pacing": {"flush": "per_event"}} if kind == "per-event" else {}

        def ready(server: Any) -> None:
            if kind == "verdicts-off":  # the judge and the facts it needs, switched off
                server.state.verdicts.enabled = False

        serve_forever(script(protocol, **paced), host="127.0.0.1", port=port, on_ready=ready)
        return
    else:
        frames = turn_bytes(protocol)
        whole = b"".join(frames)

        async def by_frame(request: Request) -> Response:
            await request.body()

            async def body() -> Any:
                for frame in frames:
                    yield frame

            return StreamingResponse(body(), media_type="text/event-stream")

        async def at_once(request: Request) -> Response:
            await request.body()

            async def body() -> Any:
                yield whole

            return StreamingResponse(body(), media_type="text/event-stream")

        app = Starlette(
            routes=[
                Route("/frames", by_frame, methods=["POST"]),
                Route("/whole", at_once, methods=["POST"]),
            ]
        )
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
    )
    uvicorn.Server(config).run()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on port {port}")


@contextmanager
def running(
    argv: list[str], port: int, log: Path, cwd: str | None = None, src: str | None = None
) -> Iterator[int]:
    """Run a server process; its stderr goes to ``log`` (asyncio's "socket.send() raised
    exception" lines when wrk drops its connections at the end of a cell are expected)."""
    with log.open("wb") as err:
        env = None if src is None else {**os.environ, "PYTHONPATH": src}
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_listening(port, proc)
            yield proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    text = log.read_text(errors="replace")
    if "Traceback" in text:
        tail = "\n    ".join(text.strip().splitlines()[-4:])
        print(f"  WARNING: the server logged a traceback; its end:\n    {tail}", flush=True)


VERDICTS_OFF = "callgate mock, verdicts off"
# --serve kind -> its endpoints: (row label, path or None for the mock's, strict check)
SERVE_KINDS: dict[str, list[tuple[str, str | None, bool]]] = {
    "mock": [("callgate mock", None, True)],
    "per-event": [("callgate mock, per-event flush", None, True)],
    "uvicorn-protocol": [("callgate mock on uvicorn's protocol", None, True)],
    "verdicts-off": [(VERDICTS_OFF, None, True)],
    "bare": [("starlette frames", "/frames", True), ("starlette whole", "/whole", True)],
}


def python_server(kind: str, port: int, protocol: str) -> list[str]:
    return [sys.executable, __file__, "--serve", kind, "--port", str(port), "--protocol", protocol]


def aimock_server(directory: Path, port: int, fixture: Path) -> list[str]:
    cli = directory / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
    return [
        "node", str(cli), "--port", str(port), "--host", "127.0.0.1", "--fixtures",
        str(fixture), "--chunk-size", "1000", "--log-level", "silent",
    ]  # fmt: skip


def aimock_installed(directory: Path) -> str | None:
    package = directory / "node_modules" / "@copilotkit" / "aimock" / "package.json"
    if not package.is_file() or shutil.which("node") is None:
        return None
    version: str = json.loads(package.read_text())["version"]
    return version


# -- checking one response, and loading with wrk ---------------------------------------------


def check_turn(url: str, strict: bool, wire: Wire) -> int:
    """POST once; the stream must hold exactly the two scripted calls. Returns its size."""
    headers = {**wire.headers, "x-callgate-test-id": "check"}
    response = httpx.post(url, json=wire.request, headers=headers, timeout=10)
    if response.status_code != 200:
        raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")
    got = calls_of(wire, response.content, strict)
    if got != [(c["name"], c["arguments"]) for c in CALLS]:
        raise RuntimeError(f"{url}: not the two-call turn: {got}")
    return len(response.content)


_RUNS = itertools.count(1)
LUA = """
local body = [==[%(body)s]==]
local counter = 0
local serial = 0
function setup(thread)
  thread:set("serial", serial)
  serial = serial + 1
end
function init(args)
  prefix = args[1] .. "-" .. serial .. "-"
end
function request()
  counter = counter + 1
  return wrk.format("POST", "%(path)s", {
    ["content-type"] = "application/json",
%(headers)s    ["x-callgate-test-id"] = prefix .. counter,
  }, body)
end
"""


@dataclasses.dataclass
class Cell:
    """One wrk run against one server: turns/s, latency percentiles (ms), server CPU."""

    rate: float
    p50_ms: float
    p99_ms: float
    cpu_us: float  # server process CPU time (user + system) per turn
    problem: str  # why the cell is void ("" when it is not)


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * _UNITS[unit]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(url: str, connections: int, seconds: int, lua: Path, pid: int) -> Cell:
    """Load ``url`` for ``seconds``; every request carries its own test id (a new mock
    session), unique across runs. The cell is void on non-2xx answers or socket errors."""
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency",
         "-s", str(lua), url, "--", f"run{next(_RUNS)}"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    used = cpu_seconds(pid) - before
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    problems = re.findall(r"(Non-2xx or 3xx responses: \d+|Socket errors: .*)", out)
    return Cell(rate, p50, p99, used / max(total, 1) * 1e6, "; ".join(problems))


def lua_for(directory: Path, name: str, path: str, wire: Wire) -> Path:
    headers = "".join(f'    ["{k}"] = "{v}",\n' for k, v in wire.headers.items())
    lua = directory / f"{name}.lua"
    lua.write_text(LUA % {"body": wire.body(), "path": path, "headers": headers})
    return lua


@dataclasses.dataclass
class Target:
    """One endpoint of one running server process."""

    label: str
    url: str
    lua: Path
    pid: int
    size: int


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=sorted(SERVE_KINDS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--protocol", choices=sorted(WIRES), default="openai_responses")
    parser.add_argument("--duration", type=int, default=5, help="seconds per cell")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--connections", default="1,8,32", help="comma-separated")
    parser.add_argument("--aimock-dir", type=Path, default=Path("/tmp/aimock"))
    parser.add_argument(
        "--compare-src",
        type=Path,
        help="also serve the mock from this other tree's src/ (e.g. the commit before a change)",
    )
    parser.add_argument(
        "--servers",
        default="mock,aimock",
        help="any of mock, per-event, uvicorn-protocol, verdicts-off, bare (both endpoints), "
        "aimock",
    )
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.protocol)
        return
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install -y wrk")
    levels = [int(n) for n in args.connections.split(",")]
    wire = WIRES[args.protocol]
    seconds = args.duration

    import starlette
    import uvicorn

    aimock = aimock_installed(args.aimock_dir)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, uvicorn {uvicorn.__version__} "
        f"(http={_uvicorn_http()}, loop={_uvicorn_loop()}), starlette {starlette.__version__}, "
        f"aimock {aimock or 'not installed'} (node {_node_version()})"
    )
    import callgate

    print(f"callgate from {Path(callgate.__file__).parent}; protocol {wire.protocol}")
    print(
        f"load: wrk -t1, {seconds} s per cell, {args.repeat} interleaved rounds after a 1 s "
        f"warm-up per endpoint; loopback only; load average {os.getloadavg()[0]:.1f} at start"
    )
    chosen = args.servers.split(",")
    unknown = set(chosen) - {*SERVE_KINDS, "aimock"}
    if unknown:
        sys.exit(f"unknown server(s): {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        targets: list[Target] = []
        if args.compare_src is not None:
            chosen.insert(1, "compare")
        for key in chosen:
            port = free_port()
            cwd: str | None = None
            src: str | None = None
            if key == "aimock":
                if aimock is None:
                    print("  aimock skipped: not installed (see the module docstring)")
                    continue
                fixture = work / "turn.json"
                fixture.write_text(json.dumps({
                    "fixtures": [{"match": {"toolName": "get_weather"},
                                  "response": {"toolCalls": CALLS}}]
                }))  # fmt: skip
                argv, cwd = aimock_server(args.aimock_dir, port, fixture), str(args.aimock_dir)
                endpoints = [(f"aimock {aimock}", wire.aimock_path, False)]
            elif key == "compare":
                argv = python_server("mock", port, wire.protocol)
                src = str(args.compare_src.resolve())
                endpoints = [("callgate mock, --compare-src tree", wire.mock_path, True)]
            else:
                argv = python_server(key, port, wire.protocol)
                endpoints = [(n, p or wire.mock_path, c) for n, p, c in SERVE_KINDS[key]]
            pid = stack.enter_context(running(argv, port, work / f"server-{port}.log", cwd, src))
            for label, path, strict in endpoints:
                url = f"http://127.0.0.1:{port}{path}"
                size = check_turn(url, strict, wire)
                lua = lua_for(work, re.sub(r"\W", "_", label), path, wire)
                wrk(url, 8, 1, lua, pid)  # warm-up
                targets.append(Target(label, url, lua, pid, size))
        cells: dict[tuple[str, int], list[Cell]] = {}
        for round_ in range(args.repeat):
            for connections in levels:
                for target in targets:
                    cell = wrk(target.url, connections, seconds, target.lua, target.pid)
                    cells.setdefault((target.label, connections), []).append(cell)
                    void = f" VOID: {cell.problem}" if cell.problem else ""
                    print(
                        f"  round {round_ + 1}, {connections} conn, {target.label}: "
                        f"{cell.rate:,.0f}/s p50 {cell.p50_ms:.2f} ms p99 {cell.p99_ms:.2f} ms "
                        f"cpu {cell.cpu_us:.0f} us/turn{void}",
                        flush=True,
                    )
    report(targets, levels, cells, aimock)


def _spread(values: list[float], fmt: str) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    if len(values) == 1:
        return format(mid, fmt)
    return f"{format(mid, fmt)} ({format(low, fmt)}–{format(high, fmt)})"


def report(
    targets: list[Target], levels: list[int], cells: dict[tuple[str, int], list[Cell]],
    aimock: str | None,
) -> None:  # fmt: skip
    """Median (min–max) over the rounds, and callgate's ratio to aimock per round."""
    print()
    print("| server | conn | turns/s | p50 ms | p99 ms | server CPU µs/turn |")
    print("|---|---:|---:|---:|---:|---:|")
    for target in targets:
        for n in levels:
            got = cells[(target.label, n)]
            void = " VOID" if any(c.problem for c in got) else ""
            print(
                f"| {target.label} ({target.size:,} B/turn) | {n} | "
                f"{_spread([c.rate for c in got], ',.0f')}{void} | "
                f"{_spread([c.p50_ms for c in got], '.2f')} | "
                f"{_spread([c.p99_ms for c in got], '.2f')} | "
                f"{_spread([c.cpu_us for c in got], '.0f')} |"
            )
    verdict_cost(targets, levels, cells)
    base = f"aimock {aimock}"
    if not any(t.label == base for t in targets):
        return
    print()
    print(f"Ratio to {base}, per round (same round, back-to-back cells): median (min–max)")
    print()
    print("| server | " + " | ".join(f"{n} conn" for n in levels) + " |")
    print("|---|" + "---:|" * len(levels))
    for target in targets:
        if target.label == base:
            continue
        row = []
        for n in levels:
            ratios = [
                c.rate / b.rate
                for c, b in zip(cells[(target.label, n)], cells[(base, n)], strict=True)
            ]
            row.append(_spread(ratios, ".2f") + "x")
        print(f"| {target.label} | " + " | ".join(row) + " |")


def verdict_cost(
    targets: list[Target], levels: list[int], cells: dict[tuple[str, int], list[Cell]]
) -> None:
    """The judge's cost: the mock's server CPU per turn over the same with verdicts off,
    round by round (docs/verdicts.md; the target is at most 1.05)."""
    labels = {t.label for t in targets}
    if not {"callgate mock", VERDICTS_OFF} <= labels:
        return
    print()
    print("Server CPU per turn, verdicts on / off, per round: median (min–max)")
    print()
    print("| conn | CPU on/off |")
    print("|---:|---:|")
    for n in levels:
        on, off = cells[("callgate mock", n)], cells[(VERDICTS_OFF, n)]
        ratios = [a.cpu_us / b.cpu_us for a, b in zip(on, off, strict=True) if b.cpu_us]
        print(f"| {n} | {_spread(ratios, '.3f')} |")


def _uvicorn_http() -> str:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


def _uvicorn_loop() -> str:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def _node_version() -> str:
    if shutil.which("node") is None:
        return "absent"
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
