"""The API's error object as a body is the ProviderError it reports, as its stream events are."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import ProviderError, SchemaError
from callgate.openai_responses import parse_response

from .check import OLD, fail
from .test_redteam import one_call
from .wire import response

# As the API sends it for an unknown model (the corpus holds a recorded one).
ERROR = {
    "message": "The requested model 'gpt-nope' does not exist.",
    "type": "invalid_request_error",
    "param": "model",
    "code": "model_not_found",
}


def _facts(err: ProviderError) -> tuple[Any, ...]:
    return (err.error_type, err.error_code, err.provider_message)


@pytest.mark.parametrize("form", ["mapping", "bytes", "str"])
@pytest.mark.parametrize("baseline", [OLD, "2026-11"])
def test_error_body_is_a_provider_error_with_its_type_code_and_message(
    form: str, baseline: str
) -> None:
    body: Any = {"error": dict(ERROR)}
    if form != "mapping":
        body = json.dumps(body) if form == "str" else json.dumps(body).encode()
    with pytest.raises(ProviderError) as info:
        parse_response(body, baseline=baseline)
    err = info.value
    assert _facts(err) == ("invalid_request_error", "model_not_found", ERROR["message"])
    assert "the API answered with an error object" in err.message
    assert err.provider == "openai"
    assert err.turn is not None
    assert err.turn.calls == ()
    assert err.turn.error is not None
    assert (err.turn.error.source, err.turn.error.param) == ("error_body", "model")


def test_error_body_and_nested_error_event_report_the_same_facts() -> None:
    with pytest.raises(ProviderError) as body:
        parse_response({"error": dict(ERROR)})
    s = one_call()
    s.ev("error", error=dict(ERROR))
    streamed = fail(s.events, ProviderError)
    assert isinstance(streamed, ProviderError)
    assert _facts(streamed) == _facts(body.value)


def test_flat_error_event_reports_no_error_type() -> None:
    """The flat event's ``type`` is the event's own name, not the provider's error type."""
    s = one_call()
    s.ev("error", code="model_not_found", message=ERROR["message"], param="model")
    err = fail(s.events, ProviderError)
    assert isinstance(err, ProviderError)
    assert _facts(err) == (None, "model_not_found", ERROR["message"])


def test_a_failed_response_with_an_error_is_still_read_as_a_response() -> None:
    """Only a body without ``status`` is the error object; a failed Response names its status."""
    failed = response("resp_1", "failed") | {"error": {"code": "server_error", "message": "x"}}
    with pytest.raises(ProviderError) as info:
        parse_response(failed)
    assert "status 'failed'" in info.value.message
    assert info.value.turn is not None
    assert info.value.turn.response_id == "resp_1"


@pytest.mark.parametrize("body", [{"error": "boom"}, {"error": None}, {}])
def test_a_body_that_is_neither_response_nor_error_object_stays_a_schema_error(
    body: dict[str, Any],
) -> None:
    with pytest.raises(SchemaError):
        parse_response(body)
