"""Stored state: OpenAI responses and Gemini interactions that later requests refer to.

Every rule is driven over a real socket with the official SDKs (strict response
validation on where the SDK has it), and the error bodies are read raw as well:

- OpenAI: stored unless ``store: false``; ``previous_response_id`` resolves against
  stored responses only; ``GET``/``DELETE /responses/{id}`` (plain and Azure routes);
  nothing is inherited through the previous id.
- Gemini: stored unless ``store: false``; ``previous_interaction_id`` resolves against
  stored interactions only (unknown 404, unstored 400, cancelled 400); ``GET`` returns the
  whole timeline, ``?stream=true&last_event_id=`` resumes the stream, ``cancel`` and
  ``DELETE`` work.
- Objects belong to the session (test id) that created them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from google import genai
from google.genai import _interactions_errors as genai_errors

from callgate import ContinuationError, ToolResult, TruncatedStreamError
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate.mock import TEST_ID_HEADER, MockServer, ScriptBuilder, call
from callgate.sse import SSEDecoder

MODEL = "state-model"
CONVERSATION = "x-callgate-conversation"
TOOLS_OAI = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
    {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
]
TOOLS_GEMINI = TOOLS_OAI
OAI_AUTH = {"authorization": "Bearer k"}
GEMINI_AUTH = {"x-goog-api-key": "k"}


# -- clients ----------------------------------------------------------------------------------


def _openai(server: MockServer, conversation: str = "default", **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.openai_base_url,
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        default_headers={CONVERSATION: conversation, **headers},
    )


def _azure(server: MockServer, conversation: str = "default") -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.azure_openai_base_url,
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        default_headers={CONVERSATION: conversation},
    )


def _gemini(server: MockServer, conversation: str = "default", version: str = "v1") -> Any:
    return genai.Client(
        api_key="k",
        http_options={
            "base_url": server.gemini_base_url,
            "api_version": version,
            "headers": {CONVERSATION: conversation},
            "retry_options": {"attempts": 1},
        },
    )


# -- OpenAI Responses -------------------------------------------------------------------------


def _openai_script(**validation: bool) -> Any:
    b = ScriptBuilder(seed=11, validation=validation)
    for name in ("stream", "json", "unstored", "chain"):
        b.turn("openai_responses", conversation=name, calls=[call("get_weather", city="Paris")])
        b.turn(
            "openai_responses",
            conversation=name,
            expect={"previous_id": "previous", "instructions": "Be brief.",
                    "function_results": [{"name": "get_weather", "output": "sunny"}]},
            text="Sunny.",
        )  # fmt: skip
    return b.build()


@pytest.fixture
def oai_server() -> Iterator[MockServer]:
    with MockServer(_openai_script()) as server:
        yield server


def _first(client: openai.OpenAI, *, stream: bool, store: bool = True) -> Any:
    request: dict[str, Any] = {"model": MODEL, "input": "weather?", "tools": TOOLS_OAI}
    if not store:
        request["store"] = False
    if not stream:
        return client.responses.create(**request)
    with client.responses.create(**request, stream=True) as events:
        last = list(events)[-1]
    assert last.type == "response.completed"
    return last.response


def _continue(
    client: openai.OpenAI, previous: Any, *, instructions: str | None = "Be brief."
) -> Any:
    turn = oai.parse_response(previous.to_dict())
    results = [ToolResult(c.call_id, "sunny") for c in turn.calls]
    request = oai.build_stateful_continuation(
        turn, results, previous_response_was_stored=True, store=True, model=MODEL,
        instructions=instructions, tools=TOOLS_OAI,
    )  # fmt: skip
    return client.responses.create(**request)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
def test_openai_get_returns_the_response_create_returned(
    oai_server: MockServer, stream: bool
) -> None:
    conversation = "stream" if stream else "json"
    with _openai(oai_server, conversation) as client:
        created = _first(client, stream=stream)
        retrieved = client.responses.retrieve(created.id)
        assert retrieved.to_dict() == created.to_dict()
        raw = httpx.get(f"{oai_server.openai_base_url}/responses/{created.id}", headers=OAI_AUTH)
        assert raw.status_code == 200
        assert raw.json() == created.to_dict()
        # The stored response is what a continuation resolves against.
        answer = _continue(client, retrieved)
        assert answer.output_text == "Sunny."
    gets = [e for e in oai_server.journal.entries() if e.method == "GET"]
    assert [(e.outcome, e.status, e.protocol) for e in gets] == [
        ("state", 200, "openai_responses")
    ] * 2


def test_openai_delete_makes_the_id_stop_resolving(oai_server: MockServer) -> None:
    with _openai(oai_server, "json") as client:
        created = _first(client, stream=False)
        raw = httpx.delete(f"{oai_server.openai_base_url}/responses/{created.id}", headers=OAI_AUTH)
        assert raw.status_code == 200
        assert raw.json() == {"id": created.id, "object": "response", "deleted": True}
        with pytest.raises(openai.NotFoundError) as missing:
            client.responses.retrieve(created.id)
        assert missing.value.body == {
            "message": f"No response found with id '{created.id}'.",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
        with pytest.raises(openai.NotFoundError):
            client.responses.delete(created.id)
        with pytest.raises(openai.BadRequestError) as refused:
            _continue(client, created)
    assert refused.value.code == "previous_response_not_found"
    # The refused continuation did not consume the turn.
    assert oai_server.state.remaining()["json"] == 1


def test_openai_sdk_delete_and_retrieve_unknown_id(oai_server: MockServer) -> None:
    with _openai(oai_server, "stream") as client:
        created = _first(client, stream=True)
        assert client.responses.delete(created.id) is None
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve("resp_never_made")


def test_openai_unknown_previous_response_is_the_providers_400(oai_server: MockServer) -> None:
    with _openai(oai_server, "json") as client:
        _first(client, stream=False)
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(
                model=MODEL, previous_response_id="resp_made_up", instructions="Be brief.",
                input=[{"type": "function_call_output", "call_id": "c", "output": "sunny"}],
            )  # fmt: skip
    assert refused.value.status_code == 400
    assert refused.value.body == {
        "message": "Previous response with id 'resp_made_up' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }
    assert oai_server.journal.last(outcome="rejected").status == 400


def test_openai_store_false_response_cannot_be_referenced_or_retrieved(
    oai_server: MockServer,
) -> None:
    with _openai(oai_server, "unstored") as client:
        created = _first(client, stream=True, store=False)
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(created.id)
        with pytest.raises(openai.BadRequestError) as refused:
            _continue(client, created)
    assert refused.value.code == "previous_response_not_found"
    assert refused.value.param == "previous_response_id"


def test_openai_azure_routes_serve_the_same_store(oai_server: MockServer) -> None:
    with _azure(oai_server, "json") as client:
        created = _first(client, stream=False)
        assert client.responses.retrieve(created.id).id == created.id
    url = f"{oai_server.azure_openai_base_url}/responses/{created.id}"
    assert httpx.get(url, headers={"api-key": "k"}).json()["id"] == created.id
    assert httpx.get(url).status_code == 401  # the Azure route's own auth
    with _openai(oai_server) as plain:  # same session, the other route
        assert plain.responses.retrieve(created.id).id == created.id
    assert httpx.delete(url, headers={"api-key": "k"}).json()["deleted"] is True
    assert httpx.get(url, headers={"api-key": "k"}).status_code == 404


def test_openai_nothing_is_inherited_through_previous_response_id(
    oai_server: MockServer,
) -> None:
    # The script expects the continuation to re-send its instructions; the mock does not
    # fill them in from the previous response, so omitting them fails the script's expect.
    with _openai(oai_server, "chain") as client:
        created = _first(client, stream=False)
        with pytest.raises(openai.BadRequestError) as mismatch:
            _continue(client, created, instructions=None)
        assert "instructions is None, expected 'Be brief.'" in mismatch.value.message
        assert _continue(client, created).output_text == "Sunny."


def test_openai_stored_responses_belong_to_their_test_id(oai_server: MockServer) -> None:
    with _openai(oai_server, "json", **{TEST_ID_HEADER: "a"}) as a:
        created = _first(a, stream=False)
        assert a.responses.retrieve(created.id).id == created.id
    with _openai(oai_server, "json", **{TEST_ID_HEADER: "b"}) as b:
        with pytest.raises(openai.NotFoundError):
            b.responses.retrieve(created.id)
        with pytest.raises(openai.BadRequestError) as refused:
            _continue(b, created)
    assert refused.value.code == "previous_response_not_found"


def test_openai_switched_off_previous_check_lets_the_request_reach_the_script() -> None:
    script = (
        ScriptBuilder(seed=1, validation={"openai_previous_response_found": False})
        .turn("openai_responses", expect={"previous_id": "resp_from_elsewhere"}, text="ok")
        .build()
    )
    with MockServer(script) as server, _openai(server) as client:
        answer = client.responses.create(
            model=MODEL, input="hi", previous_response_id="resp_from_elsewhere"
        )
    assert answer.output_text == "ok"


def test_openai_state_routes_need_credentials(oai_server: MockServer) -> None:
    url = f"{oai_server.openai_base_url}/responses/resp_x"
    response = httpx.get(url)
    assert response.status_code == 401
    assert oai_server.journal.last(outcome="rejected").method == "GET"


# -- Gemini Interactions ----------------------------------------------------------------------

GEMINI_CALLS = [call("get_weather", city="Paris"), call("get_time", tz="UTC")]
REASONING = {"summary": "Two lookups.", "signature": "c2lnbmF0dXJl"}


def _gemini_script(**validation: bool) -> Any:
    b = ScriptBuilder(seed=5, validation=validation)
    for name in ("chain", "json", "unstored", "resume", "cancel", "delete", "done"):
        b.turn("gemini_interactions", conversation=name, reasoning=REASONING,
               calls=GEMINI_CALLS, chunking={"fixed": 3},
               **({"disconnect_after": 6} if name == "resume" else {}))  # fmt: skip
        b.turn(
            "gemini_interactions",
            conversation=name,
            expect={"function_results": [{"name": "get_weather", "output": "sunny"},
                                         {"name": "get_time", "output": "12:00"}]},
            calls=[call("get_weather", city="Lyon")],
        )  # fmt: skip
        b.turn("gemini_interactions", conversation=name, text="Sunny in Paris and Lyon.")
    return b.build()


@pytest.fixture
def gemini_server() -> Iterator[MockServer]:
    with MockServer(_gemini_script()) as server:
        yield server


def _create(client: Any, request: dict[str, Any], *, stream: bool) -> gi.Turn:
    if not stream:
        interaction = client.interactions.create(**request)
        return gi.parse_interaction(interaction.to_dict(), source="create")
    parser = gi.Parser()
    with client.interactions.create(**request, stream=True) as events:
        for event in events:
            parser.feed_event(event.to_dict())
    return parser.finish()


def _results(turn: gi.Turn, answers: dict[str, str]) -> list[ToolResult]:
    return [ToolResult(c.call_id, answers[c.name]) for c in turn.calls]


ANSWERS = {"get_weather": "sunny", "get_time": "12:00"}
FIRST = {"model": MODEL, "input": "Weather and time?", "tools": TOOLS_GEMINI}


def _stateful(turn: gi.Turn, answers: dict[str, str]) -> dict[str, Any]:
    return gi.build_stateful_continuation(
        turn, _results(turn, answers), previous_interaction_was_stored=True, store=True,
        model=MODEL, tools=TOOLS_GEMINI,
    )  # fmt: skip


def test_gemini_get_returns_the_interaction_with_its_input_first(
    gemini_server: MockServer,
) -> None:
    with _gemini(gemini_server, "json") as client:
        first = _create(client, FIRST, stream=False)
        got = client.interactions.get(first.interaction_id)
    assert got.id == first.interaction_id
    assert got.status == "requires_action"
    kinds = [step.type for step in got.steps]
    assert kinds == ["user_input", "thought", "function_call", "function_call"]
    assert got.steps[0].to_dict() == {
        "type": "user_input",
        "content": [{"type": "text", "text": "Weather and time?"}],
    }
    raw = httpx.get(
        f"{gemini_server.gemini_base_url}/v1/interactions/{first.interaction_id}",
        headers=GEMINI_AUTH,
    ).json()
    # A GET snapshot is complete history: callgate's parser takes it as such.
    snapshot = gi.parse_interaction(raw, source="get")
    assert [c.call_id for c in snapshot.calls] == [c.call_id for c in first.calls]
    assert raw["steps"][1:] == list(first.steps)


def test_gemini_get_of_a_chained_interaction_holds_every_hop(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "chain") as client:
        first = _create(client, FIRST, stream=True)
        second = _create(client, _stateful(first, ANSWERS), stream=True)
        got = client.interactions.get(second.interaction_id, include_input=True)
    body = got.to_dict()
    assert body["previous_interaction_id"] == first.interaction_id
    assert body["input"] == _stateful(first, ANSWERS)["input"]
    kinds = [step["type"] for step in body["steps"]]
    assert kinds == [
        "user_input", "thought", "function_call", "function_call",  # hop 1
        "function_result", "function_result", "function_call",  # hop 2
    ]  # fmt: skip
    snapshot = gi.parse_interaction(body, source="get")
    assert [c.name for c in snapshot.calls] == ["get_weather"]  # only hop 2's call is pending
    assert [c.call_id for c in snapshot.calls] == [c.call_id for c in second.calls]
    # The GET snapshot continues statelessly without supplementing history again.
    replay = gi.build_stateless_continuation(
        snapshot, _results(snapshot, {"get_weather": "cloudy"}), snapshot_source="get",
        model=MODEL, tools=TOOLS_GEMINI,
    )  # fmt: skip
    with _gemini(gemini_server, "chain") as client:
        final = client.interactions.create(**replay)
    assert final.status == "completed"


def test_gemini_resume_by_last_event_id(gemini_server: MockServer) -> None:
    url = f"{gemini_server.gemini_base_url}/v1/interactions"
    headers = {**GEMINI_AUTH, CONVERSATION: "resume"}
    cut = httpx.post(url, json={**FIRST, "stream": True}, headers=headers)
    events = [json.loads(e.data) for e in SSEDecoder().feed(cut.content)]
    assert len(events) == 6  # the script cut the stream after 6 events
    parser = gi.Parser()
    parser.feed_bytes(cut.content)
    interaction_id = events[0]["interaction"]["id"]
    last_seen = events[-1]["event_id"]
    assert last_seen == f"{interaction_id}:5"

    resumed = httpx.get(
        f"{url}/{interaction_id}",
        params={"stream": "true", "last_event_id": last_seen},
        headers=GEMINI_AUTH,
    )
    assert resumed.headers["content-type"].startswith("text/event-stream")
    rest = [json.loads(e.data) for e in SSEDecoder().feed(resumed.content)]
    assert rest[0]["event_id"] == f"{interaction_id}:6"
    assert rest[-1]["event_type"] == "interaction.completed"
    parser.feed_bytes(resumed.content)
    turn = parser.finish()  # the prefix plus the resumed events make the whole turn
    assert [c.name for c in turn.calls] == ["get_weather", "get_time"]
    assert turn.status == "requires_action"

    # The official SDK resumes the same way; an overlapping resume is de-duplicated by id.
    sdk_parser = gi.Parser()
    for event in events:
        sdk_parser.feed_event(event)
    with _gemini(gemini_server, "resume") as client:
        stream = client.interactions.get(
            interaction_id, stream=True, last_event_id=f"{interaction_id}:3"
        )
        for event in stream:
            sdk_parser.feed_event(event.to_dict())
    assert sdk_parser.finish().digest == turn.digest


def test_gemini_resume_from_the_start_and_unknown_event_id(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "json") as client:
        first = _create(client, FIRST, stream=False)
        # A non-streamed interaction can be streamed back whole.
        parser = gi.Parser()
        for event in client.interactions.get(first.interaction_id, stream=True):
            parser.feed_event(event.to_dict())
        assert parser.finish().calls == first.calls
        with pytest.raises(genai_errors.BadRequestError) as refused:
            client.interactions.get(first.interaction_id, stream=True, last_event_id="nope:1")
    assert refused.value.body["error"]["code"] == "invalid_request"
    assert "nope:1" in refused.value.body["error"]["message"]


def test_gemini_truncated_stream_without_resume_is_refused_by_the_gate(
    gemini_server: MockServer,
) -> None:
    cut = httpx.post(
        f"{gemini_server.gemini_base_url}/v1/interactions",
        json={**FIRST, "stream": True},
        headers={**GEMINI_AUTH, CONVERSATION: "resume"},
    )
    with pytest.raises(TruncatedStreamError):
        gi.parse_stream(cut.content)


def test_gemini_unknown_previous_interaction_is_404(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "json") as client:
        first = _create(client, FIRST, stream=False)
        request = _stateful(first, ANSWERS)
        request["previous_interaction_id"] = "0" * 32
        with pytest.raises(genai_errors.NotFoundError) as missing:
            client.interactions.create(**request)
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.get("0" * 32)
    assert missing.value.body == {
        "error": {"code": "not_found", "message": f"Interaction {'0' * 32!r} was not found."}
    }


def test_gemini_store_false_interaction_cannot_be_continued_or_read(
    gemini_server: MockServer,
) -> None:
    headers = {**GEMINI_AUTH, CONVERSATION: "unstored"}
    url = f"{gemini_server.gemini_base_url}/v1/interactions"
    sent = httpx.post(url, json={**FIRST, "store": False, "stream": True}, headers=headers)
    first = gi.parse_stream(sent.content)
    assert first.interaction_id is None  # like the API: "id": "" when unstored
    with pytest.raises(ContinuationError, match="build_stateless_continuation"):
        _stateful(first, ANSWERS)
    # Naming it anyway (its id is only in the mock's request-id header) is the API's 400.
    hidden = sent.headers["request-id"]
    results = [
        {"type": "function_result", "call_id": c.call_id, "name": c.name, "result": ANSWERS[c.name]}
        for c in first.calls
    ]
    request = {"model": MODEL, "tools": TOOLS_GEMINI, "store": True, "input": results}
    with _gemini(gemini_server, "unstored") as client:
        with pytest.raises(genai_errors.BadRequestError) as refused:
            client.interactions.create(**request, previous_interaction_id=hidden)
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.get(hidden)
    assert refused.value.body["error"]["code"] == "invalid_request"
    assert "store=false" in refused.value.body["error"]["message"]
    assert gemini_server.state.remaining()["unstored"] == 2  # the refusal consumed nothing


def test_gemini_cancel_of_an_interaction_waiting_for_results(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "cancel") as client:
        first = _create(client, FIRST, stream=True)
        cancelled = client.interactions.cancel(first.interaction_id)
        assert cancelled.status == "cancelled"
        assert client.interactions.get(first.interaction_id).status == "cancelled"
        # Cancelling twice, or continuing the abandoned tool turn, is refused.
        with pytest.raises(genai_errors.BadRequestError) as again:
            client.interactions.cancel(first.interaction_id)
        with pytest.raises(genai_errors.BadRequestError) as continued:
            client.interactions.create(**_stateful(first, ANSWERS))
    assert again.value.body["error"]["code"] == "failed_precondition"
    assert continued.value.body["error"]["code"] == "failed_precondition"
    assert "cancelled" in continued.value.body["error"]["message"]


def test_gemini_cancel_of_a_finished_interaction_is_refused(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "done") as client:
        first = _create(client, FIRST, stream=False)
        second = _create(client, _stateful(first, ANSWERS), stream=False)
        third = _create(client, _stateful(second, {"get_weather": "cloudy"}), stream=False)
        assert third.status == "completed"
        with pytest.raises(genai_errors.BadRequestError) as refused:
            client.interactions.cancel(third.interaction_id)
        assert client.interactions.get(third.interaction_id).status == "completed"
    error = refused.value.body["error"]
    assert error["code"] == "failed_precondition"
    assert "is completed" in error["message"]


def test_gemini_delete_makes_the_id_stop_resolving(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "delete") as client:
        first = _create(client, FIRST, stream=False)
        second = _create(client, _stateful(first, ANSWERS), stream=False)
        raw = httpx.delete(
            f"{gemini_server.gemini_base_url}/v1/interactions/{second.interaction_id}",
            headers=GEMINI_AUTH,
        )
        assert (raw.status_code, raw.json()) == (200, {})
        assert client.interactions.delete(first.interaction_id) is None
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.get(first.interaction_id)
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.cancel(first.interaction_id)
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.delete(first.interaction_id)
        with pytest.raises(genai_errors.NotFoundError):
            client.interactions.create(**_stateful(first, ANSWERS))


def test_gemini_state_routes_on_v1beta_and_their_guards(gemini_server: MockServer) -> None:
    with _gemini(gemini_server, "json", version="v1beta") as client:
        first = _create(client, FIRST, stream=False)
        assert client.interactions.get(first.interaction_id).id == first.interaction_id
    base = f"{gemini_server.gemini_base_url}"
    url = f"{base}/v1/interactions/{first.interaction_id}"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, params={"key": "k"}).status_code == 200
    assert httpx.get(f"{base}/v2/interactions/x", headers=GEMINI_AUTH).status_code == 404
    other = httpx.get(url, headers={**GEMINI_AUTH, TEST_ID_HEADER: "someone-else"})
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "not_found"


def test_gemini_switched_off_previous_checks_reach_the_script() -> None:
    script = (
        ScriptBuilder(
            seed=1,
            validation={
                "gemini_previous_interaction_found": False,
                "gemini_previous_interaction_stored": False,
            },
        )
        .turn("gemini_interactions", expect={"previous_id": "from-elsewhere"}, text="ok")
        .build()
    )
    with MockServer(script) as server, _gemini(server) as client:
        answer = client.interactions.create(
            model=MODEL, input="hi", previous_interaction_id="from-elsewhere"
        )
    assert answer.status == "completed"


def test_openai_streaming_retrieval_is_refused(oai_server: MockServer) -> None:
    with _openai(oai_server, "json") as client:
        created = _first(client, stream=False)
    url = f"{oai_server.openai_base_url}/responses/{created.id}"
    refused = httpx.get(url, params={"stream": "true"}, headers=OAI_AUTH)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "stream"
    assert httpx.get(url, params={"stream": "false"}, headers=OAI_AUTH).status_code == 200
