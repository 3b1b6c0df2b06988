"""The hosted-step field tables callgate merges streamed deltas by, against the installed SDK.

Runs in both SDK generations (it is in the Makefile's ``BASELINE_TESTS``): for every hosted
step and delta type the baseline knows, the fields the SDK's pydantic model declares are
exactly :data:`STEP_FIELDS` / :data:`DELTA_FIELDS` (identity keys aside), so "a delta field
is pinned when the step declares it" is read from the SDK, not assumed.
"""

from __future__ import annotations

import importlib.metadata

import pytest
from google.genai._gaos.types.interactions import step as sdk_step
from google.genai._gaos.types.interactions import stepdeltadata as sdk_delta

from callgate.gemini_interactions._events import HOSTED_STEPS, baseline_deltas, baseline_steps
from callgate.gemini_interactions._hosted import DELTA_FIELDS, STEP_FIELDS

GENERATION = int(importlib.metadata.version("google-genai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
_IDENTITY = {"type", "id", "call_id"}


def _declared(model: type) -> frozenset[str]:
    return frozenset(model.model_fields) - _IDENTITY  # type: ignore[attr-defined]


def test_the_baseline_knows_exactly_the_sdk_step_and_delta_unions() -> None:
    assert baseline_steps(BASELINE) == frozenset(sdk_step._STEP_VARIANTS)
    assert baseline_deltas(BASELINE) == frozenset(sdk_delta._STEP_DELTA_DATA_VARIANTS)


@pytest.mark.parametrize("kind", sorted(set(HOSTED_STEPS) & baseline_steps(BASELINE)))
def test_hosted_step_fields_match_the_sdk(kind: str) -> None:
    assert STEP_FIELDS[kind] == _declared(sdk_step._STEP_VARIANTS[kind])


@pytest.mark.parametrize(
    "kind", sorted(set(HOSTED_STEPS) & baseline_deltas(BASELINE) & baseline_steps(BASELINE))
)
def test_hosted_delta_fields_match_the_sdk(kind: str) -> None:
    assert DELTA_FIELDS[kind] == _declared(sdk_delta._STEP_DELTA_DATA_VARIANTS[kind])
