"""Redaction keeps only allowlisted headers; the scanner refuses every planted secret."""

from __future__ import annotations

import pytest

from callgate import ContractError
from callgate.recording import (
    KEPT_REQUEST_HEADERS,
    SecretFoundError,
    check_no_secrets,
    keep_headers,
    redact_url,
    scan,
)

# Planted secrets, one per rule, in the shapes the providers publish (all fake).
PLANTED = {
    "anthropic-key": b"sk-ant-api03-" + b"Ab3_xY9-" * 6,
    "openai-key": b"sk-proj-" + b"Q1w2E3r4T5y6U7i8O9p0" * 2,
    "google-api-key": b"AIza" + b"SyD4-k9_Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jxy",
    "google-oauth-token": b"ya29.a0AfH6SMB" + b"x7Yq2Lp9Rz" * 3,
    "bearer-token": b"Bearer eyJhbGciOiJIUzI1NiJ9.abcDEF123456",
    "aws-access-key": b"AKIA" + b"IOSFODNN7EXAMPLE",
    "private-key": b"-----BEGIN RSA PRIVATE KEY-----",
}


def test_only_allowlisted_headers_are_kept_and_names_are_lowercased() -> None:
    headers = [
        ("Authorization", "Bearer sk-secret"),
        ("x-api-key", "sk-ant-secret"),
        ("x-goog-api-key", "AIza-secret"),
        ("api-key", "azure-secret"),
        ("Cookie", "session=1"),
        ("Proxy-Authorization", "Basic abc"),
        ("x-some-new-credential", "unknown-but-dropped"),
        ("Content-Type", "application/json"),
        ("anthropic-version", "2023-06-01"),
    ]
    kept = keep_headers(headers, KEPT_REQUEST_HEADERS)
    assert kept == [("content-type", "application/json"), ("anthropic-version", "2023-06-01")]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://h/v1beta/models/m:gen?key=AIzaSECRET&alt=sse",
            "https://h/v1beta/models/m:gen?alt=sse",
        ),
        ("https://h/p?%6Bey=AIzaSECRET&alt=sse", "https://h/p?alt=sse"),
        ("https://h/p?KEY=x&Api_Key=y&access_token=z", "https://h/p"),
        ("https://user:pass@h:8443/p?a=1", "https://h:8443/p?a=1"),
        ("http://[::1]:9/p?key=x", "http://[::1]:9/p"),
        ("https://h/p#frag", "https://h/p"),
    ],
)
def test_credential_query_parameters_and_userinfo_are_removed(url: str, expected: str) -> None:
    assert redact_url(url) == expected


@pytest.mark.parametrize("rule", sorted(PLANTED))
def test_the_scanner_finds_each_planted_key_pattern(rule: str) -> None:
    body = b'{"messages":[{"role":"user","content":"my key is ' + PLANTED[rule] + b'"}]}'
    hits = scan("request body", body)
    assert rule in {h.rule for h in hits}
    with pytest.raises(SecretFoundError) as caught:
        check_no_secrets({"request body": body, "response": b"data: {}\n\n"})
    assert isinstance(caught.value, ContractError)
    assert "request body at byte" in str(caught.value)
    assert PLANTED[rule].decode() not in str(caught.value)  # the secret is never repeated


def test_high_entropy_values_under_credential_names_are_refused() -> None:
    body = b'{"session_token": "q8Zr2Lx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0Ps"}'
    assert [h.rule for h in scan("metadata", body)] == ["high-entropy-credential"]


def test_opaque_protocol_fields_and_ordinary_traffic_are_not_secrets() -> None:
    clean = (
        b'{"type":"thinking","thinking":"Let me check.","signature":"EqQBCkgIARABGAIiQ'
        b'Lx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0PsQ8Zr2Lx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0Ps"}'
        b'{"thoughtSignature":"CiQBVKhc7Lx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0PsQ8Zr2"}'
        b'{"encrypted_content":"gAAAAABmLx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0PsQ8Zr2"}'
        b'{"usage":{"input_tokens":123456789012,"cache_read_input_tokens":0}}'
        b'{"id":"resp_0123456789abcdef0123456789abcdef","call_id":"call_abc123"}'
        b"data: the monkey is a keyboard player\n\n"
    )
    assert scan("response", clean) == []
    check_no_secrets({"response": clean})


def test_large_inputs_are_scanned_in_windows_without_missing_a_secret_on_the_seam() -> None:
    from callgate.recording import _scan

    secret = PLANTED["openai-key"]
    for at in (_scan._WINDOW - 10, _scan._WINDOW * 3 + 5):
        data = b"x" * at + secret + b" " + b"y" * (_scan._WINDOW * 4)
        hits = [h for h in scan("response bytes", data) if h.rule == "openai-key"]
        assert [h.offset for h in hits] == [at]
    header = b"z" * (_scan._WINDOW - 4) + b'"session_token": "q8Zr2Lx9Wm4Tn7Vb1Kc6Hy3Jd5Fg0Ps"'
    hits = scan("metadata", header + b"." * _scan._WINDOW * 2)
    assert [h.rule for h in hits] == ["high-entropy-credential"]
