"""`callgate serve` refuses bad input with one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from callgate.cli import main
from callgate.mock import ScriptError, load_script
from callgate.mock._script import MAX_SCRIPT_BYTES


def _script_file(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    turn = {"protocol": "openai_responses", "respond": {"text": "hi"}}
    path.write_text('{"conversations": {"default": [' + str(turn).replace("'", '"') + "]}}")
    return path


def test_serve_with_an_out_of_range_port_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "callgate.cli", "serve", "--script", str(_script_file(tmp_path)),
         "--port", "70000"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "70000" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_port_check_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--script", str(_script_file(tmp_path)), "--port", "-1"]) == 2
    assert "--port must be 0-65535" in capsys.readouterr().err


def test_script_file_is_read_with_a_size_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(MAX_SCRIPT_BYTES + 1)  # sparse: no 16 MiB written
    with pytest.raises(ScriptError, match="over 16777216 bytes"):
        load_script(big)
    assert main(["serve", "--script", str(big)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "over 16777216 bytes" in err


def test_mock_server_with_an_out_of_range_port_raises_usage_error() -> None:
    from callgate import UsageError
    from callgate.mock import MockServer, ScriptBuilder

    script = ScriptBuilder(seed=1).turn("openai_responses", text="hi").build()
    with pytest.raises(UsageError, match="0-65535"):
        MockServer(script, port=70000).start()
