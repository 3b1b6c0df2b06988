"""``callgate script check FILE...`` exits 0 for valid scripts and 1 with every located
problem otherwise; ``callgate script schema`` prints the shipped schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from callgate.cli import main
from callgate.mock._schema import schema_text

ROOT = Path(__file__).resolve().parent.parent
GOOD = {"turns": [{"protocol": "openai_responses", "respond": {"text": "hi"}}]}


def _write(tmp_path: Path, name: str, doc: Any) -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def _check(capsys: pytest.CaptureFixture[str], *files: str) -> tuple[int, list[str], str]:
    code = main(["script", "check", *files])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_valid_scripts_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, "good.json", {"$schema": "./script.schema.json", **GOOD})
    examples = sorted(str(p) for p in (ROOT / "examples").glob("frameworks/weather_*.json"))
    assert len(examples) == 5
    code, lines, err = _check(capsys, good, *examples)
    assert code == 0
    assert lines == [f"{name}: ok" for name in (good, *examples)]
    assert err == ""


def test_every_schema_problem_is_listed_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {
        "turns": [
            {
                "protocol": "openai_responses",
                "expect": {"modle": "m"},
                "respond": {"text": 5, "calls": [{}], "fault": {"type": "disconnect", "after": -1}},
            }
        ]
    }
    bad = _write(tmp_path, "bad.json", doc)
    code, lines, err = _check(capsys, bad)
    assert code == 1
    t = f"{bad}:/turns/0"
    assert lines == [
        f"{t}/expect: unknown key(s) modle (known: function_results, has_tool_results, "
        "instructions, jsonpath, last_user_text, last_user_text_contains, last_user_text_regex, "
        "model, previous_id, stream, system, text_contains, tool_results, tools)",
        f"{t}/respond/calls/0/name: name is missing (expected str)",
        f"{t}/respond/fault/after: after must be at least 0",
        f"{t}/respond/text: expected str, got int",
    ]
    assert err == "1 of 1 script(s) invalid\n"


@pytest.mark.parametrize(
    ("doc", "location", "words"),
    [
        # Past the schema: the fault layer, the validation switches, the renderer.
        (
            {"turns": [{"protocol": "openai_responses",
                        "respond": {"fault": {"type": "http_error", "status": 529}}}]},
            "/turns/0/respond/fault/status",
            "Anthropic's status only",
        ),
        ({"validation": {"nope": False}, **GOOD}, "/validation/nope", "unknown validation check"),
        (
            {"turns": [{"protocol": "gemini_generate_content",
                        "respond": {"text": "ab", "chunk_plan": [1, 1, 1]}}]},
            "/turns/0/respond",
            "adding up to 1 wire part",
        ),
    ],
)  # fmt: skip
def test_what_the_schema_cannot_say_is_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any, location: str, words: str
) -> None:
    bad = _write(tmp_path, "bad.json", doc)
    code, lines, _ = _check(capsys, bad)
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith(f"{bad}:{location}: ")
    assert words in lines[0]


def test_unreadable_and_non_json_files_are_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path, "good.json", GOOD)
    dup = _write(tmp_path, "dup.json", '{"turns": [], "turns": []}')
    missing = str(tmp_path / "absent.json")
    code, lines, err = _check(capsys, good, dup, missing)
    assert code == 1
    assert lines[0] == f"{good}: ok"
    assert lines[1].startswith(f"{dup}: not strict JSON")
    assert lines[2].startswith(f"{missing}: cannot read script")
    assert err == "2 of 3 script(s) invalid\n"


def test_check_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["script", "check"])
    assert usage.value.code == 2
    assert "FILE" in capsys.readouterr().err


def test_schema_prints_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["script", "schema"]) == 0
    out = capsys.readouterr().out
    assert out == schema_text()
    assert json.loads(out)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_installed_command_runs(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.json", {"turns": []})
    done = subprocess.run(
        [sys.executable, "-m", "callgate.cli", "script", "check", bad],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == f"{bad}:/turns: a conversation is a non-empty list of turns\n"
