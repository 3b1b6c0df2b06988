"""Server throughput: streamed two-call tool turns per second through one server process.

Run: ``.venv/bin/python bench/server_throughput.py`` (options: ``--duration``,
``--connections``, ``--servers``, ``--aimock-dir``). Prints one table: turns/s at 1, 8 and 32
connections, all measured in the same run, for

- ``callgate mock``: :class:`callgate.mock` serving a scripted OpenAI Responses turn with
  two function calls, streamed (``POST /openai/v1/responses``, ``stream: true``); every
  request carries its own ``x-callgate-test-id``, so each is a fresh session matched,
  rendered, journaled and streamed as in a test;
- ``starlette frames``: a bare Starlette endpoint sending the very same bytes one SSE
  frame per ASGI body message (the ceiling of frame-by-frame streaming);
- ``starlette whole``: the same endpoint sending them in one body message (the ceiling);
- ``aimock``: aimock 1.43.0 (``@copilotkit/aimock``, Node) serving the same two-call turn
  on its OpenAI Responses streaming route from a fixture, arguments in one delta per call
  (``--chunk-size 1000``), log level ``silent``; skipped with a note when not installed
  (``npm install @copilotkit/aimock@1.43.0`` in ``--aimock-dir``, default /tmp/aimock).

Every server is one process on 127.0.0.1; the Python ones run one uvicorn worker with
``log_level="warning"`` and no access log. uvicorn uses httptools and uvloop when they can
be imported (``uvicorn[standard]``), else h11 and asyncio; the header line says which. To
measure both stacks without touching the project's environment::

    pip install --target /tmp/uvextra httptools uvloop
    PYTHONPATH=/tmp/uvextra .venv/bin/python bench/server_throughput.py

Load comes from ``wrk`` (Debian package, ``apt-get install wrk``), one thread, keep-alive
connections, POST bodies from a Lua script; each cell runs ``--duration`` seconds after a
one-second warm-up per server. A cell is void if any response was not 2xx or a socket
error occurred. Before measuring, one response from each server is decoded to check it
really is the two-call turn.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

MODEL = "bench-model"
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    {"name": "get_time", "arguments": {"tz": "Europe/Paris"}},
]
TOOLS = [{"type": "function", "name": c["name"], "parameters": {"type": "object"}} for c in CALLS]
REQUEST = {
    "model": MODEL,
    "stream": True,
    "input": "What are the weather and the time in Paris?",
    "tools": TOOLS,
}
AIMOCK_VERSION = "1.43.0"


def script() -> Any:
    from callgate.mock import ScriptBuilder

    expect = {"model": MODEL, "stream": True, "tools": [c["name"] for c in CALLS]}
    return ScriptBuilder(seed=1).turn("openai_responses", expect=expect, calls=list(CALLS)).build()


def turn_bytes() -> list[bytes]:
    """The frames the mock sends for the benchmark turn (for the bare endpoints)."""
    from callgate.mock._render_turn import render

    turn = script().conversations["default"][0]
    rendered = render(turn, seed=1, conversation="default", turn_number=0, stream=True, model=MODEL)
    return list(rendered.frames)


# -- the server processes (this file re-run with --serve) ------------------------------------


def serve(kind: str, port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    app: Any
    if kind == "mock":
        # Exactly what `callgate serve` runs.
        from callgate.mock import serve_forever

        serve_forever(script(), host="127.0.0.1", port=port)
        return
    else:
        frames = turn_bytes()
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
def running(argv: list[str], port: int, log: Path, cwd: str | None = None) -> Iterator[None]:
    """Run a server process; its stderr goes to ``log`` (asyncio's "socket.send() raised
    exception" lines when wrk drops its connections at the end of a cell are expected)."""
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_listening(port, proc)
            yield
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


def python_server(kind: str, port: int) -> list[str]:
    return [sys.executable, __file__, "--serve", kind, "--port", str(port)]


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


def check_turn(url: str, strict: bool) -> int:
    """POST once; the stream must hold exactly the two scripted calls. Returns its size."""
    headers = {"authorization": "Bearer bench", "x-callgate-test-id": "check"}
    response = httpx.post(url, json=REQUEST, headers=headers, timeout=10)
    if response.status_code != 200:
        raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")
    if strict:
        from callgate import openai_responses

        turn = openai_responses.parse_stream(response.content)
        got = [(c.name, c.arguments) for c in turn.calls]
    else:  # aimock: read the arguments off the .done events (its ids differ, no sequence)
        got = []
        for block in response.content.split(b"\n\n"):
            for line in block.split(b"\n"):
                if line.startswith(b"data: "):
                    event = json.loads(line[6:])
                    if event.get("type") == "response.output_item.done":
                        item = event["item"]
                        got.append((item["name"], json.loads(item["arguments"])))
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
    ["authorization"] = "Bearer bench",
    ["x-callgate-test-id"] = prefix .. counter,
  }, body)
