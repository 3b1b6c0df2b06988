"""``callgate ledger ...``: look at and decide on a ledger's effects from a shell.

Exit codes (for scripts): 0 done (``pending``: nothing waits); 1 ``pending`` listed
effects waiting for a decision; 2 usage or database error (one line on stderr naming
the database, its password masked, and the cause); 3 conflict (wrong state, stale
``--expected-version``, reused decision id, missing approval); 4 no such effect.

Every command opens an existing ledger only: a URL naming no file, no schema or no
ledger is exit 2, and nothing is created.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
from typing import Any, NoReturn

__all__ = ["add_ledger_parser"]

EXIT_PENDING, EXIT_ERROR, EXIT_CONFLICT, EXIT_NOT_FOUND = 1, 2, 3, 4

_DB_HELP = "the ledger: sqlite:///relative.db, sqlite:////absolute.db or postgresql://user@host/db"
_SCHEMA_HELP = "PostgreSQL schema holding the ledger (default: the URL's search path)"
_SCOPE_HELP = "tenant inside the ledger, as the application opened it (default: default)"


class _OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit 2: scripts read stderr line by line."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_ledger_parser(sub: Any) -> None:
    """Add the ``ledger`` command and its subcommands to ``callgate``'s subparsers."""
    summary = "inspect and decide on a ledger's effects"
    ledger = sub.add_parser("ledger", help=summary, description=summary)
    if type(ledger) is argparse.ArgumentParser:
        # callgate's subparsers build plain parsers: make this one's errors one line too
        # (a subclass with only an error() of its own; nothing else of the object changes).
        ledger.__class__ = _OneLineParser
    cmds = ledger.add_subparsers(
        dest="ledger_command", required=True, metavar="COMMAND", parser_class=_OneLineParser
    )

    def command(name: str, help: str, *, effect: bool = True) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = cmds.add_parser(name, help=help, description=help)
        parser.add_argument("--db", required=True, metavar="URL", help=_DB_HELP)
        parser.add_argument("--schema", metavar="NAME", help=_SCHEMA_HELP)
        parser.add_argument("--scope", default="default", metavar="NAME", help=_SCOPE_HELP)
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
        if effect:
            parser.add_argument("effect", help="effect id, or a unique prefix of 8+ characters")
        parser.set_defaults(func=_run)
        return parser

    pending = command("pending", "list effects that wait (exit 1 if any, 0 if none)", effect=False)
    pending.add_argument(
        "--state",
        action="append",
        metavar="STATE",
        help="list effects in this state instead (repeatable; default: every waiting state)",
    )
    pending.add_argument("--run", metavar="RUN_ID", help="only effects of this run")
    command("show", "show one effect: state, arguments, result, audit trail, approvals")
    approve = command("approve", "grant one single-use approval to an awaiting effect")
    approve.add_argument("--actor", required=True, help="who decides (kept in the audit trail)")
    approve.add_argument("--reason", default="", help="why (kept in the audit trail)")
    approve.add_argument(
        "--expires-in",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how long the approval stays usable (default: 3600)",
    )
    deny = command("deny", "deny an awaiting effect: the model gets an error result")
    deny.add_argument("--actor", required=True, help="who decides (kept in the audit trail)")
    deny.add_argument("--reason", required=True, help="why; the model sees it in the result")
    resolve = command("resolve", "decide an effect in doubt (unknown or needs_operator)")
    resolve.add_argument(
        "--action",
        required=True,
        choices=["commit", "fail", "retry"],
        help="commit: it applied; fail: it did not apply; retry: run it again",
    )
    resolve.add_argument(
        "--expected-version",
        required=True,
        type=int,
        metavar="N",
        help="the effect's version as shown by show or pending (refused if it moved on)",
    )
    resolve.add_argument(
        "--decision-id",
        required=True,
        metavar="ID",
        help="your id for this decision; sending it again does nothing more",
    )
    resolve.add_argument("--reason", required=True, help="why (kept in the audit trail)")
    resolve.add_argument("--actor", required=True, help="who decides (kept in the audit trail)")
    resolve.add_argument(
        "--result", metavar="JSON", help="what the model sees (JSON, or plain text)"
    )
    recover = command(
        "recover", "move expired claims to unknown and list what needs attention", effect=False
    )
    recover.add_argument(
        "--worker",
        default="callgate-cli",
        metavar="ID",
        help="worker id recorded for recovery's changes (default: callgate-cli)",
    )


