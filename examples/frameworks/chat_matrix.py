"""The Chat Completions fault matrix for agent frameworks, checked by hand (issue 27).

Each ``*_chat_matrix.py`` beside this file drives one framework against a running mock:

    callgate serve --port 8765 &            # the repo's venv
    python examples/frameworks/langchain_chat_matrix.py http://127.0.0.1:8765

(the framework installed in a scratch venv; this module needs only the standard library).
Per scenario the script registers the mock's default session with the scenario's script
(``POST /_callgate/sessions/default``), runs the framework's two-parallel-call tool loop
(``get_weather`` for Paris and Rome) once, then reads the journal, and prints one record:
whether the loop completed, what the tool was called with, what was raised, and what
each follow-up request carried (tool results or a plain retry). The scenarios:

- ``loop``: two parallel calls (streamed as OpenAI streams them: the first call's deltas,
  then the second's), then the answer, which expects both results (PASS/FAIL);
- ``interleaved`` (streamed): the same loop with the two calls' argument deltas
  alternating (``interleave: round_robin``), which the wire allows: deltas are keyed by
  ``index`` (PASS/FAIL);
- ``truncate`` (streamed): the first call whole (``{"city":"Paris"}``), the second cut after
  12 characters (``{"city":"Rom``), then ``finish_reason: "length"`` and ``[DONE]`` (the
  mock's ``truncate`` fault);
- ``length`` (not streamed): both calls complete, ``finish_reason: "length"``;
- ``eof`` (streamed): the same cut (``{"city":"Rom`` after three 4-character deltas), then
  the connection closes: no finish reason, no ``[DONE]`` (a ``disconnect`` fault);
- ``error`` (streamed): both calls whole, then ``{"error": {...}}`` instead of the finish
  chunk (an ``error_event`` fault, ``before_terminal``), and the stream ends.

A fault scenario's later turns answer plain text with no expectations, so a framework that
executes the cut call, or retries, gets an answer and the journal shows what it sent. The
verdict is ``executed`` when the tool ran on the faulted turn's calls (the unsafe outcome),
``refused`` when it did not.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

MODEL = "gpt-4.1"
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Rome"}},
]
ANSWER = "It is sunny in Paris and in Rome."
QUESTION = "What is the weather in Paris and in Rome?"
TOOL_DOC = "The weather in a city."
TOOL_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "The city."}},
    "required": ["city"],
}
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": TOOL_DOC, "parameters": TOOL_SCHEMA},
    }
]


def turn(respond: dict[str, Any], expect: dict[str, Any] | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"protocol": "openai_chat_completions", "respond": respond}
    if expect is not None:
        turn["expect"] = expect
    return turn


def _calls(**extra: Any) -> dict[str, Any]:
    return {"calls": CALLS, "chunking": {"fixed": 4}, "interleave": "round_robin", **extra}


_RESULTS = {
    "function_results": [
        {"call": 0, "output_contains": "sunny in Paris"},
        {"call": 1, "output_contains": "sunny in Rome"},
    ]
}


def text_turn(text: str, expect: dict[str, Any] | None) -> dict[str, Any]:
    """The default closing turn: the answer as plain text."""
    return turn({"text": text}, expect)


Final = Callable[[str, Any], dict[str, Any]]


def scenarios(
    final: Final = text_turn, loop_expect: dict[str, Any] | None = None
) -> dict[str, tuple[tuple[bool, ...], dict[str, Any]]]:
    """scenario -> (the streams it runs with, its script). ``final`` renders the closing
    turn (a framework that ends on a tool call of its own, as smolagents' ``final_answer``,
    gets one); ``loop_expect`` replaces the check of the loop's second request."""
    later = [final(f"Answer {n}.", None) for n in (1, 2, 3)]
    expect = _RESULTS if loop_expect is None else loop_expect

    def faulted(**extra: Any) -> dict[str, Any]:
        # The calls one after the other: call 0 is whole when the fault strikes in call 1.
        first = {"calls": CALLS, "chunking": {"fixed": 4}, **extra}
        return {"seed": 1, "turns": [turn(first), *later]}

    eof = {"type": "disconnect", "after_call": 1, "after_argument_deltas": 3}
    whole = {"calls": CALLS, "chunking": {"fixed": 4}}
    return {
        "loop": ((False, True), {"seed": 1, "turns": [turn(whole), final(ANSWER, expect)]}),
        "interleaved": (
            (True,),
            {"seed": 1, "turns": [turn(_calls()), final(ANSWER, expect)]},
        ),
        "truncate": ((True,), faulted(fault={"type": "truncate", "call": 1, "keep": 12})),
        "length": ((False,), faulted(status="length")),
        "eof": ((True,), faulted(fault=eof)),
        "error": ((True,), faulted(fault={"type": "error_event", "before_terminal": True})),
    }


