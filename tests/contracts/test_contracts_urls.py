"""The source-URL allowlist: every attack has a named case saying what it proves."""

from __future__ import annotations

import pytest

from callgate import ContractError, ProvenanceError, UsageError
from callgate.contracts import validate_source_url

OA = "https://platform.openai.com"
GH_OA = "https://github.com/openai/openai-python"

# (id, provider, url, reason): each must be rejected without the local opt-in.
REJECTED = [
    ("http-scheme", "openai", "http://platform.openai.com/docs", "scheme"),
    ("ftp-scheme", "openai", "ftp://platform.openai.com/docs", "scheme"),
    ("scheme-relative", "openai", "//platform.openai.com/docs", "scheme"),
    ("javascript-scheme", "openai", "javascript:alert(1)//platform.openai.com", "scheme"),
    ("uppercase-scheme-refused", "openai", "HTTPS://platform.openai.com/docs", "scheme"),
    ("no-slashes-after-scheme", "openai", "https:platform.openai.com/docs", "scheme"),
    ("empty-authority", "openai", "https:///platform.openai.com/docs", "host"),
    ("userinfo-user", "openai", "https://user@platform.openai.com/", "userinfo"),
    ("userinfo-host-as-user", "openai", "https://platform.openai.com@evil.com/", "userinfo"),
    ("userinfo-user-password", "openai", "https://a:b@platform.openai.com/", "userinfo"),
    ("lookalike-suffix", "openai", "https://platform.openai.com.evil.com/", "host"),
    ("lookalike-prefix", "openai", "https://evilplatform.openai.com/", "host"),
    ("lookalike-subdomain", "openai", "https://x.platform.openai.com/", "host"),
    ("parent-domain-not-allowed", "openai", "https://openai.com/docs", "host"),
    ("trailing-dot-host", "openai", "https://platform.openai.com./docs", "trailing-dot"),
    ("punycode-lookalike", "openai", "https://xn--pltform-ova.openai.com/", "host"),
    ("raw-idn-host", "openai", "https://plаtform.openai.com/", "non-ascii"),
    ("explicit-default-port", "openai", "https://platform.openai.com:443/docs", "port"),
    ("explicit-other-port", "openai", "https://platform.openai.com:8443/docs", "port"),
    ("empty-port", "openai", "https://platform.openai.com:/docs", "port"),
    ("non-numeric-port", "openai", "https://platform.openai.com:https/docs", "port"),
    ("ipv4-literal", "openai", "https://104.18.0.1/docs", "ip-literal"),
    ("ipv4-integer-literal", "openai", "https://1745485825/docs", "ip-literal"),
    ("ipv6-literal", "openai", "https://[2606:4700::1]/docs", "ip-literal"),
    ("host-with-underscore", "openai", "https://platform_openai.com/", "host"),
    (
        "github-other-org",
        "openai",
        "https://github.com/evil/openai-python/blob/v1/x.py",
        "repository",
    ),
    (
        "github-other-repo",
        "openai",
        "https://github.com/openai/openai-node/blob/v1/x.ts",
        "repository",
    ),
    (
        "github-repo-prefix-trick",
        "openai",
        "https://github.com/openai/openai-python-evil/",
        "repository",
    ),
    ("github-repo-dot-git", "openai", "https://github.com/openai/openai-python.git", "repository"),
    ("github-owner-case", "openai", "https://github.com/OpenAI/openai-python/", "repository"),
    ("github-encoded-owner", "openai", "https://github.com/%6Fpenai/openai-python/", "repository"),
    ("github-root", "openai", "https://github.com/", "repository"),
    ("github-owner-only", "openai", "https://github.com/openai", "repository"),
    ("github-query", "openai", f"{GH_OA}/blob/v1/x.py?raw=true", "query"),
    ("github-non-line-fragment", "openai", f"{GH_OA}/blob/v1/x.py#readme", "fragment"),
    (
        "raw-githubusercontent",
        "openai",
        "https://raw.githubusercontent.com/openai/openai-python/x",
        "host",
    ),
    (
        "cross-provider-repo",
        "openai",
        "https://github.com/anthropics/anthropic-sdk-python/",
        "repository",
    ),
    ("cross-provider-docs", "openai", "https://platform.claude.com/docs/en/api", "host"),
    (
        "google-repo-under-anthropic",
        "anthropic",
        "https://github.com/googleapis/python-genai/",
        "repository",
    ),
    ("dotdot-segment", "openai", f"{GH_OA}/../../evil/repo/x.py", "dot-segment"),
    ("dotdot-escape-repo", "openai", f"{GH_OA}/blob/../../../evil/x", "dot-segment"),
    ("dot-segment", "openai", f"{GH_OA}/./blob/v1/x.py", "dot-segment"),
    ("dotdot-on-docs-host", "openai", f"{OA}/docs/../x", "dot-segment"),
    ("encoded-dotdot-lower", "openai", f"{GH_OA}/%2e%2e/x", "encoded-dot"),
    ("encoded-dotdot-mixed-case", "openai", f"{GH_OA}/%2E%2e/x", "encoded-dot"),
    ("encoded-dot-inside-name", "openai", f"{GH_OA}/blob/v1/x%2Epy", "encoded-dot"),
    ("encoded-slash", "openai", f"{GH_OA}/blob%2f..%2fevil", "encoded-separator"),
    ("encoded-slash-upper", "openai", f"{OA}/docs%2Fx", "encoded-separator"),
    ("encoded-backslash", "openai", f"{GH_OA}/blob%5c..%5cevil", "backslash"),
    ("raw-backslash", "openai", f"{GH_OA}\\..\\evil/x", "backslash"),
    ("backslash-in-authority", "openai", "https://platform.openai.com\\@evil.com/", "backslash"),
    ("empty-segment", "openai", f"{GH_OA}//blob/v1/x.py", "empty-segment"),
    ("empty-first-segment", "openai", "https://github.com//openai/openai-python/", "empty-segment"),
    ("nested-encoding", "openai", f"{GH_OA}/%252e%252e/x", "nested-encoding"),
    ("nested-encoding-in-query", "openai", f"{OA}/docs?x=%252f", "nested-encoding"),
    ("encoded-slash-in-fragment", "openai", f"{OA}/docs#a%2fb", "encoded-separator"),
    ("malformed-escape", "openai", f"{OA}/docs/%zz", "bad-percent-encoding"),
    ("truncated-escape", "openai", f"{OA}/docs/%2", "bad-percent-encoding"),
    ("encoded-nul", "openai", f"{OA}/docs/%00", "encoded-control"),
    ("encoded-newline", "openai", f"{OA}/docs/a%0Ab", "encoded-control"),
    ("space-in-path", "openai", f"{OA}/docs/a b", "control-or-whitespace"),
    ("tab-in-host", "openai", "https://platform.openai.com\t.evil.com/", "control-or-whitespace"),
    ("newline-in-path", "openai", f"{OA}/docs\n/x", "control-or-whitespace"),
    ("nul-byte", "openai", f"{OA}/docs\x00", "control-or-whitespace"),
    ("leading-space", "openai", f" {OA}/docs", "control-or-whitespace"),
    ("del-char", "openai", f"{OA}/docs\x7f", "control-or-whitespace"),
    ("bidi-override", "openai", f"{OA}/docs/\u202ex", "non-ascii"),
    ("angle-bracket-in-path", "openai", f"{OA}/docs/<x>", "character"),
    ("second-hash", "openai", f"{OA}/docs#a#b", "character"),
    ("too-long", "openai", f"{OA}/" + "a" * 3000, "too-long"),
    ("loopback-without-opt-in", "openai", "http://127.0.0.1:8080/x", "loopback-not-allowed"),
    ("localhost-without-opt-in", "openai", "https://localhost/x", "loopback-not-allowed"),
    ("ipv6-loopback-without-opt-in", "openai", "http://[::1]/x", "loopback-not-allowed"),
]


