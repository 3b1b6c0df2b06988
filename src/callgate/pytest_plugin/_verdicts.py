"""The plugin's verdict check: which verdicts fail a test, and how they are reported.

The level comes from ``@pytest.mark.callgate_verdicts(level, allow=[ids])`` on the test,
else the ini option ``callgate_verdicts``: ``error`` (the default: any ``error`` verdict
fails the test), ``warning`` (warnings too) or ``off``. ``allow`` names verdict ids a
test accepts (a test that commits one on purpose).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

__all__ = ["INI", "LEVELS", "MARKER", "failing", "report"]

MARKER = "callgate_verdicts"
INI = "callgate_verdicts"
LEVELS = ("error", "warning", "off")
_FAILS = {"error": frozenset({"error"}), "warning": frozenset({"error", "warning"}), "off": ()}
_MAX_EVIDENCE = 400  # characters of one evidence value in the report


def _setting(item: pytest.Item) -> tuple[str, frozenset[str]]:
    marker = item.get_closest_marker(MARKER)
    level = str(item.config.getini(INI) or "error").strip().lower()
    allow: Iterable[str] = ()
    if marker is not None:
        if marker.args:
            level = str(marker.args[0]).lower()
        level = str(marker.kwargs.get("level", level)).lower()
        allow = marker.kwargs.get("allow", ())
    if level not in LEVELS:
        raise pytest.UsageError(
            f"callgate_verdicts: level must be one of {', '.join(LEVELS)}, got {level!r}"
        )
    return level, frozenset(allow)


def failing(item: pytest.Item, verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts that fail ``item`` under its level and ``allow`` list."""
    level, allow = _setting(item)
    fails = _FAILS[level]
    return [v for v in verdicts if v["severity"] in fails and v["id"] not in allow]


def report(verdicts: Sequence[dict[str, Any]]) -> str:
    """The verdicts, readably: what, where, the rule and its source, the evidence."""
    lines = []
    for v in verdicts:
        lines.append(f"{v['severity']} {v['id']} (request #{v['seq']}, test id {v['test_id']!r})")
        lines.append(f"    {v['message']}")
        lines.append(f"    rule: {v['rule']}")
        lines.append(f"    source: {', '.join(v['source'])}")
        for key, value in v["evidence"].items():
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            if len(text) > _MAX_EVIDENCE:
                text = text[: _MAX_EVIDENCE - 3] + "..."
            lines.append(f"    {key}: {text}")
    return "\n".join(lines)