class Tool:
    """The recording ``get_weather``: every call's arguments, as the framework passed them."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.notes: list[str] = []  # what the framework surfaced (finish reason, raw text)

    def __call__(self, city: Any = None, **other: Any) -> str:
        self.seen.append({"city": city, **other} if other else city)
        return f"sunny in {city}"


def _http(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    if not base.startswith(("http://", "https://")):
        raise SystemExit(f"the mock URL must be http(s)://, got {base!r}")
    request = urllib.request.Request(base + path, data=data, method=method)  # noqa: S310
    request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        if exc.code == 404 and method == "DELETE":
            return None
        raise


def _register(base: str, script: dict[str, Any]) -> None:
    _http(base, "DELETE", "/_callgate/sessions/default")
    _http(base, "POST", "/_callgate/sessions/default", script)


def _requests(base: str) -> list[dict[str, Any]]:
    entries = _http(base, "GET", "/_callgate/journal?test_id=default")
    return [e for e in entries if str(e.get("path", "")).endswith("/chat/completions")]


def _describe(entry: dict[str, Any], first: list[Any]) -> str:
    """A follow-up request: the calls its last assistant message replays (as sent) and
    what follows that message (tool results, or other roles' text)."""
    body = entry.get("body") or {}
    messages = body.get("messages") or []
    at = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    how = f"{'stream' if body.get('stream') else 'body'} {entry.get('status')}"
    answer = entry.get("response")
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        how += f" ({str(answer['error'].get('message'))[:90]})"
    if messages == first:
        return f"{how}: the first request's messages again (a retry)"
    if at < 0:
        return f"{how}: no assistant message; roles {[m.get('role') for m in messages]}"
    replayed = [(c.get("function") or {}).get("arguments")
                for c in messages[at].get("tool_calls") or []]  # fmt: skip
    after = [f"{m.get('role')}: {str(m.get('content'))[:80]}" for m in messages[at + 1 :]]
    return f"{how}: replays calls {replayed}, then {after}"


def run_matrix(
    framework: str,
    version: str,
    base: str,
    ask: Callable[[str, bool, Tool], Any],
    only: list[str] | None = None,
    final: Final = text_turn,
    loop_expect: dict[str, Any] | None = None,
) -> int:
    """Run every scenario through ``ask(openai_base_url, stream, tool)`` (which returns
    the loop's final text or raises); print one record per run. Exit status 1 when a
    ``loop`` or ``interleaved`` run failed."""
    base = base.rstrip("/")
    openai_base = base + "/openai/v1"
    failed = False
    print(f"# {framework} {version} against {base}, {time.strftime('%Y-%m-%d')}")
    lenient = "--lenient" in sys.argv
    if lenient:
        print("# --lenient: the mock's request-shape check is off (openai_chat_request_valid)")
    for name, (streams, script) in scenarios(final, loop_expect).items():
        if only and name not in only:
            continue
        if lenient:
            script = {**script, "validation": {"openai_chat_request_valid": False}}
        for stream in streams:
            _register(base, script)
            tool = Tool()
            chatter = io.StringIO()  # what the framework prints (panels, progress)
            try:
                with contextlib.redirect_stdout(chatter):
                    final, raised = ask(openai_base, stream, tool), None
            except Exception as exc:  # the record is the point: whatever the framework raised
                final = None
                first = (str(exc).strip().splitlines() or [""])[0][:160]
                raised = f"{type(exc).__module__}.{type(exc).__qualname__}: {first}"
                if "-v" in sys.argv:
                    traceback.print_exc()
            requests = _requests(base)
            first = (requests[0].get("body") or {}).get("messages") if requests else None
            status = _http(base, "GET", "/_callgate/status?test_id=default")["sessions"][0]
            record = {
                "framework": framework,
                "version": version,
                "date": time.strftime("%Y-%m-%d"),
                "scenario": name,
                "stream": stream,
                "final": None if final is None else str(final)[:120],
                "tool_calls_executed": tool.seen,
                "raised": raised,
                "notes": tool.notes,
                "requests": [
                    _describe(e, first)
                    if n
                    else f"first: {'stream' if stream else 'body'} {e['status']}"
                    for n, e in enumerate(requests)
                ],
            }
            if name in ("loop", "interleaved"):
                ok = raised is None and ANSWER in str(final) and status["done"]
                verdict = "PASS" if ok else "FAIL"
                failed = failed or not ok
            else:
                verdict = "executed" if tool.seen else "refused"
            record["verdict"] = verdict
            print(json.dumps(record))
            print(
                f"  {name:11} {'stream' if stream else 'body':6} {verdict:8} "
                f"tool={tool.seen} raised={raised} requests={len(requests)}"
            )
    print("loops:", "FAIL" if failed else "PASS")
    return 1 if failed else 0


def main(
    framework: str, version: str, ask: Callable[[str, bool, Tool], Any], **options: Any
) -> None:
    """``python X_chat_matrix.py MOCK_URL [SCENARIO ...] [-v] [--lenient]`` (``-v``:
    tracebacks; ``--lenient``: the mock's request-shape check off, for a framework that
    sends a field the SDK's types do not have)."""
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    if not args:
        raise SystemExit(f"usage: {sys.argv[0]} MOCK_URL [SCENARIO ...] [-v] [--lenient]")
    sys.exit(run_matrix(framework, version, args[0], ask, args[1:] or None, **options))