end
"""


def wrk(url: str, connections: int, seconds: int, lua: Path) -> tuple[float, str]:
    """Requests/s, and a reason if the cell is void (non-2xx answers, socket errors).

    Every request carries its own test id (a new mock session), unique across runs."""
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
         "-s", str(lua), url, "--", f"run{next(_RUNS)}"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    problems = re.findall(r"(Non-2xx or 3xx responses: \d+|Socket errors: .*)", out)
    return rate, "; ".join(problems)


def lua_for(directory: Path, name: str, path: str) -> Path:
    body = json.dumps(REQUEST, separators=(",", ":"))
    lua = directory / f"{name}.lua"
    lua.write_text(LUA % {"body": body, "path": path})
    return lua


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["mock", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=int, default=5, help="seconds per cell")
    parser.add_argument("--connections", default="1,8,32", help="comma-separated")
    parser.add_argument("--aimock-dir", type=Path, default=Path("/tmp/aimock"))
    parser.add_argument(
        "--servers", default="mock,bare,aimock", help="any of mock, bare (both endpoints), aimock"
    )
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install -y wrk")
    levels = [int(n) for n in args.connections.split(",")]
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

    print(f"callgate from {Path(callgate.__file__).parent}")
    print(f"load: wrk -t1, {seconds} s per cell after a 1 s warm-up; loopback only")
    rows: list[tuple[str, list[str]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        chosen = set(args.servers.split(","))
        # key -> (command, port, working directory, [(row label, path, strict check)])
        processes: dict[str, tuple[list[str], int, str | None, list[tuple[str, str, bool]]]] = {}
        port = free_port()
        processes["mock"] = (
            python_server("mock", port), port, None,
            [("callgate mock", "/openai/v1/responses", True)],
        )  # fmt: skip
        port = free_port()
        processes["bare"] = (
            python_server("bare", port), port, None,
            [("starlette frames", "/frames", True), ("starlette whole", "/whole", True)],
        )  # fmt: skip
        if aimock is not None:
            fixture = work / "turn.json"
            fixture.write_text(json.dumps({
                "fixtures": [{"match": {"toolName": "get_weather"},
                              "response": {"toolCalls": CALLS}}]
            }))  # fmt: skip
            port = free_port()
            processes["aimock"] = (
                aimock_server(args.aimock_dir, port, fixture), port, str(args.aimock_dir),
                [(f"aimock {aimock}", "/v1/responses", False)],
            )  # fmt: skip
        for key, (argv, port, cwd, endpoints) in processes.items():
            if key not in chosen:
                continue
            with running(argv, port, work / f"server-{port}.log", cwd):
                for label, path, strict in endpoints:
                    url = f"http://127.0.0.1:{port}{path}"
                    size = check_turn(url, strict)
                    lua = lua_for(work, re.sub(r"\W", "_", label), path)
                    wrk(url, 8, 1, lua)  # warm-up
                    cells = []
                    for connections in levels:
                        rate, problem = wrk(url, connections, seconds, lua)
                        cells.append(f"{rate:,.0f}" + (f" (VOID: {problem})" if problem else ""))
                    rows.append((f"{label} ({size:,} B/turn)", cells))
                    print(f"  {rows[-1][0]}: {', '.join(cells)}", flush=True)
    print()
    print("| server | " + " | ".join(f"{n} conn" for n in levels) + " |")
    print("|---|" + "---:|" * len(levels))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


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