def _run(args: argparse.Namespace) -> int:
    from .._errors import CallgateError
    from ..ledger import ApprovalError, ConflictError, open_ledger

    try:
        with open_ledger(args.db, scope=args.scope, schema=args.schema, create=False) as ledger:
            return _HANDLERS[args.ledger_command](ledger, args)
    except (ConflictError, ApprovalError) as exc:
        return _fail(args, f"conflict: {exc}", EXIT_CONFLICT)
    except _NotFoundError as exc:
        return _fail(args, f"not found: {exc}", EXIT_NOT_FOUND)
    except Exception as exc:
        if isinstance(exc, (CallgateError, *_driver_errors())):
            return _fail(args, _cause(args, exc), EXIT_ERROR)
        # A bug of ours still must not read as exit 1 ("effects pending") to a script.
        return _fail(args, f"internal error: {type(exc).__name__}: {_cause(args, exc)}", EXIT_ERROR)


def _driver_errors() -> tuple[type[Exception], ...]:
    """Errors a database can raise under the ledger while a command runs (a server that
    went away, a locked or corrupt file): each is exit 2 with one line, not a traceback."""
    errors: list[type[Exception]] = [sqlite3.Error, OSError]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        errors.append(psycopg.Error)
    return tuple(errors)


def _cause(args: argparse.Namespace, exc: Exception) -> str:
    from ..ledger import LedgerOpenError
    from ..ledger._url import redact, scrub

    if isinstance(exc, LedgerOpenError):
        return f"{exc.database}: {exc.cause}"
    database, text = redact(args.db), scrub(exc, args.db)
    return text if database in text else f"{database}: {text}"


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    line = " ".join(message.split())  # a driver's message can span lines; scripts read one
    print(f"callgate ledger {args.ledger_command}: {line}", file=sys.stderr)
    return code


class _NotFoundError(Exception):
    pass


def _effect_id(ledger: Any, text: str) -> str:
    if len(text) == 64:
        candidates = [(text,)]
    elif len(text) < 8:
        raise _NotFoundError(f"{text!r}: give at least 8 characters of the effect id")
    else:
        with ledger.transaction() as tx:
            candidates = tx.rows(
                "SELECT effect_id FROM ledger_effects WHERE substr(effect_id, 1, ?) = ? LIMIT 2",
                (len(text), text),
            )
    if len(candidates) != 1:
        raise _NotFoundError(f"{text!r} names {len(candidates) or 'no'} effects")
    with ledger.transaction() as tx:
        if tx.one("SELECT 1 FROM ledger_effects WHERE effect_id = ?", candidates[0]) is None:
            raise _NotFoundError(f"no effect {text!r}")
    return str(candidates[0][0])


def _record(effect: Any) -> dict[str, Any]:
    from ..ledger import result_summary  # media parts: kind, type, size, digest; no bytes

    result = effect.result
    return {
        "effect_id": effect.effect_id,
        "run_id": effect.run_id,
        "turn": effect.turn_seq,
        "call_id": effect.call_id,
        "tool": effect.tool,
        "class": effect.effect_class.value,
        "state": effect.state.value,
        "version": effect.version,
        "attempt": effect.attempt,
        "arguments": effect.arguments,
        "result": None if result is None else result_summary(result),
        "duplicate_of": effect.duplicate_of,
        "lease_owner": effect.lease_owner,
        "lease_until": _until(effect),
    }


def _until(effect: Any) -> str | None:
    """The lease (or a verifier's settle time) on the database clock, ISO-8601 UTC."""
    from ..ledger import iso_utc

    return None if effect.lease_until is None else iso_utc(effect.lease_until)


def _line(effect: Any) -> str:
    leased = ""
    if effect.lease_owner is not None and effect.lease_until is not None:
        leased = f" worker={effect.lease_owner} lease_until={_until(effect)}"
    elif effect.lease_until is not None:
        leased = f" due={_until(effect)}"  # an inconclusive verification, asked again then
    return (
        f"{effect.effect_id[:12]}  {effect.state.value:<17} v{effect.version:<3} "
        f"{effect.tool:<16} run={effect.run_id} turn={effect.turn_seq} call={effect.call_id}"
        f"{leased}"
    )


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, sort_keys=True) if args.json else text)