@pytest.mark.parametrize(
    ("provider", "url", "reason"), [r[1:] for r in REJECTED], ids=[r[0] for r in REJECTED]
)
def test_rejected(provider: str, url: str, reason: str) -> None:
    with pytest.raises(ProvenanceError) as info:
        validate_source_url(url, provider=provider)
    assert info.value.reason == reason
    assert info.value.url is not None
    assert isinstance(info.value, ContractError)


def test_reject_ids_unique_and_many() -> None:
    ids = [r[0] for r in REJECTED]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 30


ACCEPTED = [
    ("openai-platform-docs", "openai", f"{OA}/docs/api-reference/responses-streaming"),
    ("openai-developers-docs", "openai", "https://developers.openai.com/docs/guides/x"),
    ("openai-docs-fragment", "openai", f"{OA}/docs/guides/function-calling#streaming"),
    ("openai-docs-query", "openai", f"{OA}/docs/api-reference/responses?lang=python"),
    ("openai-docs-root", "openai", f"{OA}/"),
    ("openai-docs-no-path", "openai", OA),
    ("openai-docs-trailing-slash", "openai", f"{OA}/docs/"),
    ("openai-host-case-insensitive", "openai", "https://Platform.OpenAI.com/docs"),
    ("openai-sdk-file", "openai", f"{GH_OA}/blob/v3.57.0/src/openai/_streaming.py"),
    ("openai-sdk-line-anchor", "openai", f"{GH_OA}/blob/v3.57.0/src/openai/_streaming.py#L10"),
    ("openai-sdk-line-range", "openai", f"{GH_OA}/blob/v3.57.0/src/openai/_streaming.py#L10-L20"),
    ("openai-sdk-repo-root", "openai", GH_OA),
    ("openai-sdk-tree", "openai", f"{GH_OA}/tree/v3.57.0/src/openai/types/responses"),
    ("openai-docs-percent-encoded-safe", "openai", f"{OA}/docs/caf%C3%A9"),
    ("anthropic-docs", "anthropic", "https://docs.anthropic.com/en/api/versioning"),
    ("anthropic-docs-claude", "anthropic", "https://docs.claude.com/en/docs/build-with-claude"),
    ("anthropic-platform", "anthropic", "https://platform.claude.com/docs/en/api/versioning"),
    (
        "anthropic-sdk",
        "anthropic",
        "https://github.com/anthropics/anthropic-sdk-python/blob/v2.14.0/src/anthropic/_streaming.py",
    ),
    ("google-ai-dev", "google", "https://ai.google.dev/gemini-api/docs/api-versions"),
    ("google-cloud", "google", "https://cloud.google.com/vertex-ai/docs"),
    ("google-docs-cloud", "google", "https://docs.cloud.google.com/vertex-ai/docs"),
    (
        "google-sdk",
        "google",
        "https://github.com/googleapis/python-genai/blob/v3.6.1/google/genai/_api_client.py",
    ),
]


