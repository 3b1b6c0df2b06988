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
        print(f"  OpenAI Responses       {server.openai_base_url}")
        print(f"  Azure OpenAI v1        {server.azure_openai_base_url}")
        print(f"  Anthropic Messages     {server.anthropic_base_url}")
        print(f"  Gemini Interactions    {server.gemini_base_url}  (api_version v1 or v1beta)")
        sys.stdout.flush()

    serve_forever(load_script(args.script), host=args.host, port=args.port, on_ready=ready)
    return 0


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
