"""Agent frameworks run their own tool loops against the mock: the OpenAI Agents SDK and
pydantic-ai (the ``frameworks`` extra, light enough for ``make test``), each through the
example under ``examples/frameworks/`` that docs/frameworks.md points at.

Skipped when the extra is missing, except under ``CI=true``, where a missing framework
fails: CI installs ``.[dev]``, which includes it. LangChain, LiteLLM and the Vercel AI SDK
are checked by hand (docs/frameworks.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from callgate.mock import MockServer, load_script

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "frameworks"


def _example(name: str, framework: str) -> ModuleType:
    if importlib.util.find_spec(framework) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{framework} is not installed: CI installs callgate[dev] (frameworks)")
        pytest.skip(f"{framework} is not installed (pip install 'callgate[frameworks]')")
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "framework"),
    [("openai_agents_weather", "agents"), ("pydantic_ai_weather", "pydantic_ai")],
)
def test_framework_tool_loop_runs_through_the_mock(name: str, framework: str) -> None:
    example = _example(name, framework)
    with MockServer(load_script(example.SCRIPT)) as server:
        answer = example.run(server.openai_base_url)
        server.assert_script_done()  # both turns served, no mismatch
        entries = server.journal.entries()
    assert answer == "It is sunny in Paris."
    assert [e.outcome for e in entries] == ["matched", "matched"]
    # The framework sent the tool's result back in the second request.
    outputs = [i for i in entries[1].body["input"] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["sunny"]
