"""Scripts and fault specs that used to crash the mock (a 500) are refused when loaded or
armed, or served the way the provider really sends them; replay checks resolve
``item_reference`` items and compare against what a faulted stream really carried; a
Gemini result nested in ``user_input`` content is refused for what it is."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

from callgate import JSONError
from callgate import gemini_interactions as gi
from callgate.mock import MockServer, ScriptBuilder, ScriptError, call, create_app, load_script
from callgate.sse import SSEDecoder

from .conftest import AUTH, PATHS, valid_body

OPENAI = "openai_responses"
ANTHROPIC = "anthropic_messages"
GEMINI = "gemini_interactions"


def _client(script: Any) -> TestClient:
    return TestClient(
        create_app(script), base_url="http://127.0.0.1", raise_server_exceptions=False
    )


def _post(client: TestClient, protocol: str, body: dict[str, Any], **headers: str) -> Any:
    json_body = valid_body(protocol, body)
    return client.post(PATHS[protocol], json=json_body, headers={**AUTH[protocol], **headers})


def _one_turn(protocol: str, expect: dict[str, Any] | None = None, **respond: Any) -> Any:
    return ScriptBuilder(seed=1).turn(protocol, expect=expect or {}, **respond).build()


def _refused(location: str, protocol: str, **respond: Any) -> str:
    with pytest.raises(ScriptError) as error:
        create_app(_one_turn(protocol, **respond))
    assert error.value.location == f"/conversations/default/0/respond{location}"
    return str(error.value)


# -- C3: what used to be a 500 ---------------------------------------------------------------


def test_retry_after_beyond_a_day_is_a_script_error_and_a_day_is_served() -> None:
    fault = {"type": "http_error", "status": 429, "retry_after": 10**12}
    message = _refused("/fault/retry_after", ANTHROPIC, fault=fault)
    assert "retry_after must be at most 86400" in message
    # At the bound, Anthropic's reset date is still a date: the 429 is served.
    client = _client(_one_turn(ANTHROPIC, text="x", fault={**fault, "retry_after": 86_400}))
    answer = _post(client, ANTHROPIC, {"model": "m", "max_tokens": 5, "messages": []})
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "86400"
    # Armed at run time: the same bound, as a 400 from the control endpoint.
    armed = client.post("/_callgate/faults", json={"fault": fault})
    assert armed.status_code == 400
    assert "/fault/retry_after" in armed.json()["error"]["message"]


def test_pacing_beyond_an_hour_is_a_script_error_also_at_run_time(tmp_path: Any) -> None:
    for key in ("first_byte_ms", "event_delay_ms"):
        message = _refused(f"/pacing/{key}", OPENAI, text="x", pacing={key: 10**400})
        assert f"{key} must be at most 3600000" in message
    path = tmp_path / "paced.json"
    turn = {"protocol": OPENAI, "respond": {"text": "x", "pacing": {"first_byte_ms": 10**400}}}
    path.write_text(json.dumps({"turns": [turn]}))
    with pytest.raises(ScriptError) as error:
        create_app(load_script(path))
    assert str(error.value).startswith(f"{path}:/turns/0/respond/pacing/first_byte_ms: ")
    client = _client(_one_turn(OPENAI, text="x"))
    armed = client.post("/_callgate/faults", json={"pacing": {"event_delay_ms": 10**400}})
    assert armed.status_code == 400


@pytest.mark.parametrize("status", ["queued", "in_progress", "cancelled", "requires_action"])
def test_openai_status_the_mock_cannot_render_is_a_script_error(status: str) -> None:
    message = _refused("/status", OPENAI, text="x", status=status)
    assert "one of completed, incomplete, failed" in message


@pytest.mark.parametrize("status", ["completed", "incomplete", "failed"])
@pytest.mark.parametrize("stream", [True, False])
def test_openai_renderable_statuses_are_served_both_ways(status: str, stream: bool) -> None:
    client = _client(_one_turn(OPENAI, text="x", status=status))
    assert _post(client, OPENAI, {"model": "m", "stream": stream}).status_code == 200


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_raw_arguments_that_are_no_object_make_the_turn_streamed_only(protocol: str) -> None:
    calls = [{"name": "f", "raw": '{"city": "Par'}]
    with pytest.raises(ScriptError) as error:
        create_app(_one_turn(protocol, {"stream": False}, calls=calls))
    assert error.value.location == "/conversations/default/0/respond/calls/0/raw"
    assert "can only be streamed" in str(error.value)
    body = {"model": "m"}
    # Without expect.stream the turn expects a stream: a JSON request is a mismatch (400).
    cut = _client(_one_turn(protocol, calls=calls, chunking={"fixed": 4}))
    refused = _post(cut, protocol, body)
    assert refused.status_code == 400
    assert "stream is False, expected True" in refused.text
    answer = _post(cut, protocol, {**body, "stream": True})
    assert answer.status_code == 200
    key = "partial_json" if protocol == ANTHROPIC else "arguments"
    deltas = [json.loads(e.data).get("delta", {}) for e in SSEDecoder().feed(answer.content)]
    sent = "".join(d.get(key, "") for d in deltas if isinstance(d, dict))
    assert sent == '{"city": "Par'
    # Raw text of an object renders in both modes.
    whole = _client(_one_turn(protocol, calls=[{"name": "f", "raw": '{"city": "Paris"}'}]))
    assert _post(whole, protocol, body).status_code == 200


def test_gemini_cut_raw_arguments_stream_and_the_snapshot_still_serves() -> None:
    calls = [{"name": "f", "raw": '{"city": "Par'}]
    client = _client(_one_turn(GEMINI, {"stream": True}, calls=calls))
    answer = _post(client, GEMINI, {"model": "m", "input": "hi", "stream": True})
    assert answer.status_code == 200
    with pytest.raises(JSONError):  # the gate sees the cut arguments for what they are
        gi.parse_stream(answer.content)
    interaction_id = answer.headers["request-id"]
    stored = client.get(f"/gemini/v1/interactions/{interaction_id}", headers=AUTH[GEMINI])
    assert stored.status_code == 200
    call_step = next(s for s in stored.json()["steps"] if s["type"] == "function_call")
    assert call_step["arguments"] == {}  # the stored object carries no text that is no object
    resumed = client.get(
        f"/gemini/v1/interactions/{interaction_id}?stream=true", headers=AUTH[GEMINI]
    )
    assert resumed.status_code == 200
    cancelled = client.post(
        f"/gemini/v1/interactions/{interaction_id}/cancel", headers=AUTH[GEMINI]
    )
    assert cancelled.status_code == 200


def test_duplicate_of_an_empty_stream_is_a_script_error_and_never_fits_at_run_time() -> None:
    fault = {"type": "duplicate", "after": 1}
    message = _refused("/fault", OPENAI, text="x", disconnect_after=0, fault=fault)
    assert "disconnect_after: 0 sends no event" in message
    client = _client(_one_turn(OPENAI, text="x", disconnect_after=0))
    assert client.post("/_callgate/faults", json={"fault": fault}).status_code == 200
    answer = _post(client, OPENAI, {"model": "m", "stream": True})
    assert (answer.status_code, answer.content) == (200, b"")
    assert len(client.get("/_callgate/faults").json()["faults"]) == 1  # still waiting


def test_strings_that_cannot_be_sent_as_utf8_are_script_errors() -> None:
    assert "lone surrogate" in _refused("/text", OPENAI, text="a\ud800b")
    assert "lone surrogate" in _refused("/calls/0/name", OPENAI, calls=[{"name": "\udfff"}])
    fault = {"type": "error_event", "after": 1, "message": "\ud800"}
    assert "lone surrogate" in _refused("/fault/message", OPENAI, text="x", fault=fault)
    # A malformed frame's data may carry escaped bytes (U+DC80..U+DCFF), not other surrogates.
    create_app(
        _one_turn(OPENAI, text="x", fault={"type": "malformed", "after": 1, "data": "\udcff"})
    )
    bad = {"type": "malformed", "after": 1, "data": "\ud800"}
    assert "lone surrogate" in _refused("/fault/data", OPENAI, text="x", fault=bad)


def test_ints_the_renderer_cannot_format_are_script_errors() -> None:
    assert "[0, " in _refused("/usage/input_tokens", OPENAI, text="x", usage={"input_tokens": -1})
    assert "unknown key" in _refused("/usage", OPENAI, text="x", usage={"total_tokens": 1})
    huge = {"name": "f", "arguments": {"n": 10**5000}}
    assert "not a JSON value" in _refused("/calls/0/arguments", OPENAI, calls=[huge])
    assert "[0, " in _refused("/disconnect_after", OPENAI, text="x", disconnect_after=-1)
    with pytest.raises(ScriptError) as error:
        ScriptBuilder(seed=10**5000).turn(OPENAI, text="x").build()
    assert error.value.location == "/seed"
    chunking = {"random": {"seed": 10**5000, "max": 3}}
    assert "chunking is" in _refused("/chunking", OPENAI, text="x", chunking=chunking)


# -- C4: OpenAI item_reference ---------------------------------------------------------------

_REASONING = {"summary": "Weather first.", "signature": "c2lnbmF0dXJl"}


def _oai_tool_script(**respond: Any) -> Any:
    b = ScriptBuilder(seed=5)
    for name in ("a", "b"):
        calls = [call("get_weather", city="Paris")]
        b.turn(OPENAI, conversation=name, reasoning=_REASONING, calls=calls,
               chunking={"fixed": 4}, **respond)  # fmt: skip
        b.turn(OPENAI, conversation=name, text="Sunny.")
    return b.build()


def _oai_first(client: TestClient, conversation: str, store: bool = True) -> dict[str, Any]:
    answer = _post(
        client, OPENAI, {"model": "m", "input": "Weather?", "stream": True, "store": store},
        **{"x-callgate-conversation": conversation},
    )  # fmt: skip
    assert answer.status_code == 200
    terminal = json.loads(SSEDecoder().feed(answer.content)[-1].data)
    return dict(terminal["response"])


def _oai_next(client: TestClient, conversation: str, items: list[Any], call_id: str) -> Any:
    user = {"role": "user", "content": "Weather?"}
    output = {"type": "function_call_output", "call_id": call_id, "output": "sunny"}
    body = {"model": "m", "input": [user, *items, output], "store": True}
    return _post(client, OPENAI, body, **{"x-callgate-conversation": conversation})


def test_openai_item_references_resolve_against_the_stored_response() -> None:
    client = _client(_oai_tool_script())
    response = _oai_first(client, "a")
    reasoning, fc = response["output"]
    refs = [{"type": "item_reference", "id": reasoning["id"]}, {"id": fc["id"]}]  # type optional
    answer = _oai_next(client, "a", refs, fc["call_id"])
    assert answer.status_code == 200, answer.json()


def test_openai_item_reference_rules_are_the_replay_rules() -> None:
    client = _client(_oai_tool_script())
    response = _oai_first(client, "a")
    reasoning, fc = response["output"]
    alone = _oai_next(client, "a", [{"type": "item_reference", "id": reasoning["id"]}], "c")
    assert alone.status_code == 400
    assert "without its required following item" in alone.json()["error"]["message"]
    # A referenced call is a replayed call: it needs its output.
    ref_call = [{"type": "item_reference", "id": reasoning["id"]},
                {"type": "item_reference", "id": fc["id"]}]  # fmt: skip
    missing = _post(
        client, OPENAI, {"model": "m", "input": ref_call},
        **{"x-callgate-conversation": "a"},
    )  # fmt: skip
    assert missing.status_code == 400
    assert (
        missing.json()["error"]["message"]
        == f"No tool output found for function call {fc['call_id']}."
    )
    assert _oai_next(client, "a", ref_call, fc["call_id"]).status_code == 200


def test_openai_unknown_item_reference_is_a_404_naming_the_item() -> None:
    client = _client(_oai_tool_script())
    unstored = _oai_first(client, "a", store=False)
    reasoning, fc = unstored["output"]
    for item_id in ("rs_neveremitted", reasoning["id"]):  # unknown; of an unstored response
        refs = [{"type": "item_reference", "id": item_id}, fc]
        answer = _oai_next(client, "a", refs, fc["call_id"])
        assert answer.status_code == 404
        assert answer.json() == {
            "error": {
                "message": f"Item with id '{item_id}' not found. Items are not persisted when "
                "`store` is set to false. Try again with `store` set to true, or remove this "
                "item from your input.",
                "type": "invalid_request_error",
                "param": "input",
                "code": None,
            }
        }
    # A deleted response's items stop resolving too.
    stored = _oai_first(client, "b")
    assert client.delete(f"/openai/v1/responses/{stored['id']}", headers=AUTH[OPENAI]).is_success
    refs = [{"type": "item_reference", "id": stored["output"][0]["id"]}, stored["output"][1]]
    assert _oai_next(client, "b", refs, stored["output"][1]["call_id"]).status_code == 404


def test_openai_item_reference_check_switched_off_reaches_the_script() -> None:
    script = ScriptBuilder(seed=5, validation={"openai_item_reference_found": False})
    script.turn(OPENAI, text="ok")
    client = _client(script.build())
    refs = [{"type": "item_reference", "id": "rs_unknown"}]
    answer = _post(client, OPENAI, {"model": "m", "input": refs})
    assert answer.status_code == 200


# -- C5: Gemini results nested in user_input content -----------------------------------------


def _gemini_tool_script(**validation: bool) -> Any:
    return (
        ScriptBuilder(seed=2, validation=validation)
        .turn(GEMINI, calls=[call("get_weather", city="Paris")])
        .turn(GEMINI, expect={"function_results": [{"name": "get_weather"}]}, text="Sunny.")
        .build()
    )


def _nested_request(client: TestClient) -> dict[str, Any]:
    first = _post(client, GEMINI, {"model": "m", "input": "Weather?"}).json()
    step = first["steps"][0]
    result = {"type": "function_result", "call_id": step["id"], "name": "get_weather",
              "result": "sunny"}  # fmt: skip
    nested = {"type": "user_input", "content": [{"type": "text", "text": "here"}, result]}
    return {"model": "m", "previous_interaction_id": first["id"], "input": [nested]}


def test_gemini_result_nested_in_user_input_is_refused_as_not_admitted() -> None:
    # The request check refuses it first, as an unknown content type; this is the
    # continuation check's own message.
    client = _client(_gemini_tool_script(gemini_request_valid=False))
    answer = _post(client, GEMINI, _nested_request(client))
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith(
        "input[0].content[1]: a function_result is not user_input content; in Interactions v1 "
        "user_input content is text, image, audio, document or video."
    )


def test_gemini_nested_result_with_checks_off_is_named_by_the_other_messages() -> None:
    client = _client(_gemini_tool_script(gemini_request_valid=False, gemini_result_is_step=False))
    message = _post(client, GEMINI, _nested_request(client)).json()["error"]["message"]
    assert "has no function_result in input" in message
    assert "The function_result at input[0].content[1] is user_input content" in message
    client = _client(
        _gemini_tool_script(
            gemini_request_valid=False, gemini_result_is_step=False, gemini_call_has_result=False
        )
    )
    message = _post(client, GEMINI, _nested_request(client)).json()["error"]["message"]
    assert "no function result for call of 'get_weather'" in message
    assert "1 function_result(s) came inside user_input content" in message


# -- C6: replay after a truncation -----------------------------------------------------------


def test_openai_replay_after_truncation_is_compared_with_the_cut_arguments() -> None:
    client = _client(_oai_tool_script(fault={"type": "truncate", "keep": 5}))
    received = _oai_first(client, "a")
    assert received["status"] == "incomplete"
    reasoning, fc = received["output"]
    assert fc["arguments"] == '{"cit'
    answer = _oai_next(client, "a", [reasoning, fc], fc["call_id"])
    assert answer.status_code == 200, answer.json()
    # The complete scripted arguments were never sent: replaying them is an edit.
    client = _client(_oai_tool_script(fault={"type": "truncate", "keep": 5}))
    received = _oai_first(client, "a")
    reasoning, fc = received["output"]
    whole = {**fc, "arguments": '{"city":"Paris"}'}
    answer = _oai_next(client, "a", [reasoning, whole], fc["call_id"])
    assert answer.status_code == 400
    assert "its 'arguments' was changed" in answer.json()["error"]["message"]


def test_openai_replay_after_a_runtime_truncation_is_compared_with_the_cut_arguments() -> None:
    client = _client(_oai_tool_script())
    armed = client.post("/_callgate/faults", json={"fault": {"type": "truncate", "keep": 3}})
    assert armed.status_code == 200
    reasoning, fc = _oai_first(client, "a")["output"]
    assert fc["arguments"] == '{"c'
    assert _oai_next(client, "a", [reasoning, fc], fc["call_id"]).status_code == 200


def test_openai_sdk_replays_reasoning_by_item_reference() -> None:
    with MockServer(_oai_tool_script()) as server:
        client = openai.OpenAI(
            base_url=server.openai_base_url, api_key="k", max_retries=0,
            default_headers={"x-callgate-conversation": "a"},
        )  # fmt: skip
        first = client.responses.create(model="m", input="Weather?", store=True)
        reasoning, fc = first.output
        follow = client.responses.create(
            model="m",
            store=True,
            input=[
                {"role": "user", "content": "Weather?"},
                {"type": "item_reference", "id": reasoning.id},
                fc.to_dict(mode="json"),
                {"type": "function_call_output", "call_id": fc.call_id, "output": "sunny"},
            ],
        )
        assert follow.output_text == "Sunny."
        with pytest.raises(openai.NotFoundError) as missing:
            client.responses.create(
                model="m", input=[{"type": "item_reference", "id": "rs_gone"}], store=True
            )
        assert missing.value.param == "input"
        client.close()
