"""Bodies that are not a v1 Interaction: the API's error object is the ProviderError it
reports (as the stream's error event is); a pre-v1 body is refused as its stream is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import ProviderError, UnsupportedProviderState
from callgate.gemini_interactions import parse_interaction, parse_response, parse_stream

from .wire import created, sse

# The Interactions API's error object (docs: api-errors; both SDK generations type
# error.code as a string) and Google's front end's google.rpc.Status.
INTERACTIONS_ERROR = {"code": "invalid_request", "message": "bad input"}
RPC_STATUS = {"code": 400, "message": "bad input", "status": "INVALID_ARGUMENT"}


def _facts(err: ProviderError) -> tuple[Any, ...]:
    return (err.error_type, err.error_code, err.provider_message)


@pytest.mark.parametrize("source", ["create", "get"])
@pytest.mark.parametrize(
    ("error", "facts"),
    [
        (INTERACTIONS_ERROR, (None, "invalid_request", "bad input")),
        (RPC_STATUS, ("INVALID_ARGUMENT", "400", "bad input")),
    ],
)
def test_error_body_is_a_provider_error(
    error: dict[str, Any], facts: tuple[Any, ...], source: Any
) -> None:
    with pytest.raises(ProviderError) as info:
        parse_interaction(json.dumps({"error": error}), source=source)
    assert _facts(info.value) == facts
    assert "the API answered with an error object" in info.value.message
    assert info.value.provider == "google"


@pytest.mark.parametrize("error", [INTERACTIONS_ERROR, RPC_STATUS])
def test_error_body_and_error_event_report_the_same_facts(error: dict[str, Any]) -> None:
    with pytest.raises(ProviderError) as body:
        parse_response({"error": error})
    with pytest.raises(ProviderError) as streamed:
        parse_stream(sse([created(), {"event_type": "error", "error": error}]))
    assert _facts(streamed.value) == _facts(body.value)


def test_a_failed_interaction_is_still_read_as_an_interaction() -> None:
    failed = {"id": "i-1", "status": "failed", "steps": [], "error": INTERACTIONS_ERROR}
    with pytest.raises(ProviderError) as info:
        parse_response(failed)
    assert "status 'failed'" in info.value.message


PRE_V1 = {
    "id": "v1_abc",
    "object": "interaction",
    "status": "completed",
    "role": "model",
    "outputs": [{"type": "text", "text": "Because light attracts bugs!"}],
}


@pytest.mark.parametrize("source", ["create", "get"])
@pytest.mark.parametrize("baseline", ["2026-07-21", "2026-11"])
def test_pre_v1_body_is_refused_like_its_stream(source: Any, baseline: str) -> None:
    """Read as v1 it would be a completed turn with nothing in it: the answer silently lost."""
    with pytest.raises(UnsupportedProviderState) as info:
        parse_interaction(PRE_V1, source=source, baseline=baseline)
    assert "pre-v1 Interactions shape" in info.value.message
    assert info.value.turn is None or info.value.turn.calls == ()


def test_a_v1_body_with_an_extra_outputs_field_is_read_as_v1() -> None:
    """Only ``outputs`` *without* ``steps`` is the old shape; beside ``steps`` it is an
    unknown field, kept raw."""
    turn = parse_response(dict(PRE_V1, steps=[]))
    assert (turn.status, turn.steps, turn.calls) == ("completed", (), ())
