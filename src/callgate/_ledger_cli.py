"""``callgate ledger ...``: look at and decide on a ledger's effects from a shell.

Exit codes (for scripts): 0 done (``pending``: nothing waits); 1 ``pending`` listed
effects waiting for a decision; 2 usage or ledger error; 3 conflict (wrong state, stale
``--expected-version``, reused decision id, missing approval); 4 no such effect.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

__all__ = ["add_ledger_parser"]

EXIT_PENDING, EXIT_CONFLICT, EXIT_NOT_FOUND = 1, 3, 4


def add_ledger_parser(sub: Any) -> None:
    """Add the ``ledger`` command and its subcommands to ``callgate``'s subparsers."""
    ledger = sub.add_parser("ledger", help="inspect and decide on a ledger's effects")
    cmds = ledger.add_subparsers(dest="ledger_command", required=True)

    def command(name: str, help: str, *, effect: bool = True) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = cmds.add_parser(name, help=help)
        parser.add_argument("--db", required=True, help="sqlite:///path.db or postgresql://...")
        parser.add_argument("--scope", default="default")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        if effect:
            parser.add_argument("effect", help="effect id (or a unique prefix of 8+ chars)")
        parser.set_defaults(func=_run)
        return parser

    pending = command("pending", "effects waiting for a decision", effect=False)
    pending.add_argument("--state", action="append", help="repeatable; default: undecided")
    pending.add_argument("--run", help="only this run")
    command("show", "one effect with its audit trail, approvals and late results")
    approve = command("approve", "grant one single-use approval")
    approve.add_argument("--actor", required=True)
    approve.add_argument("--reason", default="")
    approve.add_argument("--expires-in", type=float, default=3600.0, help="seconds")
    deny = command("deny", "deny the call (the model sees an error result)")
    deny.add_argument("--actor", required=True)
    deny.add_argument("--reason", required=True)
    resolve = command("resolve", "decide an unknown / needs_operator effect")
    resolve.add_argument("--action", required=True, choices=["commit", "fail", "retry"])
    resolve.add_argument("--expected-version", required=True, type=int)
    resolve.add_argument("--decision-id", required=True)
    resolve.add_argument("--reason", required=True)
    resolve.add_argument("--actor", required=True)
    resolve.add_argument("--result", help="what the model sees (JSON, or plain text)")
    recover = command(
        "recover", "expired leases -> unknown; list what needs attention", effect=False
    )
    recover.add_argument("--worker", default="callgate-cli")


def _run(args: argparse.Namespace) -> int:
    from .ledger import ApprovalError, ConflictError, open_ledger

    with open_ledger(args.db, scope=args.scope) as ledger:
        try:
            return _HANDLERS[args.ledger_command](ledger, args)
        except (ConflictError, ApprovalError) as exc:
            print(f"conflict: {exc}", file=sys.stderr)
            return EXIT_CONFLICT
        except _NotFoundError as exc:
            print(f"not found: {exc}", file=sys.stderr)
            return EXIT_NOT_FOUND


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
        "result": None
        if result is None
        else {"output": result.output, "is_error": result.is_error},
        "duplicate_of": effect.duplicate_of,
        "lease_owner": effect.lease_owner,
        "lease_until": _until(effect),
    }


def _until(effect: Any) -> str | None:
    """The lease (or a verifier's settle time) on the database clock, ISO-8601 UTC."""
    from .ledger import iso_utc

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
    from .ledger import DEFAULT_PENDING

    effects = ledger.pending(args.state or DEFAULT_PENDING, run_id=args.run)
    lines = [_line(e) for e in effects] or ["nothing pending"]
    _emit(args, [_record(e) for e in effects], "\n".join(lines))
    return EXIT_PENDING if effects else 0


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
