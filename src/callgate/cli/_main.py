"""The ``callgate`` command line: the top-level parser, ``demo`` and ``check``; every
other command group is a module of its own in this package (see docs/cli.md).

Exit codes shared by every command: 0 success, 2 usage error (argparse's own) or a
callgate error (one line on stderr). Each command documents its own 1 (and ``ledger``
its 3 and 4).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .._errors import CallgateError
from .._protocols import PROTOCOLS, room
from ..contracts import CURRENT_REVISION, REVISIONS
from ._ledger import add_ledger_parser
from ._serve import register as register_serve

__all__ = ["main", "parser", "version"]

_DESCRIPTION = (
    "callgate: gate, continue, emulate and execute once the tool calls of LLM providers. "
    "Run 'callgate COMMAND --help' for a command's options."
)


def version() -> str:
    """The installed package's version (``callgate --version``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("callgate")
    except PackageNotFoundError:  # pragma: no cover - a source tree on sys.path
        return "unknown (not installed)"


def _demo(_: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo()


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


def parser() -> argparse.ArgumentParser:
    """The whole ``callgate`` command line (every command, every option with its help)."""
    top = argparse.ArgumentParser(prog="callgate", description=_DESCRIPTION)
    top.add_argument("--version", action="version", version=f"callgate {version()}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser("demo", help="run the host tool loop against the embedded mock server")
    demo.set_defaults(func=_demo)
    serve = register_serve(sub)
    check = sub.add_parser("check", help="run the gate over a captured stream of raw SSE bytes")
    check.add_argument("stream", help="file holding the raw SSE bytes")
    check.add_argument("--protocol", required=True, choices=PROTOCOLS, help="the wire protocol")
    check.add_argument(
        "--baseline",
        default=CURRENT_REVISION,
        choices=REVISIONS,
        help=f"the contract revision to enforce (default {CURRENT_REVISION})",
    )
    check.set_defaults(func=_check)
    from ._script import register as register_script

    register_script(sub)  # script check FILE..., script schema
    add_ledger_parser(sub)
    from ._recording import register

    register(sub, serve=serve, check=check)  # record, drift, serve --recordings, check --drift
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except CallgateError as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return 2
    return code