@pytest.mark.parametrize(
    ("provider", "url"), [r[1:] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED]
)
def test_accepted(provider: str, url: str) -> None:
    assert validate_source_url(url, provider=provider) is url


LOCAL_OK = [
    ("loopback-127-0-0-1", "http://127.0.0.1/fixture"),
    ("loopback-127-5-6-7", "http://127.5.6.7/fixture"),
    ("loopback-with-port", "http://127.0.0.1:8080/x/y"),
    ("loopback-https", "https://127.0.0.1:8443/x"),
    ("loopback-ipv6", "http://[::1]/x"),
    ("loopback-ipv6-port", "http://[::1]:9000/x"),
    ("localhost", "http://localhost/x"),
    ("localhost-port", "http://localhost:8000/v1/responses"),
    ("localhost-uppercase", "http://LOCALHOST:8000/x"),
]


@pytest.mark.parametrize("url", [r[1] for r in LOCAL_OK], ids=[r[0] for r in LOCAL_OK])
def test_loopback_accepted_with_opt_in(url: str) -> None:
    assert validate_source_url(url, provider="google", allow_local_source_urls=True) == url
    with pytest.raises(ProvenanceError) as info:
        validate_source_url(url, provider="google")
    assert info.value.reason == "loopback-not-allowed"


LOCAL_STILL_REJECTED = [
    ("private-10", "http://10.0.0.1/x", "scheme"),
    ("private-10-https", "https://10.0.0.1/x", "ip-literal"),
    ("private-192-168", "https://192.168.1.1:8080/x", "port"),
    ("unspecified-0000", "https://0.0.0.0/x", "ip-literal"),
    ("localhost-suffix", "https://localhost.evil.com/x", "host"),
    ("localhost-suffix-http", "http://localhost.evil.com/x", "scheme"),
    ("nip-io", "https://127.0.0.1.nip.io/x", "host"),
    ("loopback-short-form", "https://127.1/x", "ip-literal"),
    ("loopback-octal", "https://0177.0.0.1/x", "ip-literal"),
    ("loopback-hex", "https://0x7f.0.0.1/x", "ip-literal"),
    ("loopback-leading-zero", "https://127.000.000.001/x", "ip-literal"),
    ("loopback-integer", "https://2130706433/x", "ip-literal"),
    ("ipv6-mapped-loopback", "https://[::ffff:127.0.0.1]/x", "ip-literal"),
    ("ipv6-long-loopback", "https://[0:0:0:0:0:0:0:1]/x", "ip-literal"),
    ("loopback-userinfo", "http://user@127.0.0.1/x", "userinfo"),
    ("loopback-dot-segment", "http://127.0.0.1/a/../b", "dot-segment"),
    ("loopback-encoded-slash", "http://localhost/a%2fb", "encoded-separator"),
    ("loopback-bad-port", "http://127.0.0.1:99999/x", "port"),
    ("loopback-ftp", "ftp://127.0.0.1/x", "scheme"),
]


@pytest.mark.parametrize(
    ("url", "reason"),
    [r[1:] for r in LOCAL_STILL_REJECTED],
    ids=[r[0] for r in LOCAL_STILL_REJECTED],
)
def test_opt_in_gives_non_loopback_no_latitude(url: str, reason: str) -> None:
    with pytest.raises(ProvenanceError) as info:
        validate_source_url(url, provider="openai", allow_local_source_urls=True)
    assert info.value.reason == reason


def test_unknown_provider_is_usage_error() -> None:
    with pytest.raises(UsageError):
        validate_source_url(f"{OA}/docs", provider="azure")
    with pytest.raises(UsageError):
        validate_source_url(f"{OA}/docs", provider=None)  # type: ignore[arg-type]


def test_non_str_url_is_usage_error() -> None:
    with pytest.raises(UsageError):
        validate_source_url(b"https://platform.openai.com/", provider="openai")  # type: ignore[arg-type]


def test_non_bool_flag_is_usage_error() -> None:
    with pytest.raises(UsageError):
        validate_source_url(f"{OA}/", provider="openai", allow_local_source_urls=1)  # type: ignore[arg-type]


def test_error_message_names_reason_and_url() -> None:
    with pytest.raises(ProvenanceError, match=r"userinfo.*platform\.openai\.com@evil\.com"):
        validate_source_url("https://platform.openai.com@evil.com/", provider="openai")
