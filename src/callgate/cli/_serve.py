"""``callgate serve``: the mock server in the foreground, with a request log and a summary.

Every request the mock journals is logged as one line on stderr when its answer is
complete (``--quiet`` turns the lines off), and so is every session registered or dropped
over ``/_callgate/sessions``. stderr, because stdout carries the lines a script reads
(the URL and the base URL table, printed once at start), and a log there would mix with
them. On SIGINT (Ctrl-C) or SIGTERM the server stops and prints a summary on stderr:
per session, the turns served and left and the mismatches, from the mock's own status
(sessions dropped while it ran are summarised from the final status their drop returned),
and the verdicts on what the clients did (docs/verdicts.md), each also printed on stderr
as it happens (``--quiet`` too).

Exit codes: 0 stopped; 1 stopped with ``--require-done`` while a session was not done
(turns left, or a mismatch); 2 usage or script error.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..mock import JournalEntry, MockServer
    from ..mock._verdicts import Verdict

__all__ = ["EXIT_NOT_DONE", "base_url_table", "log_requests", "register", "request_line"]

EXIT_NOT_DONE = 1
_MAX_KEPT_DROPS = 1000  # not-done sessions dropped during a run, listed in the summary
_MAX_DETAIL = 300  # characters of a mismatch or refusal reason on a log line


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` command; returns its parser (``--recordings`` is added to it)."""
    serve: argparse.ArgumentParser = sub.add_parser(
        "serve", help="serve a conversation script on the providers' real HTTP APIs"
    )
    serve.add_argument(
        "--script",
        required=True,
        help="the JSON script file to serve (none: only sessions registered over HTTP)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free port")
    serve.add_argument("--quiet", action="store_true", help="do not log each request on stderr")
    serve.add_argument(
        "--require-done",
        action="store_true",
        help="exit 1 at shutdown if any session has turns left or saw a mismatch",
    )
    serve.set_defaults(func=_serve)
    return serve


def _serve(args: argparse.Namespace) -> int:
    from ..mock import Script, load_script, serve_forever

    if not 0 <= args.port <= 65535:
        print(f"callgate: --port must be 0-65535 (0 picks a free port), got {args.port}",
              file=sys.stderr)  # fmt: skip
        return 2
    log = _Log(quiet=args.quiet)
    served: list[MockServer] = []

    def ready(server: MockServer) -> None:
        served.append(server)
        server.journal.observe(log.request)
        server.state.session_observer = log.session
        server.state.verdicts.listen(log.verdict)
        what = args.script or "registered sessions only"
        print(f"callgate mock serving {what} on {server.url}")
        print(base_url_table(server.url))
        sys.stdout.flush()

    # Without a script, every test registers its own session (the server's own is empty).
    script = load_script(args.script) if args.script else Script(conversations={})
    with _sigterm_stops():
        serve_forever(script, host=args.host, port=args.port, on_ready=ready)
    if not served:  # pragma: no cover - serve_forever raises before on_ready otherwise
        return 2
    done = log.summary(served[0].status())
    return EXIT_NOT_DONE if args.require_done and not done else 0


