"""``callgate demo``: the host tool loop on every protocol, against the embedded mock.

Every scenario is a client of :class:`~callgate.loop.HostLoop` with a SQLite ledger in a
temporary directory and a mock server of its own, and prints what happened: the calls the
gate released or why it refused the turn, what ran and what it returned, what each
continuation carried, and the answer. The account is read back from the ledger.

- :mod:`._tool_loops`: two calls, their results, the final answer, on each protocol and
  each continuation mode it has;
- :mod:`._refusals`: turns scripted to go wrong (truncated arguments, ``max_tokens``, EOF
  before the terminal event): the gate refuses and nothing runs;
- :mod:`._durable`: a process killed after a refund applied, and an approval-gated tool;
- :mod:`._hosted`: provider-run tools (web search, code execution) and their citations.

:func:`run_demo` returns 0 only when every scenario ended as expected, the scenarios
scripted to go wrong included.
"""

from __future__ import annotations

from collections.abc import Callable

from . import _durable, _hosted, _refusals, _tool_loops
from ._kit import TOOLS, one_http_client

__all__ = ["SCENARIOS", "TOOLS", "run_demo"]

Scenario = Callable[[Callable[[str], None]], bool]
SCENARIOS: list[tuple[str, Scenario]] = [
    *_tool_loops.SCENARIOS,
    *_refusals.SCENARIOS,
    *_durable.SCENARIOS,
    *_hosted.SCENARIOS,
]


def _say(text: str) -> None:
    print(text, flush=True)


def run_demo() -> int:
    """Run every scenario; 0 when all ended as expected, 1 otherwise."""
    _say(
        f"callgate demo: {len(SCENARIOS)} scenarios, each the host loop (callgate.loop) "
        "against its own mock server, with a SQLite ledger in a temporary directory\n"
    )
    with one_http_client():
        failures = sum(
            not _run(n, title, scenario) for n, (title, scenario) in enumerate(SCENARIOS, 1)
        )
    if failures:
        _say(f"demo FAILED: {failures} scenario(s) did not end as expected")
        return 1
    _say(f"demo passed: all {len(SCENARIOS)} scenarios ended as expected")
    return 0


def _run(number: int, title: str, scenario: Scenario) -> bool:
    _say(f"[{number}/{len(SCENARIOS)}] {title}")
    try:
        ok = scenario(_say)
    except Exception as exc:  # report and go on: the summary says what failed
        ok = False
        _say(f"    FAILED: {type(exc).__name__}: {exc}")
    else:
        if not ok:
            _say("    UNEXPECTED: the scenario did not end as expected")
    _say("")
    return ok
