"""``callgate script check FILE...`` and ``callgate script schema``. ``cli._main`` only calls
:func:`register`.

``check`` runs everything a script meets before it is served: the JSON Schema (every
problem it finds, each located by JSON pointer), then the loader's and the fault layer's
own checks (the first problem). Exit 0 when every file is valid, 1 otherwise. ``schema``
prints the shipped schema, e.g. to save it for an editor.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._errors import CallgateError

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``script`` command and its ``check`` and ``schema`` subcommands."""
    script = sub.add_parser("script", help="check a mock script, or print its JSON Schema")
    actions = script.add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", help="validate script files (exit 1 if any is invalid)")
    check.add_argument("files", nargs="+", metavar="FILE", help="JSON script file")
    check.set_defaults(func=_check)
    schema = actions.add_parser("schema", help="print the script JSON Schema")
    schema.set_defaults(func=_schema)


def _schema(_: argparse.Namespace) -> int:
    from ..mock._schema import schema_text

    sys.stdout.write(schema_text())
    return 0


def _check(args: argparse.Namespace) -> int:
    bad = 0
    for name in args.files:
        problems = _problems(name)
        for line in problems:
            print(line)
        if problems:
            bad += 1
        else:
            print(f"{name}: ok")
    if bad:
        print(f"{bad} of {len(args.files)} script(s) invalid", file=sys.stderr)
    return 1 if bad else 0


def _problems(name: str) -> list[str]:
    """Every located problem of one script file (empty if it would be served)."""
    from ..mock import ScriptError, load_script
    from ..mock._faults_spec import check_faults
    from ..mock._schema import problems
    from ..mock._validate import check_switches

    try:
        script = load_script(name)
        check_switches(script)
        check_faults(script)
    except ScriptError as first:
        document = _document(name)
        found = [] if document is None else problems(document)
        return [f"{name}:{p.location}: {p.message}" for p in found] or [str(first)]
    return []


def _document(name: str) -> Any:
    """The file's JSON value, if it is strict JSON of a readable size (else None)."""
    from .._json import loads_strict
    from ..mock._script import MAX_SCRIPT_BYTES

    try:
        data = Path(name).read_bytes()
        return None if len(data) > MAX_SCRIPT_BYTES else loads_strict(data)
    except (OSError, CallgateError):
        return None
