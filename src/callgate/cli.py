"""The ``callgate`` command: ``demo``, ``serve``, ``check`` and ``script check``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ._errors import CallgateError
from ._ledger_cli import add_ledger_parser
from ._protocols import PROTOCOLS, room
from .contracts import CURRENT_REVISION, REVISIONS

__all__ = ["main"]


def _demo(_: argparse.Namespace) -> int:
    from ._demo import run_demo

    return run_demo()


def _serve(args: argparse.Namespace) -> int:
    from .mock import MockServer, load_script, serve_forever

    if not 0 <= args.port <= 65535:
        print(f"callgate: --port must be 0-65535 (0 picks a free port), got {args.port}",
              file=sys.stderr)  # fmt: skip
        return 2

    def ready(server: MockServer) -> None:
        print(f"callgate mock serving {args.script} on {server.url}")
        print(base_url_table(server.url))
        sys.stdout.flush()

    serve_forever(load_script(args.script), host=args.host, port=args.port, on_ready=ready)
    return 0


def base_url_table(root: str) -> str:
    """The lines ``callgate serve`` prints under its first: per API, the base URL each
    client family takes, then the control routes."""
    from .mock._urls import base_urls

    rows = base_urls(root)
    width = max(len(r.url) for r in rows)
    lines = []
    for api in dict.fromkeys(r.api for r in rows):
        lines.append(f"  {api}")
        lines += [f"    {r.url:<{width}}  {r.clients}" for r in rows if r.api == api]
    lines.append(f"  status: GET {root}/_callgate/status   journal: GET {root}/_callgate/journal")
    lines.append(f"  sessions: POST/DELETE {root}/_callgate/sessions/{{test_id}} (body: a script)")
    return "\n".join(lines)


def _check(args: argparse.Namespace) -> int:
    module = room(args.protocol)
    data = Path(args.stream).read_bytes()
    try:
        turn = module.parse_stream(data, baseline=args.baseline)
    except CallgateError as exc:
        print(f"refused: {type(exc).__name__}: {exc}")
        return 1
    calls = [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in turn.calls]
    print(json.dumps({"released_calls": calls, "digest": turn.digest}, indent=2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the host tool loop against the embedded mock server")
    demo.set_defaults(func=_demo)
    serve = sub.add_parser("serve", help="serve a conversation script on the real wire protocols")
    serve.add_argument("--script", required=True, help="JSON script file")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.set_defaults(func=_serve)
    check = sub.add_parser("check", help="run the gate over a captured SSE stream")
    check.add_argument("stream", help="file holding the raw SSE bytes")
    check.add_argument(
        "--protocol",
        required=True,
        choices=PROTOCOLS,
    )
    check.add_argument("--baseline", default=CURRENT_REVISION, choices=REVISIONS)
    check.set_defaults(func=_check)
    add_ledger_parser(sub)
    from ._recording_cli import register

    register(sub, serve=serve, check=check)  # record, drift, serve --recordings, check --drift
    from ._script_cli import register as register_script

    register_script(sub)  # script check FILE..., script schema
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except CallgateError as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
