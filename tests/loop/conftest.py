"""Fixtures for the loop tests: a SQLite ledger per test and a remote file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from callgate.ledger import Ledger, open_ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_ledger(f"sqlite:///{tmp_path / 'loop.db'}") as opened:
        yield opened


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return tmp_path / "remote.log"