@contextlib.contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM stops the server as Ctrl-C does (and the summary is printed).

    uvicorn handles SIGTERM while it serves, then raises it again once it has shut down:
    with the default handler that would kill the process before the summary. Here it
    becomes a ``KeyboardInterrupt``, which ``serve_forever`` takes as "stop"."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Log:
    """The request log and what the summary adds about sessions dropped during the run."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet
        self.dropped_done = 0
        self.dropped_not_done: list[dict[str, Any]] = []
        self.dropped_uncounted = 0  # not-done drops past the kept ones
        self.dropped_verdicts: list[dict[str, Any]] = []  # of done sessions dropped

    def _emit(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # stderr closed: keep serving
            print(line, file=sys.stderr, flush=True)

    def request(self, entry: JournalEntry) -> None:
        if not self.quiet:
            self._emit(request_line(entry))

    def verdict(self, verdict: Verdict) -> None:
        """A verdict as it happens (printed with ``--quiet`` too: it is a finding)."""
        self._emit(verdict_line(verdict.to_dict()))

    def session(self, event: str, status: dict[str, Any]) -> None:
        if event == "dropped":
            if status["done"]:
                self.dropped_done += 1
                kept = _MAX_KEPT_DROPS - len(self.dropped_verdicts)
                self.dropped_verdicts += status.get("verdicts", [])[: max(kept, 0)]
            elif len(self.dropped_not_done) < _MAX_KEPT_DROPS:
                self.dropped_not_done.append(status)
            else:
                self.dropped_uncounted += 1
        if not self.quiet:
            stamp = _clock(time.time())
            self._emit(f"{stamp} session {event}: {_counts(status)}")

    def summary(self, status: dict[str, Any]) -> bool:
        """Print the summary on stderr; whether every session was done."""
        lines = ["callgate serve stopped. Sessions:"]
        not_done = 0
        for session in status["sessions"]:
            lines += _session_lines(session, kept=True)
            not_done += not session["done"]
        for session in self.dropped_not_done:
            lines += _session_lines(session, kept=False)
        not_done += len(self.dropped_not_done) + self.dropped_uncounted
        if self.dropped_uncounted:
            lines.append(f"  ... and {self.dropped_uncounted} more dropped session(s) not done")
        if self.dropped_done:
            lines.append(f"  {self.dropped_done} dropped session(s) were done")
        verdicts = [v for s in status["sessions"] for v in s.get("verdicts", ())]
        verdicts += [v for s in self.dropped_not_done for v in s.get("verdicts", ())]
        verdicts += self.dropped_verdicts
        if verdicts:
            lines.append(verdict_summary(verdicts))
        total = len(status["sessions"]) + self.dropped_done
        total += len(self.dropped_not_done) + self.dropped_uncounted
        lines.append(
            f"{not_done} of {total} session(s) not done" if not_done else "every session done"
        )
        self._emit("\n".join(lines))
        return not_done == 0


def log_requests(server: MockServer) -> None:
    """Log each request ``server`` journals on stderr (``serve --recordings`` uses it)."""
    server.journal.observe(_Log(quiet=False).request)


def verdict_line(verdict: dict[str, Any]) -> str:
    """One log line per verdict: when, severity, id, test id, request and what happened."""
    return (
        f"{_clock(verdict['at'])} VERDICT {verdict['severity']} {verdict['id']} "
        f"test={verdict['test_id']} request=#{verdict['seq']}: {_short(verdict['message'])}"
    )


def verdict_summary(verdicts: list[dict[str, Any]]) -> str:
    """The summary's verdict line: counts per severity, then per id."""
    errors = sum(v["severity"] == "error" for v in verdicts)
    per_id: dict[str, int] = {}
    for v in verdicts:
        per_id[v["id"]] = per_id.get(v["id"], 0) + 1
    ids = ", ".join(f"{name} x{n}" for name, n in sorted(per_id.items()))
    return f"verdicts: {errors} error(s), {len(verdicts) - errors} warning(s): {ids}"


def _counts(status: dict[str, Any]) -> str:
    done = "done" if status["done"] else "NOT done"
    return (
        f"test id {status['test_id']!r}: served {status['served']}, left {status['left']}, "
        f"mismatches {status['mismatches']} ({done})"
    )


def _session_lines(status: dict[str, Any], *, kept: bool) -> list[str]:
    lines = [f"  {_counts(status)}{'' if kept else ', dropped during the run'}"]
    conversations = status["conversations"]
    if len(conversations) > 1 or any(c["left"] for c in conversations.values()):
        lines += [
            f"    conversation {name!r}: served {c['served']}, left {c['left']}"
            for name, c in conversations.items()
        ]
    return lines


def _clock(seconds: float) -> str:
    """Local wall-clock time with milliseconds (the log is read next to other logs)."""
    return time.strftime("%H:%M:%S", time.localtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}"


def request_line(entry: JournalEntry) -> str:
    """One log line: arrival time, method, path, test id, status, outcome and, for a
    matched request the script turn, for a mismatch or a refusal the reason."""
    target = entry.path + (f"?{entry.query}" if entry.query else "")
    conversation = entry.conversation
    where = f" conversation={conversation}" if conversation not in (None, "default") else ""
    head = (
        f"{_clock(entry.started)} {entry.method} {target} test={entry.test_id}{where} "
        f"{entry.status} {entry.outcome}"
    )
    if entry.outcome == "matched":
        return f"{head} {entry.location}" if entry.location else head
    if entry.outcome == "mismatch":
        at = f" at {entry.location}" if entry.location else ""
        return f"{head}{at}: {_short('; '.join(entry.problems))}"
    reason = _error_message(entry.response)
    return f"{head}: {_short(reason)}" if reason else head


def _error_message(response: Any) -> str | None:
    """The ``error.message`` every provider's error body (and the mock's own) carries."""
    error = response.get("error") if isinstance(response, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def base_url_table(root: str) -> str:
    """The lines ``callgate serve`` prints under its first: per API, the base URL each
    client family takes, then the control routes."""
    from ..mock._urls import base_urls

    rows = base_urls(root)
    width = max(len(r.url) for r in rows)
    lines = []
    for api in dict.fromkeys(r.api for r in rows):
        lines.append(f"  {api}")
        lines += [f"    {r.url:<{width}}  {r.clients}" for r in rows if r.api == api]
    lines.append(f"  status: GET {root}/_callgate/status   journal: GET {root}/_callgate/journal")
    lines.append(f"  sessions: POST/DELETE {root}/_callgate/sessions/{{test_id}} (body: a script)")
    return "\n".join(lines)
