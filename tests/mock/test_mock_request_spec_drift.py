"""The committed request specs are what the installed SDK generation's types say.

Runs under the current SDKs (``.venv``) and the 2026-07-21 ones (``.venv-baseline``,
through the Makefile's BASELINE_TESTS): each regenerates its generation's specs in memory
with ``tests/mock/request_spec_gen.py`` and compares them with the files the mock loads.
A difference means the SDK changed or the files were edited by hand: regenerate them
(``python tests/mock/request_spec_gen.py`` in each environment) and review the diff.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from callgate.mock._providers import provider

from . import request_spec_gen as gen


@pytest.mark.parametrize("protocol", sorted(gen.READERS))
def test_the_committed_spec_is_what_the_installed_sdk_types_say(protocol: str) -> None:
    spec = gen.generate(protocol)
    if spec is None:
        pytest.skip(f"no pinned {gen.PACKAGES[protocol]} installed")
    committed = gen.path_of(protocol, spec["generation"]).read_text(encoding="utf-8")
    assert json.loads(committed) == json.loads(gen.dumps(spec)), (
        f"{protocol}: the spec differs from {spec['sdk']}'s types; regenerate it"
    )


@pytest.mark.parametrize("protocol", sorted(gen.READERS))
def test_every_spec_file_loads_with_its_overlay(protocol: str) -> None:
    # compile_spec refuses an overlay naming a field the merged spec does not have
    assert _validator(protocol)({}) is not None  # every create request requires a field


def _validator(protocol: str) -> Callable[[dict[str, Any]], Any]:
    """The provider's check of a create body against its SDK-generated spec."""
    check = provider(protocol).validate
    if check is None:
        raise AssertionError(f"{protocol} has no request validation")
    return check
