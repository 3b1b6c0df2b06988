"""The generateContent routes: paths, versions, auth, error shapes, and what scripts may say."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from callgate import ProviderError
from callgate import gemini_generate_content as ggc
from callgate.mock import MockServer, ScriptBuilder, ScriptError, call

KEY = {"x-goog-api-key": "k"}
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _server(**respond: Any) -> MockServer:
    return MockServer(ScriptBuilder().turn("gemini_generate_content", **respond).build())


def _post(server: MockServer, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=BODY, headers=KEY if headers is None else headers)


@pytest.mark.parametrize("version", ["v1", "v1beta"])
def test_both_methods_on_both_versions_with_the_model_from_the_path(version: str) -> None:
    with _server(text="hi", expect={"model": "gemini-x", "stream": False}) as server:
        answer = _post(server, f"/gemini/{version}/models/gemini-x:generateContent")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/json")
        assert ggc.parse_response(answer.content).text == "hi"
        assert answer.json()["modelVersion"] == "gemini-x"
    with _server(text="hi", expect={"model": "gemini-x", "stream": True}) as server:
        answer = _post(server, f"/gemini/{version}/models/gemini-x:streamGenerateContent?alt=sse")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert ggc.parse_stream(answer.content).text == "hi"
        (entry,) = server.journal.entries()
        assert entry.protocol == "gemini_generate_content"
        assert entry.body == BODY  # the journal keeps what was sent, not the engine's view


def test_the_key_may_come_as_a_query_parameter() -> None:
    with _server(text="hi") as server:
        answer = _post(server, "/gemini/v1/models/m:generateContent?key=k", headers={})
        assert answer.status_code == 200


def test_a_request_without_a_key_gets_googles_error_shape() -> None:
    with _server(text="hi") as server:
        answer = _post(server, "/gemini/v1/models/m:generateContent", headers={})
        assert answer.status_code == 401
        error = answer.json()["error"]
        assert (error["code"], error["status"]) == (401, "UNAUTHENTICATED")
        assert server.state.remaining() == {"default": 1}  # the turn is not consumed


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/gemini/v2/models/m:generateContent", 404),
        ("/gemini/v1/models/m:embedContent", 404),
        ("/gemini/v1/models/m", 404),
        ("/gemini/v1/models/m:streamGenerateContent", 400),  # the SSE framing only
    ],
)
def test_paths_the_mock_does_not_serve(path: str, status: int) -> None:
    with _server(text="hi") as server:
        answer = _post(server, path)
        assert answer.status_code == status
        assert answer.json()["error"]["code"] == status
        (entry,) = server.journal.entries()
        assert (entry.protocol, entry.outcome) == ("gemini_generate_content", "rejected")


def test_a_mismatch_names_the_problem_in_googles_shape() -> None:
    with _server(text="hi", expect={"model": "other"}) as server:
        answer = _post(server, "/gemini/v1/models/m:generateContent")
        assert answer.status_code == 400
        assert "model is 'm', expected 'other'" in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("respond", "words"),
    [
        ({"text": "ab", "chunk_plan": [1, 1, 1]}, "adding up to 1 wire part"),
        ({"text": "x", "chunk_plan": [-1, 2]}, "ints >= 0"),
        ({"text": "x", "chunk_plan": "all"}, "ints >= 0"),
        ({"calls": [{"name": ""}]}, "non-empty str 'name'"),
        ({"status": "DONE"}, "respond.status is one of"),
        # args travel whole, as an object: cut JSON would be sent as {} (silently lost)
        ({"calls": [{"name": "f", "raw": '{"city": "Par'}]}, "no JSON object cannot be carried"),
        ({"calls": [{"name": "f", "raw": "[1, 2]"}]}, "no JSON object cannot be carried"),
    ],
)
def test_scripts_the_wire_cannot_carry_are_refused_at_load(
    respond: dict[str, Any], words: str
) -> None:
    with pytest.raises(ScriptError, match=words):
        ScriptBuilder().turn("gemini_generate_content", **respond).build()


def test_raw_object_text_is_sent_as_written() -> None:
    script = ScriptBuilder().turn(
        "gemini_generate_content", calls=[{"name": "f", "raw": '{"b": 1, "a": 2}'}]
    )
    with MockServer(script.build()) as server:
        url = f"{server.gemini_base_url}/v1/models/m:generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}]}
        answer = httpx.post(url, json=body, headers={"x-goog-api-key": "k"}).json()
    (part,) = answer["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["args"] == {"b": 1, "a": 2}


def test_chunk_plan_belongs_to_generate_content_only() -> None:
    with pytest.raises(ScriptError, match="unknown key"):
        ScriptBuilder().turn("gemini_interactions", text="x", chunk_plan=[1]).build()


def test_parallel_calls_in_one_chunk_or_several() -> None:
    calls = [call("f", i=1), call("g", i=2), call("h", i=3)]
    for plan, chunks in ((None, 3), ([3], 1), ([1, 2], 2)):
        respond: dict[str, Any] = {"calls": calls}
        if plan is not None:
            respond["chunk_plan"] = plan
        with _server(**respond) as server:
            answer = _post(server, "/gemini/v1/models/m:streamGenerateContent?alt=sse")
            turn = ggc.parse_stream(answer.content)
            assert [c.name for c in turn.calls] == ["f", "g", "h"]
            assert turn.chunks == chunks


def test_every_finish_reason_but_stop_is_a_refusal_and_continuation_carries_a_token() -> None:
    for reason in ("MAX_TOKENS", "SAFETY", "MALFORMED_FUNCTION_CALL", "MISSING_THOUGHT_SIGNATURE"):
        with _server(text="x", calls=[call("f")], status=reason) as server:
            answer = _post(server, "/gemini/v1/models/m:streamGenerateContent?alt=sse")
            with pytest.raises(ProviderError) as err:
                ggc.parse_stream(answer.content)
            assert err.value.error_code == reason
    with _server(text="x", status="CONTINUATION") as server:
        turn = ggc.parse_response(_post(server, "/gemini/v1/models/m:generateContent").content)
        assert turn.needs_continuation
        assert turn.continuation_token
