"""Built-in contract baselines."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from callgate import ContractError, ProvenanceError, UsageError
from callgate.contracts import (
    CURRENT_REVISION,
    PROTOCOLS,
    REVISIONS,
    Baseline,
    all_baselines,
    get_baseline,
    validate_source_url,
)

SDK_VERSIONS = {
    "2026-07-21": {"openai": "2.46.0", "anthropic": "0.117.0", "google-genai": "2.12.1"},
    "2026-11": {"openai": "3.57.0", "anthropic": "2.14.0", "google-genai": "3.6.1"},
}
PROVIDER = {
    "openai_responses": ("openai", "openai"),
    "anthropic_messages": ("anthropic", "anthropic"),
    "gemini_interactions": ("google", "google-genai"),
    "gemini_generate_content": ("google", "google-genai"),
    "openai_chat_completions": ("openai", "openai"),
}
API_VERSION = {
    ("openai_responses", "2026-07-21"): "v1",
    ("openai_responses", "2026-11"): "v1",
    ("anthropic_messages", "2026-07-21"): "2023-06-01",
    ("anthropic_messages", "2026-11"): "2026-10-21",
    ("gemini_interactions", "2026-07-21"): "v1",
    ("gemini_interactions", "2026-11"): "v1",
    ("gemini_generate_content", "2026-07-21"): "v1beta",
    ("gemini_generate_content", "2026-11"): "v1",
    ("openai_chat_completions", "2026-07-21"): "v1",
    ("openai_chat_completions", "2026-11"): "v1",
}


def test_constants() -> None:
    assert PROTOCOLS == (
        "openai_responses",
        "anthropic_messages",
        "gemini_interactions",
        "gemini_generate_content",
        "openai_chat_completions",
    )
    assert REVISIONS == ("2026-07-21", "2026-11")
    assert CURRENT_REVISION == "2026-11"


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_has_both_revisions(protocol: str, revision: str) -> None:
    b = get_baseline(protocol, revision)
    provider, sdk = PROVIDER[protocol]
    assert (b.protocol, b.revision, b.provider, b.sdk_name) == (protocol, revision, provider, sdk)
    assert b.sdk_version == SDK_VERSIONS[revision][sdk]
    assert b.api_version == API_VERSION[protocol, revision]
    old = revision == "2026-07-21"
    assert b.review_date == (datetime.date(2026, 7, 21) if old else datetime.date(2026, 11, 20))
    assert b.api_family
    assert b.notes
    assert b.source_urls


@pytest.mark.parametrize("baseline", all_baselines(), ids=lambda b: f"{b.protocol}@{b.revision}")
def test_every_source_url_is_valid(baseline: Baseline) -> None:
    for url in baseline.source_urls:
        assert validate_source_url(url, provider=baseline.provider) == url


@pytest.mark.parametrize("baseline", all_baselines(), ids=lambda b: f"{b.protocol}@{b.revision}")
def test_sdk_urls_are_pinned_to_the_baseline_tag(baseline: Baseline) -> None:
    github = [u for u in baseline.source_urls if u.startswith("https://github.com/")]
    docs = [u for u in baseline.source_urls if not u.startswith("https://github.com/")]
    assert github
    assert docs
    for url in github:
        assert f"/blob/v{baseline.sdk_version}/" in url


def test_gemini_interactions_never_called_preview() -> None:
    for b in all_baselines():
        if b.protocol == "gemini_interactions":
            assert b.api_version == "v1"
            assert "preview" not in b.api_family.lower()


def test_default_revision_is_current() -> None:
    for protocol in PROTOCOLS:
        assert get_baseline(protocol) is get_baseline(protocol, CURRENT_REVISION)


def test_all_baselines_order_and_count() -> None:
    keys = [(b.protocol, b.revision) for b in all_baselines()]
    assert keys == [(p, r) for p in PROTOCOLS for r in REVISIONS]


def test_unknown_revision_is_contract_error() -> None:
    with pytest.raises(ContractError, match="revision"):
        get_baseline("openai_responses", "2025-01-01")


def test_unknown_protocol_is_contract_error() -> None:
    with pytest.raises(ContractError, match="protocol"):
        get_baseline("openai_completions")


@pytest.mark.parametrize(("protocol", "revision"), [(None, "2026-11"), ("openai_responses", 11)])
def test_non_str_args_are_usage_errors(protocol: object, revision: object) -> None:
    with pytest.raises(UsageError):
        get_baseline(protocol, revision)  # type: ignore[arg-type]


def test_baseline_is_frozen_and_slotted() -> None:
    b = get_baseline("openai_responses")
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.api_version = "v2"  # type: ignore[misc]
    assert not hasattr(b, "__dict__")


def test_baseline_constructor_validates() -> None:
    good = get_baseline("anthropic_messages")
    with pytest.raises(ProvenanceError):
        dataclasses.replace(good, source_urls=("https://evil.example/x",))
    with pytest.raises(ContractError, match="provider"):
        dataclasses.replace(good, provider="openai")
    with pytest.raises(ContractError, match="revision"):
        dataclasses.replace(good, revision="2099-01")
    with pytest.raises(ContractError, match="source_urls"):
        dataclasses.replace(good, source_urls=())


def test_anthropic_threads_are_a_stateful_mode_of_the_2026_11_baseline_only() -> None:
    current = get_baseline("anthropic_messages", "2026-11")
    assert current.stateful_continuation == ("thread:message-threads-2026-08-12",)
    assert get_baseline("anthropic_messages", "2026-07-21").stateful_continuation == ()
