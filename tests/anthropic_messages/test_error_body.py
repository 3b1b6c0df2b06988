"""The API's error object as a body is the ProviderError it reports, as the stream's event is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import ProviderError, SchemaError
from callgate.anthropic_messages import parse_response, parse_stream

from .wire import message_start, sse, tool_block

# As the API sends it (the corpus holds recorded 401 and 429 bodies).
BODY = {
    "type": "error",
    "error": {"type": "rate_limit_error", "message": "This request would exceed the limit."},
    "request_id": "req_011CYK5mje9HkutJtmfPzzNC",
}


def _facts(err: ProviderError) -> tuple[Any, ...]:
    return (err.error_type, err.error_code, err.provider_message)


@pytest.mark.parametrize("form", ["mapping", "bytes", "str"])
@pytest.mark.parametrize("baseline", ["2026-07-21", "2026-11"])
def test_error_body_is_a_provider_error_with_its_type_and_message(form: str, baseline: str) -> None:
    body: Any = json.loads(json.dumps(BODY))
    if form != "mapping":
        body = json.dumps(body) if form == "str" else json.dumps(body).encode()
    with pytest.raises(ProviderError) as info:
        parse_response(body, baseline=baseline)
    err = info.value
    assert _facts(err) == ("rate_limit_error", None, "This request would exceed the limit.")
    assert "the API answered with an error object" in err.message
    assert err.provider == "anthropic"


def test_error_body_and_error_event_report_the_same_facts() -> None:
    with pytest.raises(ProviderError) as body:
        parse_response(BODY)
    event = {"type": "error", "error": BODY["error"]}
    with pytest.raises(ProviderError) as streamed:
        parse_stream(sse(message_start(), *tool_block(0, "c1", "f", ['{"a":1}']), event))
    assert _facts(streamed.value) == _facts(body.value)


def test_error_body_without_details_is_still_a_provider_error() -> None:
    with pytest.raises(ProviderError) as info:
        parse_response({"type": "error"})
    assert _facts(info.value) == (None, None, None)


def test_a_message_body_without_content_stays_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        parse_response({"type": "message", "id": "m", "role": "assistant"})
