"""The published finding of docs/frameworks.md ("What agents do under faults"), bounded:
the rows of the table where a light framework ran a call of a cut turn and those where it
did not, re-run through the mock (the whole table: ``make frameworks-faults``)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "frameworks" / "under_faults.py"
CUT = "cut before the terminal"


def _runner() -> ModuleType:
    for framework in ("agents", "pydantic_ai", "anthropic", "openai"):
        if importlib.util.find_spec(framework) is None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"{framework} is not installed: CI installs callgate[dev]")
            pytest.skip(f"{framework} is not installed (pip install 'callgate[frameworks]')")
    spec = importlib.util.spec_from_file_location("under_faults", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["under_faults"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("framework", "fault", "ended", "tool_ran", "verdicts"),
    [
        ("pydantic-ai (Responses)", CUT, "answered", 1, ["executed_unreleased_call"]),
        ("openai chat.completions.stream", CUT, "answered", 1, ["executed_unreleased_call"]),
        ("openai-agents (Responses)", CUT, "raised ModelBehaviorError", 0, []),
        ("openai responses.stream", CUT, "raised RuntimeError", 0, []),
    ],
)
def test_a_framework_under_a_fault_does_what_the_table_says(
    framework: str, fault: str, ended: str, tool_ran: int, verdicts: list[str]
) -> None:
    row = _runner().run(framework, fault)
    assert (row["ended"], row["tool_ran"], row["verdicts"]) == (ended, tool_ran, verdicts)
