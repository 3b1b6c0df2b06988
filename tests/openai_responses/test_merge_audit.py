"""Audit (issue 10, A1): no event's extra fields reach the state that decides release.

The Anthropic parser once copied a message_delta's top-level keys onto the message, so a
planted ``stop_reason`` released a truncated turn. Each test below is one place of the
OpenAI parser where an event could carry such a field; each pins that the field is
ignored (or refused) and that the gate still decides from the terminal alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from callgate import ProviderError, SchemaError, SequenceError, UnsupportedProviderState
from callgate.openai_responses import parse_response

from .check import fail, run
from .wire import Stream, fc_item, response

ARGS = '{"city":"Paris"}'


def call(**extra: Any) -> dict[str, Any]:
    return fc_item("fc_0", "call_0", "get_weather", ARGS, **extra)


def incomplete(s: Stream, **top: Any) -> list[dict[str, Any]]:
    body = response(s.rid, "incomplete", s.output())
    body["incomplete_details"] = {"reason": "max_output_tokens"}
    s.ev("response.incomplete", response=body, **top)
    return s.events


def test_oai_audit_terminal_top_level_status_cannot_complete_an_incomplete_response() -> None:
    s = Stream().created().call(0, call())
    events = incomplete(s, status="completed", output=[call()], incomplete_details=None)
    fail(events, ProviderError)


def test_oai_audit_lifecycle_update_status_does_not_survive_the_terminal() -> None:
    s = Stream().created()
    s.ev("response.in_progress", response=response(s.rid, "completed", [call()]))
    s.call(0, call())
    fail(incomplete(s), ProviderError)


def test_oai_audit_completed_event_with_a_non_completed_response_status_fails() -> None:
    s = Stream().created().call(0, call())
    s.ev(
        "response.completed", response=response(s.rid, "incomplete", s.output()), status="completed"
    )
    fail(s.events, SchemaError)


def test_oai_audit_arguments_done_extra_item_field_does_not_replace_arguments() -> None:
    s = Stream().created().call(0, call())
    done = next(e for e in s.events if e["type"] == "response.function_call_arguments.done")
    done["item"] = fc_item("fc_0", "call_0", "get_weather", '{"city":"Evil"}')
    done["call_id"] = "call_other"
    turn = run(s.completed().events)
    assert [(c.call_id, c.arguments) for c in turn.calls] == [("call_0", {"city": "Paris"})]


def test_oai_audit_arguments_delta_extra_arguments_field_is_ignored() -> None:
    s = Stream().created().call(0, call())
    delta = next(e for e in s.events if e["type"] == "response.function_call_arguments.delta")
    delta["arguments"] = '{"city":"Evil"}'
    delta["name"] = "delete_everything"
    turn = run(s.completed().events)
    assert [(c.name, c.arguments) for c in turn.calls] == [("get_weather", {"city": "Paris"})]


def test_oai_audit_item_done_extra_top_level_fields_do_not_change_the_item() -> None:
    s = Stream().created().call(0, call())
    done = next(e for e in s.events if e["type"] == "response.output_item.done")
    done["status"] = "completed"
    done["arguments"] = '{"city":"Evil"}'
    turn = run(s.completed().events)
    assert turn.calls[0].arguments == {"city": "Paris"}
    assert turn.calls[0].item == call()


def test_oai_audit_terminal_item_may_not_add_fields_beyond_its_id() -> None:
    s = Stream().created().call(0, call())
    fail(s.completed([call(caller={"type": "program", "caller_id": "p"})]).events, SequenceError)


def test_oai_audit_terminal_item_may_not_flip_a_streamed_status() -> None:
    s = Stream().created().call(0, call(status="incomplete"))
    fail(s.completed([call()]).events, SequenceError)


def test_oai_audit_error_event_extra_fields_do_not_undo_the_error() -> None:
    s = Stream().created().call(0, call())
    s.ev("error", message="boom", code="server_error", status="completed", response=None)
    fail(s.events, ProviderError)


def test_oai_audit_body_top_level_extras_do_not_decide_release() -> None:
    body = response("resp_body", "incomplete", [call()])
    body["incomplete_details"] = {"reason": "max_output_tokens"}
    body["final_status"] = "completed"
    with pytest.raises(ProviderError) as info:
        parse_response(body)
    assert info.value.turn is not None
    assert info.value.turn.calls == ()


def test_oai_audit_body_item_caller_is_checked_like_a_streamed_one() -> None:
    body = response("resp_body", "completed", [call(caller={"type": "program", "caller_id": "p"})])
    with pytest.raises(UnsupportedProviderState, match="non-direct caller"):
        parse_response(copy.deepcopy(body))
