"""The plugin parses a script once per content: the tests of a suite that serve the same
file or dict share the parse, and an edited file is read again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from callgate.mock import ScriptError
from callgate.pytest_plugin import _coerce_script

SCRIPT = {"turns": [{"protocol": "openai_responses", "respond": {"text": "one"}}]}


def test_the_same_dict_is_parsed_once_and_a_changed_one_again(tmp_path: Path) -> None:
    first = _coerce_script(SCRIPT, tmp_path)
    assert _coerce_script(json.loads(json.dumps(SCRIPT)), tmp_path) is first
    changed = {"turns": [{"protocol": "openai_responses", "respond": {"text": "two"}}]}
    second = _coerce_script(changed, tmp_path)
    assert second.conversations["default"][0].respond["text"] == "two"


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCRIPT))
    first = _coerce_script("s.json", tmp_path)
    assert _coerce_script("s.json", tmp_path) is first
    path.write_text(json.dumps(SCRIPT).replace('"one"', '"three"'))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # another mtime, surely
    again = _coerce_script("s.json", tmp_path)
    assert again.conversations["default"][0].respond["text"] == "three"


def test_a_bad_script_fails_every_time(tmp_path: Path) -> None:
    for _ in range(2):
        with pytest.raises(ScriptError, match="protocol"):
            _coerce_script({"turns": [{"protocol": "nope"}]}, tmp_path)
        with pytest.raises(ScriptError):
            _coerce_script("missing.json", tmp_path)