def _pending(ledger: Any, args: argparse.Namespace) -> int:
    from ..ledger import DEFAULT_PENDING

    effects = ledger.pending(_states(args.state) or DEFAULT_PENDING, run_id=args.run)
    lines = [_line(e) for e in effects] or ["nothing pending"]
    _emit(args, [_record(e) for e in effects], "\n".join(lines))
    return EXIT_PENDING if effects else 0


def _states(given: list[str] | None) -> list[Any]:
    from .._errors import UsageError
    from ..ledger import EffectState

    known = [s.value for s in EffectState]
    for state in given or ():
        if state not in known:
            raise UsageError(f"--state {state!r} is not an effect state ({', '.join(known)})")
    return list(given or ())


def _show(ledger: Any, args: argparse.Namespace) -> int:
    effect = ledger.effect(_effect_id(ledger, args.effect))
    trail = ledger.audit(effect.effect_id)
    approvals = ledger.approvals(effect.effect_id)
    late = ledger.late_results(effect.effect_id)
    data = {
        **_record(effect),
        "audit": [
            {
                "event": e.event,
                "from": e.from_state,
                "to": e.to_state,
                "actor": e.actor,
                "epoch": e.epoch,
                "detail": e.detail,
            }
            for e in trail
        ],
        "approvals": [
            {"approval_id": a[0], "actor": a[1], "consumed_epoch": a[2], "expired": a[3]}
            for a in approvals
        ],
        "late_results": [{"epoch": r[0], "worker": r[1], "result": r[2]} for r in late],
    }
    text = [_line(effect), f"  arguments: {json.dumps(effect.arguments)}"]
    if effect.result is not None:
        text.append(f"  result: {json.dumps(data['result'])}")
    text += [f"  {e.from_state or '-'} -> {e.to_state}  ({e.event}, {e.actor})" for e in trail]
    text += [f"  approval {a[0]} by {a[1]} consumed_epoch={a[2]}" for a in approvals]
    text += [f"  late result at epoch {r[0]} from {r[1]}: {json.dumps(r[2])}" for r in late]
    _emit(args, data, "\n".join(text))
    return 0


def _approve(ledger: Any, args: argparse.Namespace) -> int:
    effect = ledger.approve(
        _effect_id(ledger, args.effect),
        actor=args.actor,
        reason=args.reason,
        expires_in=args.expires_in,
    )
    _emit(args, _record(effect), _line(effect))
    return 0


def _deny(ledger: Any, args: argparse.Namespace) -> int:
    effect = ledger.deny(_effect_id(ledger, args.effect), actor=args.actor, reason=args.reason)
    _emit(args, _record(effect), _line(effect))
    return 0


def _resolve(ledger: Any, args: argparse.Namespace) -> int:
    result: Any = args.result
    if result is not None:
        with contextlib.suppress(ValueError):  # plain text is what the model sees
            result = json.loads(result)
    effect = ledger.resolve(
        _effect_id(ledger, args.effect),
        expected_version=args.expected_version,
        decision_id=args.decision_id,
        action=args.action,
        result=result,
        reason=args.reason,
        actor=args.actor,
    )
    _emit(args, _record(effect), _line(effect))
    return 0


def _recover(ledger: Any, args: argparse.Namespace) -> int:
    report = ledger.recover(args.worker)
    data = {
        "lost": list(report.lost),
        "retried": list(report.retried),
        "escalated": list(report.escalated),
        "to_verify": list(report.to_verify),
        "requests": [
            {
                "request_id": r.request_id,
                "run_id": r.run_id,
                "state": r.state.value,
                "provider_turn_id": r.provider_turn_id,
                "held": r.provider_side_effects,
            }
            for r in report.requests
        ],
        "resumable_runs": list(report.resumable_runs),
    }
    text = [
        f"{key}: {len(value)}  {' '.join(str(v)[:12] for v in value if isinstance(v, str))}"
        for key, value in data.items()
    ]
    _emit(args, data, "\n".join(text))
    return 0


_HANDLERS = {
    "pending": _pending,
    "show": _show,
    "approve": _approve,
    "deny": _deny,
    "resolve": _resolve,
    "recover": _recover,
}
