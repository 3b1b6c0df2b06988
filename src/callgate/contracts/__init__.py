"""Contract baselines, the source-URL allowlist and the fixture loader.

Baselines are data: each protocol's wire contract at each revision, with the SDK release it
was read from and official source URLs. Source-URL and fixture provenance checks are
metadata hygiene (the URL points where we claim, the metadata is consistent), not proof
that any content is authentic.
"""

from ._baselines import (
    CURRENT_REVISION,
    PROTOCOLS,
    REVISIONS,
    Baseline,
    all_baselines,
    get_baseline,
)
from ._fixtures import Fixture, load_fixture, load_fixtures
from ._urls import validate_source_url

__all__ = [
    "CURRENT_REVISION",
    "PROTOCOLS",
    "REVISIONS",
    "Baseline",
    "Fixture",
    "all_baselines",
    "get_baseline",
    "load_fixture",
    "load_fixtures",
    "validate_source_url",
]
